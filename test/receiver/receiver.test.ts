/**
 * The receiver kit's handler, fed webhooks signed by the service's own code (lambda/core/webhook.ts):
 * what it verifies, drops, unpacks and reports, through each of its three doors.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueuedEvent } from '../../lambda/core/event.js';
import { signBatch, signWebhook, type WebhookRequest } from '../../lambda/core/webhook.js';
import { createMemoryStore, createReceiver, Verdict, type OrderReport, type ReceivedEvent, type ReceiverStore } from '../../receiver/src/index.js';

const secret = 'whsec_' + Buffer.alloc(32, 3).toString('base64');
const otherSecret = 'whsec_' + Buffer.alloc(32, 4).toString('base64');

function queued(eventId: string, key = 'sub_1', redrive?: QueuedEvent['redrive']): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: key, type: 'order.paid', payload_json: JSON.stringify({ eventId }) },
    ordering_key: key,
    message_group_id: 'g',
    accepted_at: '2026-12-04T12:00:00.000Z',
    ...(redrive === undefined ? {} : { redrive }),
  };
}

const single = (eventId: string, sequence: number, previousSequence: number, options: { readonly at?: Date; readonly signer?: string; readonly redrive?: QueuedEvent['redrive'] } = {}): WebhookRequest =>
  signWebhook({ queued: queued(eventId, 'sub_1', options.redrive), sequence, previousSequence, secrets: [options.signer ?? secret], attemptedAt: options.at ?? new Date() });

/** A receiver that notes every event and report, and answers as the application does. */
function receiving(options: { readonly fail?: (event: ReceivedEvent) => boolean; readonly store?: ReceiverStore; readonly secret?: string | [string, ...string[]] } = {}) {
  const taken: { event: ReceivedEvent; report: OrderReport }[] = [];
  const duplicates: string[] = [];
  const receiver = createReceiver({
    secret: options.secret ?? secret,
    ...(options.store === undefined ? {} : { store: options.store }),
    onEvent: (event, report) => {
      if (options.fail?.(event) === true) throw new Error('the database is down, with secrets in this message');
      taken.push({ event, report });
    },
    onDuplicate: (webhookId) => void duplicates.push(webhookId),
  });
  const send = (request: WebhookRequest) => receiver.handle({ headers: request.headers, body: request.body });
  const verdicts = () => taken.map(({ event, report }) => `${event.id}#${event.sequence} ${report.verdict}${report.missing.length > 0 ? ` missing ${report.missing.join(',')}` : ''}`);
  return { receiver, send, taken, duplicates, verdicts };
}

describe('createReceiver', () => {
  it('takes a key’s events in order, with what the body says of each, and answers 204', async () => {
    const { send, taken, verdicts } = receiving();
    expect(await send(single('e1', 1, 0))).toEqual({ status: 204, body: '' });
    expect(await send(single('e2', 2, 1))).toEqual({ status: 204, body: '' });
    expect(verdicts()).toEqual(['e1#1 in_order', 'e2#2 in_order']);
    expect(taken[1]?.event).toEqual({
      id: 'e2',
      type: 'order.paid',
      timestamp: '2026-12-04T12:00:00.000Z',
      data: { eventId: 'e2' },
      orderingKey: 'sub_1',
      sequence: 2,
      previousSequence: 1,
      isRedelivery: false,
      webhookId: 'e2',
    });
  });

  it('reports a gap with its dead-lettered numbers, and their redelivery after a redrive', async () => {
    const { send, verdicts } = receiving();
    await send(single('e1', 1, 0));
    await send(single('e3', 3, 1));
    await send(single('e2', 2, 3, { redrive: { sequence: 2, redriven_at: '2026-12-04T13:00:00.000Z' } }));
    expect(verdicts()).toEqual(['e1#1 in_order', 'e3#3 gap missing 2', 'e2#2 redelivery']);
  });

  it('drops a request whose webhook-id it processed, without telling the application again', async () => {
    const { send, verdicts, duplicates } = receiving();
    const request = single('e1', 1, 0);
    await send(request);
    expect(await send(single('e1', 1, 0))).toEqual({ status: 204, body: '' });
    expect(verdicts()).toEqual(['e1#1 in_order']);
    expect(duplicates).toEqual(['e1']);
  });

  it('unpacks a batch into its events, in order, each judged on its own', async () => {
    const { send, verdicts, taken } = receiving();
    const items = [
      { queued: queued('e1'), sequence: 1, previousSequence: 0 },
      { queued: queued('e3'), sequence: 3, previousSequence: 1 },
      { queued: queued('e4'), sequence: 4, previousSequence: 3 },
    ];
    const request = signBatch({ items: [items[0]!, ...items.slice(1)], secrets: [secret], attemptedAt: new Date() });
    expect((await send(request)).status).toBe(204);
    expect(verdicts()).toEqual(['e1#1 in_order', 'e3#3 gap missing 2', 'e4#4 in_order']);
    expect(taken.every(({ event }) => event.webhookId === request.headers['webhook-id'])).toBe(true);
  });

  it('reports an event sent again under another webhook-id (a failed batch’s, one at a time) as a duplicate', async () => {
    const { send, verdicts } = receiving();
    const items = [{ queued: queued('e1'), sequence: 1, previousSequence: 0 }, { queued: queued('e2'), sequence: 2, previousSequence: 1 }] as const;
    await send(signBatch({ items: [items[0], items[1]], secrets: [secret], attemptedAt: new Date() }));
    await send(signBatch({ items: [items[1]], secrets: [secret], attemptedAt: new Date() }));
    expect(verdicts()).toEqual(['e1#1 in_order', 'e2#2 in_order', 'e2#2 duplicate']);
  });

  it.each([
    { case: 'another secret', request: () => single('e1', 1, 0, { signer: otherSecret }), status: 401, error: /no matching signature/i },
    { case: 'a timestamp 10 minutes old', request: () => single('e1', 1, 0, { at: new Date(Date.now() - 600_000) }), status: 401, error: /too old/i },
    { case: 'a timestamp 10 minutes ahead', request: () => single('e1', 1, 0, { at: new Date(Date.now() + 600_000) }), status: 401, error: /too new/i },
    { case: 'no signature', request: () => ({ ...single('e1', 1, 0), headers: { 'webhook-id': 'e1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) } }), status: 401, error: /missing required headers/i },
  ])('refuses $case with $status, taking nothing', async ({ request, status, error }) => {
    const { send, taken } = receiving();
    const answer = await send(request());
    expect(answer.status).toBe(status);
    expect((JSON.parse(answer.body) as { error: string }).error).toMatch(error);
    expect(taken).toEqual([]);
  });

  it('refuses a signed body that is no webhook of ordered-webhooks with 400, naming the field', async () => {
    const { receiver } = receiving();
    const at = new Date();
    const body = JSON.stringify({ type: 'x', timestamp: at.toISOString(), data: {} });
    const { Webhook } = await import('standardwebhooks');
    const headers = { 'webhook-id': 'm1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('m1', at, body) };
    const answer = await receiver.handle({ headers, body });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatch(/sequence/);
  });

  it('keeps two subscriptions apart in one store by their namespaces, webhook ids included (a fan-out’s deliveries share the event’s id)', async () => {
    const store = createMemoryStore();
    const taken: string[] = [];
    const receiverOf = (namespace: string) => createReceiver({ secret, store, namespace, onEvent: (event, report) => void taken.push(`${namespace}${event.id}#${event.sequence} ${report.verdict}`) });
    const request = single('e1', 1, 0);
    expect((await receiverOf('sub_a:').handle({ headers: request.headers, body: request.body })).status).toBe(204);
    expect((await receiverOf('sub_b:').handle({ headers: request.headers, body: request.body })).status).toBe(204);
    expect(taken).toEqual(['sub_a:e1#1 in_order', 'sub_b:e1#1 in_order']);
  });

  it('verifies with any of its secrets, while the receiver changes its own', async () => {
    const { send, verdicts } = receiving({ secret: [otherSecret, secret] });
    expect((await send(single('e1', 1, 0))).status).toBe(204);
    expect(verdicts()).toEqual(['e1#1 in_order']);
  });

  it('answers 500 when the application throws, keeps nothing of that event, and takes it when it comes again', async () => {
    let isDown = true;
    const { send, verdicts } = receiving({ fail: (event) => isDown && event.id === 'e2' });
    const items = [{ queued: queued('e1'), sequence: 1, previousSequence: 0 }, { queued: queued('e2'), sequence: 2, previousSequence: 1 }] as const;
    const request = signBatch({ items: [items[0], items[1]], secrets: [secret], attemptedAt: new Date() });
    const answer = await send(request);
    expect(answer.status).toBe(500);
    // The application's error text never goes back over the wire.
    expect(answer.body).not.toMatch(/secrets|database/);
    isDown = false;
    expect((await send(request)).status).toBe(204);
    expect(verdicts()).toEqual(['e1#1 in_order', 'e1#1 duplicate', 'e2#2 in_order']);
  });

  it('keeps both of two requests of one key that race: the second write judges again on the first’s', async () => {
    const inner = createMemoryStore();
    let pending: (() => void) | undefined;
    // The first request's read is held until the second one has written.
    const store: ReceiverStore = {
      ...inner,
      readKey: async (key) => {
        const read = await inner.readKey(key);
        if (pending === undefined && read === undefined) await new Promise<void>((resolve) => (pending = resolve));
        return read;
      },
    };
    const { send } = receiving({ store });
    const slow = send(single('e2', 2, 0));
    await new Promise((resolve) => setImmediate(resolve));
    const fast = send(single('e1', 1, 0));
    await fast;
    pending?.();
    await slow;
    expect(inner.keys().get('sub_1')).toEqual({ last: 2, missing: [] });
  });

  describe('doors', () => {
    let close: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await close?.();
      close = undefined;
    });

    it('serves Node’s http on 127.0.0.1, reading the raw body itself', async () => {
      const { receiver, verdicts } = receiving();
      const server = createServer((request, response) => void receiver.node(request, response));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      close = () => new Promise((resolve) => server.close(() => resolve()));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      const request = single('e1', 1, 0);
      const answer = await fetch(url, { method: 'POST', headers: request.headers, body: request.body });
      expect(answer.status).toBe(204);
      const refused = await fetch(url, { method: 'POST', headers: { ...request.headers, 'webhook-signature': 'v1,AAAA' }, body: request.body });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toBe('application/json');
      expect(verdicts()).toEqual(['e1#1 in_order']);
    });

    it('takes a body an Express-style framework read raw (express.raw())', async () => {
      const { receiver, verdicts } = receiving();
      const request = single('e1', 1, 0);
      let status = 0;
      const response = { writeHead: (code: number) => ((status = code), response), end: () => response };
      await receiver.node({ headers: request.headers, body: Buffer.from(request.body) } as never, response as never);
      expect(status).toBe(204);
      expect(verdicts()).toEqual(['e1#1 in_order']);
    });

    it('answers a Web Request with a Response', async () => {
      const { receiver, verdicts } = receiving();
      const request = single('e1', 1, 0);
      const answer = await receiver.fetch(new Request('https://receiver.example/hooks', { method: 'POST', headers: request.headers, body: request.body }));
      expect(answer.status).toBe(204);
      expect(verdicts()).toEqual(['e1#1 in_order']);
    });
  });

  it('keeps webhook ids for its retention only, and at most its maximum', async () => {
    let now = 0;
    const store = createMemoryStore({ retentionMs: 1_000, maxWebhookIds: 2, now: () => now });
    await store.remember('a');
    await store.remember('b');
    await store.remember('c');
    expect([await store.hasSeen('a'), await store.hasSeen('b'), await store.hasSeen('c')]).toEqual([false, true, true]);
    now = 2_000;
    expect(await store.hasSeen('c')).toBe(false);
  });

  it('reports the verdicts by their names', () => {
    expect(Object.values(Verdict).sort()).toEqual(['duplicate', 'gap', 'in_order', 'redelivery']);
  });
});

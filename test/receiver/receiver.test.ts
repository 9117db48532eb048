/**
 * The receiver kit's handler, fed webhooks signed by the service's own code (lambda/core/webhook.ts):
 * what it verifies, drops, unpacks and reports, through each of its three doors.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { readQueuedEvent, type QueuedEvent } from '../../lambda/core/event.js';
import { fanOutEventId } from '../../lambda/core/fan-out-id.js';
import { Ordering, partitionKey } from '../../lambda/core/routing.js';
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
    const second = single('e2', 2, 1);
    expect(taken[1]?.event).toEqual({
      id: 'e2',
      type: 'order.paid',
      timestamp: '2026-12-04T12:00:00.000Z',
      data: { eventId: 'e2' },
      rawBody: second.body,
      subscriptionId: 'sub_1',
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

  it('tells the application why an event was not taken, by onError or else on the console, without its payload', async () => {
    const failing = { secret, onEvent: () => Promise.reject(new Error('the database is down')) };
    const seen: string[] = [];
    const told = createReceiver({ ...failing, onError: (error, event) => void seen.push(`${event.id} ${error instanceof Error ? error.message : String(error)}`) });
    const request = single('e1', 1, 0);
    expect((await told.handle({ headers: request.headers, body: request.body })).status).toBe(500);
    expect(seen).toEqual(['e1 the database is down']);

    const logged: unknown[][] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      expect((await createReceiver(failing).handle({ headers: request.headers, body: request.body })).status).toBe(500);
      // A throwing onError changes nothing of the answer.
      const throwing = createReceiver({ ...failing, onError: () => { throw new Error('the logger is down'); } });
      expect((await throwing.handle({ headers: request.headers, body: request.body })).status).toBe(500);
    } finally {
      console.error = original;
    }
    expect(logged).toHaveLength(1);
    expect(String(logged[0]?.[0])).toMatch(/event e1 \(subscription sub_1, key sub_1, #1\) was not taken/);
    expect((logged[0]?.[1] as Error).message).toBe('the database is down');
    // The payload (`{"eventId": …}`) is the application's: never in the log.
    expect(String(logged[0]?.[0])).not.toContain('eventId');
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
    expect(inner.keys().get('["sub_1","sub_1"]')).toEqual({ last: 2, missing: [] });
  });

  describe('two subscriptions at one endpoint (a fan-out’s copies share the event’s id)', () => {
    /** The copy of fan-out `eventId` for one subscription ordered by resource: every copy has the same webhook-id, ordering key and number. */
    const fanOutCopy = (subscriptionId: string, eventId: string): QueuedEvent => {
      const event = { event_id: fanOutEventId(eventId, subscriptionId), tenant_id: 't', subscription_id: subscriptionId, resource_id: 'order_7', type: 'order.paid', payload_json: JSON.stringify({ eventId }) };
      return { version: 1, event, ordering_key: partitionKey(event, Ordering.resource), message_group_id: 'g', accepted_at: '2026-12-04T12:00:00.000Z', fan_out: { event_id: eventId } };
    };
    /** A kit with no setting but its secret, saving what the README's example saves. */
    const saving = () => {
      const saved: string[] = [];
      const dropped: string[] = [];
      const receiver = createReceiver({
        secret,
        onEvent: (event, report) => {
          if (report.verdict !== 'duplicate') saved.push(`${event.subscriptionId}/${event.orderingKey}/${event.id}#${event.sequence} ${report.verdict}`);
        },
        onDuplicate: (webhookId) => void dropped.push(webhookId),
      });
      const send = (request: WebhookRequest) => receiver.handle({ headers: request.headers, body: request.body });
      return { saved, dropped, send };
    };

    it('takes both subscriptions’ copies of an event in order, without a namespace', async () => {
      const { saved, dropped, send } = saving();
      for (const subscriptionId of ['sub_alice', 'sub_bob']) {
        const request = signWebhook({ queued: fanOutCopy(subscriptionId, 'evt_f1'), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
        expect(request.headers['webhook-id']).toBe('evt_f1');
        expect((await send(request)).status).toBe(204);
      }
      expect(saved).toEqual(['sub_alice/order_7/evt_f1#1 in_order', 'sub_bob/order_7/evt_f1#1 in_order']);
      expect(dropped).toEqual([]);
    });

    it('takes both subscriptions’ batches of the same events (the same batch webhook-id), each item in order', async () => {
      const { saved, send } = saving();
      for (const subscriptionId of ['sub_alice', 'sub_bob']) {
        const items = [{ queued: fanOutCopy(subscriptionId, 'evt_f1'), sequence: 1, previousSequence: 0 }, { queued: fanOutCopy(subscriptionId, 'evt_f2'), sequence: 2, previousSequence: 1 }] as const;
        expect((await send(signBatch({ items: [items[0], items[1]], secrets: [secret], attemptedAt: new Date() }))).status).toBe(204);
      }
      expect(saved).toEqual(['sub_alice/order_7/evt_f1#1 in_order', 'sub_alice/order_7/evt_f2#2 in_order', 'sub_bob/order_7/evt_f1#1 in_order', 'sub_bob/order_7/evt_f2#2 in_order']);
    });

    it('still drops one subscription’s copy sent again, and reports its number taken again as a duplicate', async () => {
      const { saved, dropped, send } = saving();
      const alice = (sequence: number, attemptedAt = new Date()) => signWebhook({ queued: fanOutCopy('sub_alice', 'evt_f1'), sequence, previousSequence: sequence - 1, secrets: [secret], attemptedAt });
      await send(alice(1));
      await send(signWebhook({ queued: fanOutCopy('sub_bob', 'evt_f1'), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() }));
      // The same webhook-id of the same subscription: a retry whose answer was lost.
      expect((await send(alice(1, new Date(Date.now() - 1_000)))).status).toBe(204);
      expect(dropped).toEqual(['evt_f1']);
      expect(saved).toEqual(['sub_alice/order_7/evt_f1#1 in_order', 'sub_bob/order_7/evt_f1#1 in_order']);
      // Its number again under another webhook-id (a batch's, one at a time): judged by the subscription's own key.
      const { taken, send: sendTo } = receiving();
      await sendTo(alice(1));
      await sendTo(signBatch({ items: [{ queued: fanOutCopy('sub_alice', 'evt_f1'), sequence: 1, previousSequence: 0 }], secrets: [secret], attemptedAt: new Date() }));
      expect(taken.map(({ report }) => report.verdict)).toEqual(['in_order', 'duplicate']);
    });

    it('judges a body without subscription_id (a stack before it signed one) as before: by webhook-id and ordering key, under the namespace', async () => {
      const store = createMemoryStore();
      const taken: string[] = [];
      const receiver = createReceiver({ secret, store, namespace: 'n:', onEvent: (event, report) => void taken.push(`${String(event.subscriptionId)} ${event.id}#${event.sequence} ${report.verdict}`) });
      const legacy = (webhookId: string, sequence: number) => {
        const at = new Date();
        const body = JSON.stringify({ type: 'order.paid', timestamp: at.toISOString(), data: {}, sequence, ordering_key: 'order_7', previous_sequence: sequence - 1 });
        return { headers: { 'webhook-id': webhookId, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(webhookId, at, body) }, body };
      };
      await receiver.handle(legacy('e1', 1));
      await receiver.handle(legacy('e1', 1));
      await receiver.handle(legacy('e2', 1));
      expect(taken).toEqual(['undefined e1#1 in_order', 'undefined e2#1 duplicate']);
      expect([...store.keys().keys()]).toEqual(['n:order_7']);
      expect([await store.hasSeen('n:e1'), await store.hasSeen('n:e2')]).toEqual([true, true]);
    });
  });

  describe('the data as signed', () => {
    const payloadJson = '{"__proto__":{"polluted":true},"keep":true,"nested":{"__proto__":{"deep":1},"n":12345678901234567890}}';
    const withPayload = (eventId: string): QueuedEvent => {
      const read = readQueuedEvent(`{"version":1,"event":{"event_id":"${eventId}","tenant_id":"t","subscription_id":"sub_1","type":"x","payload":${payloadJson}},"ordering_key":"sub_1","message_group_id":"g","accepted_at":"2026-12-04T12:00:00.000Z"}`);
      if (!('queued' in read)) throw new Error(read.reason);
      return read.queued;
    };
    const expectIntact = (data: Readonly<Record<string, unknown>>): void => {
      expect(Object.keys(data)).toEqual(['__proto__', 'keep', 'nested']);
      expect(Object.hasOwn(data, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toEqual({ polluted: true });
      const nested = data['nested'] as object;
      expect(Object.hasOwn(nested, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(nested)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(nested, '__proto__')?.value).toEqual({ deep: 1 });
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    };

    it('hands the application an own "__proto__" key, nested too, with the prototypes unchanged, and the signed body text', async () => {
      const { send, taken } = receiving();
      const request = signWebhook({ queued: withPayload('e1'), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
      expect((await send(request)).status).toBe(204);
      expect(taken).toHaveLength(1);
      expectIntact(taken[0]!.event.data);
      expect(taken[0]!.event.rawBody).toBe(request.body);
    });

    it('does the same for each item of a batch, whose text is the whole batch body', async () => {
      const { send, taken } = receiving();
      const items = [{ queued: withPayload('e1'), sequence: 1, previousSequence: 0 }, { queued: withPayload('e2'), sequence: 2, previousSequence: 1 }] as const;
      const request = signBatch({ items: [items[0], items[1]], secrets: [secret], attemptedAt: new Date() });
      expect((await send(request)).status).toBe(204);
      expect(taken.map(({ event }) => event.id)).toEqual(['e1', 'e2']);
      for (const { event } of taken) {
        expectIntact(event.data);
        expect(event.rawBody).toBe(request.body);
      }
    });
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

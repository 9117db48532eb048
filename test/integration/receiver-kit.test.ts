/**
 * The receiver kit (`receiver/`, docs/receiver-kit.md) behind a real HTTP receiver on 127.0.0.1, fed by the
 * local stack: what it reports of a gap from a dead letter and its redelivery after a redrive, of a
 * delivery sent again after a crash, of a batch with a dead-lettered event inside, and of a
 * fan-out's copies to two subscriptions sharing one endpoint.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from '../../receiver/src/index.js';
import { call, makeEvent, postEvents, uniquePrefix } from './support/api.js';
import { failDeliveryRecordOnce } from './support/faults.js';
import { redriveUntilDone } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('the receiver kit on the local stack', { timeout: 60_000 }, () => {
  const crash = failDeliveryRecordOnce();
  /** Event ids the receiver refuses (500) in any request, before the kit sees it. */
  const refused = new Set<string>();
  /** One kit per subscription (each has its own secret and keys), by its path. */
  const kits = new Map<string, Receiver>();
  /** What each kit reported, per subscription, in order: `<id>#<sequence> <verdict>[ missing …]`, and `dropped <webhook-id>`. */
  const reports = new Map<string, string[]>();
  const note = (subscriptionId: string, line: string): void => void reports.set(subscriptionId, [...(reports.get(subscriptionId) ?? []), line]);

  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '1' },
    {
      respond: async (webhook) => {
        const subscriptionId = decodeURIComponent(webhook.path.slice(1));
        const kit = kits.get(subscriptionId);
        const ids = webhook.items?.map((item) => item.id) ?? [webhook.webhookId ?? ''];
        if (kit === undefined || ids.some((id) => refused.has(id))) return { statusCode: 500 };
        const answer = await kit.handle({ headers: webhook.headers, body: webhook.body });
        return { statusCode: answer.status };
      },
      wrapDeliveryPorts: crash.wrap,
    },
  );

  /** A subscription whose receiver is a kit with its secret. */
  async function subscribeKit(subscriptionId: string, batchSize = 1): Promise<void> {
    const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${subscriptionId}`, { tenant_id: 'tenant-it', url: receiver().endpointFor(subscriptionId), batch_size: batchSize });
    expect(answer.status).toBe(201);
    const { secret } = answer.body as { secret: string };
    kits.set(
      subscriptionId,
      createReceiver({
        secret,
        onEvent: (event, report) => note(subscriptionId, `${event.id.slice(subscriptionId.length + 1)}#${event.sequence} ${report.verdict}${report.missing.length > 0 ? ` missing ${report.missing.join(',')}` : ''}`),
        onDuplicate: (webhookId) => note(subscriptionId, `dropped ${webhookId.slice(subscriptionId.length + 1)}`),
      }),
    );
  }

  it('reports the gap a dead letter leaves, drops the delivery a crash sends again, and reports the redelivery after a redrive', async () => {
    const key = uniquePrefix('kit');
    await subscribeKit(key);
    const ids = [1, 2, 3, 4].map((n) => `${key}-${n}`);
    refused.add(ids[1] ?? '');
    // The key's last event: nothing after it moves the key past it, so its message, back after the
    // crash, is sent again.
    crash.eventIds.add(ids[3] ?? '');
    await postEvents(stack().url, ids.map((id) => makeEvent(key, id)));

    await waitFor('4 sent again after the crash', () => reports.get(key)?.includes('dropped 4'));
    // 4 was delivered, its record crashed, it came back with the same webhook-id: dropped.
    expect(reports.get(key)).toEqual(['1#1 in_order', '3#3 gap missing 2', '4#4 in_order', 'dropped 4']);

    refused.clear();
    expect((await redriveUntilDone(stack(), key)).map((event) => event.sequence)).toEqual([2]);
    await waitFor('the redelivery of 2 taken', () => reports.get(key)?.some((line) => line.startsWith('2#')));
    expect(reports.get(key)?.at(-1)).toBe('2#2 redelivery');
  });

  it('takes, without any setting, a fan-out’s copies to two subscriptions at one endpoint, each in order (one webhook-id, one resource key)', async () => {
    const prefix = uniquePrefix('kit-shared');
    const tenant = `${prefix}-tenant`;
    const endpoint = `${prefix}-endpoint`;
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const [alice, bob] = [`${prefix}-alice`, `${prefix}-bob`];
    for (const subscriptionId of [alice, bob]) {
      // Both ordered by resource: the copies share the ordering key as well as the webhook-id.
      const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${subscriptionId}`, { tenant_id: tenant, url: receiver().endpointFor(endpoint), secret, ordering: 'resource' });
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    }
    const saved: string[] = [];
    kits.set(
      endpoint,
      createReceiver({
        secret,
        // The README's example: everything but a duplicate is saved.
        onEvent: (event, report) => {
          if (report.verdict !== 'duplicate') saved.push(`${String(event.subscriptionId)} ${event.orderingKey} ${event.id}#${event.sequence} ${report.verdict}`);
        },
        onDuplicate: (webhookId, subscriptionId) => void saved.push(`dropped ${String(subscriptionId)} ${webhookId}`),
      }),
    );
    const ids = [`${prefix}-1`, `${prefix}-2`];
    const answer = await call(stack().url, 'POST', '/v1/events', { events: ids.map((id) => ({ event_id: id, tenant_id: tenant, resource_id: 'order_7', type: 'order.paid', payload: { id } })) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);

    await waitFor('both subscriptions’ copies taken', () => saved.length >= 4);
    const of = (subscriptionId: string) => saved.filter((line) => line.startsWith(`${subscriptionId} `));
    expect(of(alice)).toEqual([`${alice} order_7 ${ids[0]}#1 in_order`, `${alice} order_7 ${ids[1]}#2 in_order`]);
    expect(of(bob)).toEqual([`${bob} order_7 ${ids[0]}#1 in_order`, `${bob} order_7 ${ids[1]}#2 in_order`]);
    expect(saved).toHaveLength(4);
    // Each copy was one POST to the shared endpoint under the event's own id.
    expect(receiver().attempts().filter((attempt) => attempt.path === `/${endpoint}`).map((attempt) => attempt.webhookId).sort()).toEqual([ids[0], ids[0], ids[1], ids[1]]);
  });

  it('reports a gap inside a batch whose event was dead-lettered, after the batch went one event at a time', async () => {
    const key = uniquePrefix('kit-batch');
    await subscribeKit(key, 10);
    const ids = [1, 2, 3, 4].map((n) => `${key}-${n}`);
    refused.add(ids[1] ?? '');
    // One request: the four events travel in one message, and are sent as one batch first.
    await postEvents(stack().url, ids.map((id) => makeEvent(key, id)));

    await waitFor('4 taken by the kit', () => reports.get(key)?.some((line) => line.startsWith('4#')));
    expect(reports.get(key)).toEqual(['1#1 in_order', '3#3 gap missing 2', '4#4 in_order']);
    // The first POST was the whole batch, refused for 2.
    const [batch] = receiver().attempts().filter((attempt) => attempt.path === `/${key}`);
    expect(batch?.items?.map((item) => item.sequence)).toEqual([1, 2, 3, 4]);
  });
});

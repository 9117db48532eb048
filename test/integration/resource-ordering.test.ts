/**
 * A finer ordering key (docs/api.md#the-ordering-key-header): a subscription's `batch_size` and `ordering`
 * through the API, `ordering: "resource"` delivering each resource in order with its own sequence
 * and different resources concurrently, the `webhook-ordering-key` header through a real HTTP
 * receiver, and a change of `ordering` refused while events are pending.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { Ordering, partitionFor, partitionKey } from '../../lambda/core/routing.js';
import { encodeHeaderText } from '../../lambda/core/webhook.js';
import { TABLES } from '../../lambda/resources.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix, type ApiAnswer, type TestEvent } from './support/api.js';
import { lagRows } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import type { ReceivedWebhook } from '../../local/webhook-receiver.js';
import { SignatureCheck, type Attempt } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const TENANT = 'tenant-it';
const ORDERING_KEY_HEADER = 'webhook-ordering-key';

/** Event ids whose attempts the receiver refuses while the predicate holds. */
const refusals = new Map<string, () => boolean>();
/** Refused while the test says so: a webhook of one of the events named in `refusals`, alone or in a batch. */
const isRefused = (webhook: ReceivedWebhook): boolean =>
  [webhook.webhookId, ...(webhook.items ?? []).map((item) => item.id)].some((id) => id !== undefined && refusals.get(id)?.() === true);

interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly details?: readonly { readonly path: string; readonly message: string }[] };
}

function errorOf(body: unknown): ErrorBody['error'] {
  return (body as ErrorBody).error;
}

/** The wait before a change of ordering may be made, shortened from 60 s. */
const ORDERING_CHANGE_WAIT = 1;

/**
 * A change of ordering made with no race: `POST …/ordering-change` begins it (202 with
 * Retry-After), and the PUT, repeated until the wait is over (each early one is refused, changing
 * nothing), makes it.
 */
async function changeOrdering(baseUrl: string, subscriptionId: string, ordering: string, put: () => Promise<ApiAnswer>): Promise<ApiAnswer> {
  const begun = await call(baseUrl, 'POST', `/v1/subscriptions/${encodeURIComponent(subscriptionId)}/ordering-change`, { ordering });
  expect(begun.status).toBe(202);
  expect(begun.headers.get('retry-after')).toBe(String(ORDERING_CHANGE_WAIT));
  return waitFor('the change made by the PUT', async () => {
    const answer = await put();
    return answer.status === 409 && errorOf(answer.body).message.includes('PUT the same again') ? undefined : answer;
  });
}

describe('resource ordering on the local stack', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('resource');
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '10' },
    { respond: (webhook) => (isRefused(webhook) ? { statusCode: 500 } : undefined), orderingChangeWaitSeconds: ORDERING_CHANGE_WAIT },
  );

  const put = (id: string, body: Record<string, unknown>) => call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: TENANT, ...body });
  const get = (id: string) => call(stack().url, 'GET', `/v1/subscriptions/${encodeURIComponent(id)}`);
  const createByResource = async (id: string): Promise<void> => {
    const answer = await put(id, { url: receiver().endpointFor(id), ordering: 'resource' });
    expect(answer.status).toBe(201);
    receiver().setSecret(id, (answer.body as { secret: string }).secret);
  };
  const onResource = (subscriptionId: string, eventId: string, resourceId: string): TestEvent => ({ ...makeEvent(subscriptionId, eventId), resource_id: resourceId });
  const isDelivered = (attempt: Attempt) => attempt.statusCode !== undefined && attempt.statusCode >= 200 && attempt.statusCode <= 299;

  it('delivers two resources of one subscription concurrently, each in order with its own sequence 1, 2, 3, one failing head holding only its resource', async () => {
    const subscription = `${prefix}-two`;
    await createByResource(subscription);
    const slow = 'order-1';
    // Non-ASCII and a space: the header escapes them, through a real HTTP receiver.
    const fast = 'заказ 2 ü';
    const slowEvents = [1, 2, 3].map((n) => onResource(subscription, `${prefix}-s-${n}`, slow));
    const fastEvents = [1, 2, 3].map((n) => onResource(subscription, `${prefix}-f-${n}`, fast));
    const slowHead = slowEvents[0]?.event_id ?? '';
    // The slow resource's head is refused on its first attempt, and for as long as the fast resource
    // is not wholly delivered: were the two one key, the fast one would wait behind it for ever.
    refusals.set(slowHead, () => receiver().attemptsOf(slowHead).length <= 1 || fastEvents.some((event) => !receiver().attemptsOf(event.event_id).some(isDelivered)));

    const results = await postEvents(stack().url, [slowEvents[0], fastEvents[0], slowEvents[1], fastEvents[1], slowEvents[2], fastEvents[2]].filter((event) => event !== undefined));
    expect(new Set(results.map((result) => result.message_group_id)).size).toBe(2);

    await waitFor('both resources delivered', () => receiver().deliveredTo(subscription).length === 6);
    const deliveries = receiver().deliveredTo(subscription);
    const ofResource = (events: readonly TestEvent[]) => deliveries.filter((delivery) => events.some((event) => event.event_id === delivery.webhookId));
    expect(ofResource(slowEvents).map((delivery) => [delivery.webhookId, delivery.sequence])).toEqual(slowEvents.map((event, i) => [event.event_id, i + 1]));
    expect(ofResource(fastEvents).map((delivery) => [delivery.webhookId, delivery.sequence])).toEqual(fastEvents.map((event, i) => [event.event_id, i + 1]));
    expect(deliveries.every((delivery) => delivery.signature === SignatureCheck.verified)).toBe(true);

    // The fast resource flowed while the slow one's head was being refused.
    const slowHeadAttempts = receiver().attemptsOf(slowHead);
    expect(slowHeadAttempts.length).toBeGreaterThanOrEqual(2);
    expect(slowHeadAttempts[0]?.statusCode).toBe(500);
    const slowHeadDelivered = slowHeadAttempts.find(isDelivered)?.receivedAt.getTime() ?? 0;
    expect(ofResource(fastEvents).every((delivery) => delivery.receivedAt.getTime() < slowHeadDelivered)).toBe(true);

    // Each webhook names its resource, escaped; decoded, the header is the resource id.
    expect(new Set(ofResource(slowEvents).map((delivery) => delivery.headers[ORDERING_KEY_HEADER]))).toEqual(new Set([slow]));
    expect(new Set(ofResource(fastEvents).map((delivery) => delivery.headers[ORDERING_KEY_HEADER]))).toEqual(new Set(['%D0%B7%D0%B0%D0%BA%D0%B0%D0%B7%202%20%C3%BC']));
    expect(decodeURIComponent(ofResource(fastEvents)[0]?.headers[ORDERING_KEY_HEADER] ?? '')).toBe(fast);

    // The sequences are counted on the resource keys' items of the OrderingKeys table, none on the subscription's.
    const keyItem = async (key: string) =>
      (await stack().clients.dynamo.send(new GetCommand({ TableName: stack().resources.orderingKeysTable, Key: { [TABLES.orderingKeys.partitionKey]: key }, ConsistentRead: true }))).Item;
    for (const resource of [slow, fast]) {
      expect(await keyItem(partitionKey({ subscription_id: subscription, resource_id: resource }, Ordering.resource)), resource).toMatchObject({ last_sequence: 3 });
    }
    expect(await keyItem(subscription)).toBeUndefined();
  });

  it('refuses a request with an event without resource_id to a subscription ordered by resource with 400, enqueuing nothing', async () => {
    const subscription = `${prefix}-missing`;
    await createByResource(subscription);
    const other = `${prefix}-other`;
    receiver().setSecret(other, await subscribe(stack().url, other, receiver().endpointFor(other)));
    const events = [onResource(subscription, `${prefix}-m-1`, 'r1'), makeEvent(other, `${prefix}-m-2`), makeEvent(subscription, `${prefix}-m-3`)];

    const batch = await call(stack().url, 'POST', '/v1/events', { events });
    expect(batch.status).toBe(400);
    expect(errorOf(batch.body)).toMatchObject({ code: 'invalid_request', details: [{ path: 'events[2].resource_id' }] });
    const single = await call(stack().url, 'POST', '/v1/events', events[2]);
    expect(single.status).toBe(400);
    expect(errorOf(single.body).details?.map((detail) => detail.path)).toEqual(['resource_id']);

    for (const event of events) expect(await stack().eventItem(event.event_id), event.event_id).toBeUndefined();
    // The same events, once valid, are accepted: nothing of the refused requests was taken as a duplicate.
    const fixed = events.map((event) => (event.subscription_id === subscription ? { ...event, resource_id: 'r1' } : event));
    expect((await postEvents(stack().url, fixed)).map((result) => result.status)).toEqual(['accepted', 'accepted', 'accepted']);
    await waitFor('the fixed events delivered', () => receiver().deliveredTo(subscription).length === 2 && receiver().deliveredTo(other).length === 1);
    expect(receiver().deliveredTo(subscription).map((delivery) => delivery.sequence)).toEqual([1, 2]);
  });

  it('names the subscription, escaped, in webhook-ordering-key when ordering by subscription', async () => {
    const subscription = `${prefix}-подписка %ü`;
    receiver().setSecret(subscription, await subscribe(stack().url, subscription, receiver().endpointFor(subscription)));
    await postEvents(stack().url, [onResource(subscription, `${prefix}-h-1`, 'ignored'), makeEvent(subscription, `${prefix}-h-2`)]);
    await waitFor('the events delivered', () => receiver().deliveredTo(subscription).length === 2);
    const deliveries = receiver().deliveredTo(subscription);
    expect(deliveries.map((delivery) => delivery.sequence)).toEqual([1, 2]);
    expect(deliveries.map((delivery) => delivery.headers[ORDERING_KEY_HEADER])).toEqual([encodeHeaderText(subscription), encodeHeaderText(subscription)]);
    expect(deliveries[0]?.headers[ORDERING_KEY_HEADER]).toMatch(/^[\x21-\x7e]+$/);
    expect(decodeURIComponent(deliveries[0]?.headers[ORDERING_KEY_HEADER] ?? '')).toBe(subscription);
  });

  it('round-trips batch_size and ordering through PUT and GET, keeping them when a PUT omits them', async () => {
    const subscription = `${prefix}-fields`;
    const url = receiver().endpointFor(subscription);
    const created = await put(subscription, { url });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ batch_size: 1, ordering: 'subscription' });

    const set = await put(subscription, { url, batch_size: 7, ordering: 'resource' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ batch_size: 7, ordering: 'resource' });
    const kept = await put(subscription, { url: `${url}/moved` });
    expect(kept.body).toMatchObject({ url: `${url}/moved`, batch_size: 7, ordering: 'resource' });
    expect((await get(subscription)).body).toEqual({
      subscription_id: subscription,
      tenant_id: TENANT,
      url: `${url}/moved`,
      batch_size: 7,
      ordering: 'resource',
      event_types: null,
      created_at: expect.any(String),
      is_paused: false,
      paused_at: null,
      pause_reason: null,
      replay: null,
      last_replay: null,
      parked_groups: 0,
      // Ordered by resource: no one group holds exactly its events, so no last delivery is its own.
      last_delivered_at: null,
      ordering_change: null,
    });

    for (const [body, path] of [
      [{ batch_size: 0 }, 'batch_size'],
      [{ batch_size: 11 }, 'batch_size'],
      [{ batch_size: 1.5 }, 'batch_size'],
      [{ ordering: 'event' }, 'ordering'],
    ] as const) {
      const refused = await put(subscription, { url, ...body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(refused.body).details?.map((detail) => detail.path)).toEqual([path]);
    }
    expect((await get(subscription)).body).toMatchObject({ url: `${url}/moved`, batch_size: 7, ordering: 'resource' });
  });

  it('reads a subscription stored before the fields existed as the defaults, and keeps them on a PUT without them', async () => {
    const subscription = `${prefix}-old`;
    const url = receiver().endpointFor(subscription);
    const secret = `whsec_${Buffer.alloc(24, 5).toString('base64')}`;
    await stack().clients.dynamo.send(
      new PutCommand({ TableName: stack().resources.subscriptionsTable, Item: { subscription_id: subscription, tenant_id: TENANT, url, secret, created_at: '2026-01-01T00:00:00.000Z' } }),
    );
    expect((await get(subscription)).body).toMatchObject({ batch_size: 1, ordering: 'subscription', created_at: '2026-01-01T00:00:00.000Z' });
    const replaced = await put(subscription, { url });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ batch_size: 1, ordering: 'subscription' });
    expect(replaced.body).not.toHaveProperty('secret');

    // Its events are delivered as before: keyed by the subscription, one per POST.
    receiver().setSecret(subscription, secret);
    await postEvents(stack().url, [makeEvent(subscription, `${prefix}-o-1`)]);
    await waitFor('the event delivered', () => receiver().deliveredTo(subscription).length === 1);
    expect(receiver().deliveredTo(subscription)[0]).toMatchObject({ sequence: 1, signature: SignatureCheck.verified, headers: expect.objectContaining({ [ORDERING_KEY_HEADER]: subscription }) });
  });

  it('refuses a change of ordering with 409 ordering_change_pending while events are pending, and allows it once they are delivered', async () => {
    const subscription = `${prefix}-change`;
    const url = receiver().endpointFor(subscription);
    receiver().setSecret(subscription, await subscribe(stack().url, subscription, url));
    const events = [1, 2].map((n) => makeEvent(subscription, `${prefix}-c-${n}`));
    let isReceiverDown = true;
    refusals.set(events[0]?.event_id ?? '', () => isReceiverDown);
    const [result] = await postEvents(stack().url, events);

    const refused = await put(subscription, { url, ordering: 'resource', batch_size: 3 });
    expect(refused.status).toBe(409);
    const error = errorOf(refused.body);
    expect(error.code).toBe('ordering_change_pending');
    expect(error.details).toEqual([
      { path: 'ordering', message: '2 pending events in 1 message group' },
      { path: 'ordering', message: `message group ${result?.message_group_id ?? ''}: 2 pending` },
    ]);
    // Nothing was changed, batch_size included.
    expect((await get(subscription)).body).toMatchObject({ batch_size: 1, ordering: 'subscription' });
    // A batch_size change alone never changes what is ordered.
    expect((await put(subscription, { url, batch_size: 2 })).status).toBe(200);

    isReceiverDown = false;
    // From here the subscription takes batches of 2: each POST carries its events as items.
    const deliveredItems = () => receiver().deliveredTo(subscription).flatMap((attempt) => (attempt.items ?? [{ id: attempt.webhookId ?? '', sequence: attempt.sequence ?? 0 }]).map((item) => ({ ...item, orderingKey: attempt.headers[ORDERING_KEY_HEADER] })));
    await waitFor('the pending events delivered', () => deliveredItems().length === 2);
    await waitFor('the lag view drained of the subscription', async () => !(await lagRows(stack())).some((row) => row.message_group_id === result?.message_group_id && row.depth > 0));

    const begun = await call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(subscription)}/ordering-change`, { ordering: 'resource' });
    expect(begun.status).toBe(202);
    expect((await get(subscription)).body).toMatchObject({ ordering: 'subscription', ordering_change: { ordering: 'resource', started_at: expect.any(String) } });
    // Meanwhile the subscription's events are refused whole, and nothing of them is enqueued.
    const held = await call(stack().url, 'POST', '/v1/events', { events: [makeEvent(subscription, `${prefix}-c-held`)] });
    expect(held.status).toBe(503);
    expect(held.headers.get('retry-after')).toBe('5');
    expect(errorOf(held.body)).toMatchObject({ code: 'ingest_paused', details: [{ path: 'subscription_id', message: `${subscription}: changing its ordering` }] });
    const changed = await waitFor('the change made by the PUT', async () => {
      const answer = await put(subscription, { url, ordering: 'resource' });
      return answer.status === 409 ? undefined : answer;
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ ordering: 'resource', batch_size: 2 });
    expect((await get(subscription)).body).toMatchObject({ ordering: 'resource', ordering_change: null });
    await postEvents(stack().url, [onResource(subscription, `${prefix}-c-3`, 'r1')]);
    await waitFor('the event of the new key delivered', () => deliveredItems().length === 3);
    // A new key: its own sequence, from 1.
    expect(deliveredItems()[2]).toMatchObject({ id: `${prefix}-c-3`, sequence: 1, orderingKey: 'r1' });
  });
});

describe('ordering changes in partition mode on the local stack', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('partitioned');
  const { stack, receiver } = useStackAndReceiver(
    // Retries a second apart: the change of another subscription takes a second or more before the receiver comes back.
    { PARTITION_COUNT: '4', MAX_DELIVERY_ATTEMPTS: '30', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    { respond: (webhook) => (isRefused(webhook) ? { statusCode: 500 } : undefined), orderingChangeWaitSeconds: ORDERING_CHANGE_WAIT },
  );
  const put = (id: string, body: Record<string, unknown>) => call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: TENANT, ...body });

  it('refuses a change for the subscription whose key the partition names, and allows it for another subscription of the same partition', async () => {
    const pending = `${prefix}-pending`;
    // A subscription routed to the same partition, with nothing pending: only the keys the partition names count.
    const neighbour = Array.from({ length: 64 }, (_, i) => `${prefix}-neighbour-${i}`).find((id) => partitionFor(id, 4) === partitionFor(pending, 4)) ?? '';
    for (const id of [pending, neighbour]) receiver().setSecret(id, await subscribe(stack().url, id, receiver().endpointFor(id)));
    const event = makeEvent(pending, `${prefix}-p-1`);
    let isReceiverDown = true;
    refusals.set(event.event_id, () => isReceiverDown);
    const [result] = await postEvents(stack().url, [event]);
    expect(result?.message_group_id).toBe(`partition-${partitionFor(pending, 4)}`);

    const refused = await put(pending, { url: receiver().endpointFor(pending), ordering: 'resource' });
    expect(refused.status).toBe(409);
    expect(errorOf(refused.body)).toMatchObject({
      code: 'ordering_change_pending',
      details: [
        { path: 'ordering', message: 'up to 1 pending event in 1 message group' },
        { path: 'ordering', message: `message group ${result?.message_group_id ?? ''}: 1 pending (a partition: other keys included)` },
      ],
    });
    expect((await changeOrdering(stack().url, neighbour, 'resource', () => put(neighbour, { url: receiver().endpointFor(neighbour), ordering: 'resource' }))).status).toBe(200);

    isReceiverDown = false;
    await waitFor('the pending event delivered', () => receiver().deliveredTo(pending).length === 1);
    await waitFor('the partition drained', async () => !(await lagRows(stack())).some((row) => row.message_group_id === result?.message_group_id && row.depth > 0));
    expect((await put(pending, { url: receiver().endpointFor(pending), ordering: 'resource' })).status).toBe(200);
  });
});

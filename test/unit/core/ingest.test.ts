import { describe, expect, it } from 'vitest';
import { parseEventsRequest, publicEventIdOf, queuedEventSchema, readQueuedEvent, readQueuedMessage, type EventsRequest, type QueuedEvent } from '../../../lambda/core/event.js';
import type { OutgoingMessage } from '../../../lambda/core/enqueue-plan.js';
import { ingestEvents, type IngestPorts } from '../../../lambda/core/ingest.js';
import type { GroupIntake } from '../../../lambda/core/lag.js';
import { ORDERING_CHANGE_HOLD_SECONDS } from '../../../lambda/core/ordering-change.js';
import { MAX_QUEUED_EVENT_BYTES } from '../../../lambda/core/limits.js';
import { messageGroupIdFor, Ordering, partitionKey } from '../../../lambda/core/routing.js';
import { namedEventId, publicEventIdOfDelivery } from '../../../lambda/core/fan-out-id.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';
import { fakeQueue } from '../../support/fake-queue.js';
import { NO_FAN_OUTS } from '../../support/no-fan-outs.js';

const now = new Date('2026-12-02T12:00:00.000Z');

/** The longest subscription id of control characters: JSON writes each as six bytes (`\u0001`). */
const ESCAPED_SUBSCRIPTION = '\u0001'.repeat(128);

function request(events: Record<string, unknown>[]): EventsRequest {
  const parsed = parseEventsRequest({ events });
  if (!parsed.ok) throw new Error('test request is invalid');
  return parsed.value;
}

const event = (id: string, subscription = 'sub_a', tenant = 'tenant_1') => ({
  event_id: id,
  tenant_id: tenant,
  subscription_id: subscription,
  type: 'thing.happened',
  payload: { id },
});

/** An event of the request as a queued event carries it: its payload as text. */
const queuedFieldsOf = ({ payload, ...fields }: ReturnType<typeof event>) => ({ ...fields, payload_json: JSON.stringify(payload) });

/** An event whose payload carries `bytes` ASCII characters more: three of 300 KB fit one message, four do not. */
const big = (id: string, bytes: number, subscription = 'sub_a') => ({ ...event(id, subscription), payload: { id, pad: 'x'.repeat(bytes) } });

/** The queued events a message holds, in order: one, or a pack's. */
function queuedOf(message: OutgoingMessage | undefined): QueuedEvent[] {
  const read = readQueuedMessage(message?.body ?? '');
  if ('reason' in read) throw new Error(read.reason);
  return read.items.map((item) => {
    if (!('queued' in item)) throw new Error(item.reason);
    return item.queued;
  });
}

/** The event ids a message holds, in order. */
const idsOf = (message: OutgoingMessage | undefined) => queuedOf(message).map(publicEventIdOf);


/** The record of the event a producer sent as `id` (ids are unique across these tests' subscriptions). */
const recordOf = (store: InMemoryDeliveryStore, id: string) => [...store.events].find(([key]) => publicEventIdOfDelivery(key) === id)?.[1];

function setup(options: { refuse?: (message: OutgoingMessage) => boolean } = {}) {
  const store = new InMemoryDeliveryStore();
  const fake = fakeQueue(options.refuse);
  const { queue } = fake;
  const calls: OutgoingMessage[][] = [];
  const intakes: GroupIntake[] = [];
  let requests = 0;
  /** The lag count of each group after all intakes, and when each group was counted relative to sending. */
  const depthOf = (group: string) => intakes.filter((i) => i.messageGroupId === group).reduce((sum, i) => sum + i.events, 0);
  const ports: IngestPorts = {
    // sub_r and ESCAPED_SUBSCRIPTION order their events by resource.
    ...NO_FAN_OUTS,
    findSubscriptionRouting: async (ids) =>
      new Map(
        ids
          .filter((id) => ['sub_a', 'sub_b', 'sub_c', 'sub_r', ESCAPED_SUBSCRIPTION].includes(id))
          .map((id) => [id, { tenantId: 'tenant_1', ordering: id === 'sub_a' || id === 'sub_b' || id === 'sub_c' ? Ordering.subscription : Ordering.resource }] as const),
      ),
    recordAccepted: store.recordAccepted,
    findRecorded: store.findRecorded,
    recordGroupIntake: async (intake) => {
      intakes.push(intake);
    },
    sendBatch: async (entries) => {
      calls.push([...entries]);
      return fake.sendBatch(entries);
    },
    now: () => now,
    uniqueId: () => `request${(requests += 1)}`,
  };
  return { store, queue, calls, ports, intakes, depthOf };
}

describe('ingestEvents', () => {
  it('enqueues each key in request order, in one message per key, each deduplicated by an id of its own, and answers accepted', async () => {
    const { queue, calls, ports, store } = setup();
    const response = await ingestEvents(
      request([event('1', 'sub_a'), event('2', 'sub_b'), event('3', 'sub_a'), event('4', 'sub_a')]),
      ports,
      { partitionCount: undefined },
    );
    expect(response).toEqual({
      kind: 'accepted',
      results: [
        { event_id: '1', status: 'accepted', message_group_id: messageGroupIdFor('sub_a', undefined) },
        { event_id: '2', status: 'accepted', message_group_id: messageGroupIdFor('sub_b', undefined) },
        { event_id: '3', status: 'accepted', message_group_id: messageGroupIdFor('sub_a', undefined) },
        { event_id: '4', status: 'accepted', message_group_id: messageGroupIdFor('sub_a', undefined) },
      ],
    });
    expect(queue.map((m) => [m.orderingKey, m.deduplicationId, idsOf(m)])).toEqual([
      ['sub_a', 'request1-0', ['1', '3', '4']],
      ['sub_b', 'request1-1', ['2']],
    ]);
    for (const call of calls) expect(new Set(call.map((m) => m.orderingKey)).size).toBe(call.length);
    expect(queuedOf(queue[0])[0]).toEqual({
      version: 1,
      event: { ...queuedFieldsOf(event('1', 'sub_a')), event_id: namedEventId('1', 'tenant_1', 'sub_a') },
      ordering_key: 'sub_a',
      message_group_id: messageGroupIdFor('sub_a', undefined),
      accepted_at: now.toISOString(),
      named: { event_id: '1' },
    });
    expect(recordOf(store, '1')?.accepted).toMatchObject({ orderingKey: 'sub_a', acceptedAt: now.toISOString() });
  });

  it("records each event's place in the queue: its message's group and number, and its index in a pack", async () => {
    const { ports, store } = setup();
    await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_b'), event('3', 'sub_a')]), ports, { partitionCount: undefined });
    const groupA = messageGroupIdFor('sub_a', undefined);
    const number = (n: number) => String(n).padStart(40, '0');
    expect(['1', '3', '2'].map((id) => recordOf(store, id)?.accepted?.queuePosition)).toEqual([
      `${groupA}/${number(1)}000`,
      `${groupA}/${number(1)}001`,
      `${messageGroupIdFor('sub_b', undefined)}/${number(2)}`,
    ]);
  });

  it('keeps the events of each enqueued message, with their places, beside their records, and none of a message not enqueued', async () => {
    const { ports, store, queue } = setup({ refuse: (m) => idsOf(m).includes('3') });
    const kept: { eventIds: string[]; queuePositions: (string | undefined)[]; body: string }[] = [];
    const outcome = await ingestEvents(
      request([event('1', 'sub_a'), event('2', 'sub_b'), event('3', 'sub_c'), event('4', 'sub_a')]),
      {
        ...ports,
        keepEvents: async ({ events, body }) => {
          kept.push({ eventIds: events.map((e) => publicEventIdOf(e.queued)), queuePositions: events.map((e) => e.queuePosition), body });
          // The message's body, whose events these are.
          expect(queuedOf({ index: 0, orderingKey: '', messageGroupId: '', deduplicationId: '', body })).toEqual(events.map((e) => e.queued));
        },
      },
      { partitionCount: undefined },
    );
    expect(outcome.kind).toBe('partly_enqueued');
    expect(kept.map((k) => k.eventIds).sort()).toEqual([['1', '4'], ['2']]);
    expect(kept.map((k) => k.body).sort()).toEqual(queue.map((m) => m.body).sort());
    for (const { eventIds, queuePositions } of kept) expect(queuePositions).toEqual(eventIds.map((id) => recordOf(store, id)?.accepted?.queuePosition));
  });

  it('answers a fault, recording nothing of the message, when its events could not be kept: the resend keeps and records its copy', async () => {
    const { ports, store } = setup();
    const failing = ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_a')]), { ...ports, keepEvents: () => Promise.reject(new Error('DynamoDB unavailable')) }, { partitionCount: undefined });
    await expect(failing).rejects.toThrow('DynamoDB unavailable');
    expect(store.events.size).toBe(0);
    const kept: (string | undefined)[] = [];
    const resent = await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_a')]), { ...ports, keepEvents: async ({ events }) => void kept.push(...events.map((e) => e.queuePosition)) }, { partitionCount: undefined });
    expect(resent.kind).toBe('accepted');
    expect(['1', '2'].map((id) => recordOf(store, id)?.accepted?.queuePosition)).toEqual(kept);
  });

  it("still counts the events recorded of other messages when one message's events could not be kept", async () => {
    const { ports, store, depthOf } = setup();
    const failing = ingestEvents(
      request([event('1', 'sub_a'), event('2', 'sub_b')]),
      { ...ports, keepEvents: async ({ events }) => (events[0].queued.event.subscription_id === 'sub_a' ? Promise.reject(new Error('DynamoDB unavailable')) : undefined) },
      { partitionCount: undefined },
    );
    await expect(failing).rejects.toThrow('DynamoDB unavailable');
    expect([...store.events.keys()].map(publicEventIdOfDelivery)).toEqual(['2']);
    expect(depthOf(messageGroupIdFor('sub_b', undefined))).toBe(1);
  });

  it('records no place where SQS gave no number it vouches for (an answer after the SDK repeated the call)', async () => {
    const { ports, store } = setup();
    const repeated: IngestPorts = {
      ...ports,
      sendBatch: async (entries) => ({ ...(await ports.sendBatch(entries)), sequenceNumbers: new Map() }),
    };
    const response = await ingestEvents(request([event('1')]), repeated, { partitionCount: undefined });
    expect(response).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted' }] });
    expect(recordOf(store, '1')?.accepted).toBeDefined();
    expect(recordOf(store, '1')?.accepted?.queuePosition).toBeUndefined();
  });

  it('answers accepted, and counts the event once, when its own record is written twice (the first answer lost)', async () => {
    const { ports, store, depthOf } = setup();
    const repeating: IngestPorts = {
      ...ports,
      recordAccepted: async (record) => {
        await store.recordAccepted(record);
        return store.recordAccepted(record);
      },
    };
    const response = await ingestEvents(request([event('1')]), repeating, { partitionCount: undefined });
    expect(response).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted' }] });
    expect(depthOf(messageGroupIdFor('sub_a', undefined))).toBe(1);
  });

  it('counts each group once per request, after recording, with its keys', async () => {
    const { ports, intakes, depthOf } = setup();
    await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_b'), event('3', 'sub_a')]), ports, { partitionCount: undefined });
    expect(intakes).toHaveLength(2);
    expect(depthOf(messageGroupIdFor('sub_a', undefined))).toBe(2);
    expect(intakes.find((i) => i.messageGroupId === messageGroupIdFor('sub_a', undefined))).toEqual({
      messageGroupId: messageGroupIdFor('sub_a', undefined),
      events: 2,
      orderingKeys: ['sub_a'],
      acceptedAt: now.toISOString(),
    });
  });

  it('counts the keys of a partition together in partition mode', async () => {
    const { ports, intakes } = setup();
    const one = messageGroupIdFor('sub_a', 1);
    await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_b')]), ports, { partitionCount: 1 });
    expect(intakes).toEqual([{ messageGroupId: one, events: 2, orderingKeys: ['sub_a', 'sub_b'], acceptedAt: now.toISOString() }]);
  });

  it('counts only recorded events: no failed, not-enqueued or duplicate one', async () => {
    const { ports, depthOf } = setup({ refuse: (m) => idsOf(m).includes('3') });
    await ingestEvents(request([event('1', 'sub_a')]), ports, { partitionCount: undefined });
    // Two events of 400 KB make one message: packs [2, 3x], [3, 4x], [5].
    const response = await ingestEvents(
      request([event('1', 'sub_a'), big('2', 400_000), big('2x', 400_000), big('3', 400_000), big('4x', 400_000), big('5', 400_000)]),
      ports,
      { partitionCount: undefined },
    );
    expect(response).toMatchObject({ results: [{ status: 'duplicate' }, { status: 'accepted' }, { status: 'accepted' }, { status: 'failed' }, { status: 'failed' }, { status: 'not_enqueued' }] });
    // Accepted: 1 (first request), 2 and 2x; 3 and 4x failed, 5 not enqueued, the resent 1 a duplicate.
    expect(depthOf(messageGroupIdFor('sub_a', undefined))).toBe(3);
  });

  it('counts an event once when its record failed and the producer retried it', async () => {
    const { ports, depthOf, store, queue } = setup();
    let isFailing = true;
    const flaky: IngestPorts = {
      ...ports,
      recordAccepted: async (record) => {
        if (isFailing) throw new Error('DynamoDB unavailable');
        return store.recordAccepted(record);
      },
    };
    await expect(ingestEvents(request([event('1', 'sub_a')]), flaky, { partitionCount: undefined })).rejects.toThrow('DynamoDB unavailable');
    isFailing = false;
    const retry = await ingestEvents(request([event('1', 'sub_a')]), flaky, { partitionCount: undefined });
    expect(retry).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted' }] });
    expect(depthOf(messageGroupIdFor('sub_a', undefined))).toBe(1);
    // Two messages: the first, never recorded, is a copy of the second, whose place is recorded.
    expect(queue.map((m) => m.deduplicationId)).toEqual(['request1-0', 'request2-0']);
    expect(recordOf(store, '1')?.accepted?.queuePosition).toBe(`${messageGroupIdFor('sub_a', undefined)}/${'2'.padStart(40, '0')}`);
  });

  it('does not count an event the consumer settled before ingest recorded it', async () => {
    const { ports, depthOf, store } = setup();
    const racing: IngestPorts = {
      ...ports,
      sendBatch: async (entries) => {
        const answer = await ports.sendBatch(entries);
        // The consumer delivers at once, before ingest writes its record.
        for (const entry of entries) for (const queued of queuedOf(entry)) store.events.set(queued.event.event_id, { status: 'delivered' });
        return answer;
      },
    };
    const response = await ingestEvents(request([event('1', 'sub_a')]), racing, { partitionCount: undefined });
    expect(response).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted' }] });
    expect(depthOf(messageGroupIdFor('sub_a', undefined))).toBe(0);
  });

  it('answers paused with a delay to retry after while paused, touching nothing', async () => {
    const { ports, calls, store, intakes } = setup();
    const response = await ingestEvents(request([event('1')]), ports, { partitionCount: undefined, isPaused: true });
    expect(response).toEqual({ kind: 'paused', retryAfterSeconds: 5 });
    expect(calls).toEqual([]);
    expect(store.writes).toEqual([]);
    expect(intakes).toEqual([]);
  });

  it('holds a request whole while one of its subscriptions is changing its ordering, touching nothing, and takes it once the hold is over', async () => {
    const { ports, calls, store, intakes } = setup();
    const startedAt = now.toISOString();
    const changing: IngestPorts = {
      ...ports,
      findSubscriptionRouting: async (ids) => new Map([...(await ports.findSubscriptionRouting(ids))].map(([id, routing]) => [id, id === 'sub_b' ? { ...routing, orderingChange: { ordering: Ordering.resource, startedAt } } : routing])),
    };
    const response = await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_b')]), changing, { partitionCount: undefined });
    expect(response).toEqual({ kind: 'paused', retryAfterSeconds: 5, orderingChanges: ['sub_b'] });
    expect(calls).toEqual([]);
    expect(store.writes).toEqual([]);
    expect(intakes).toEqual([]);
    const later: IngestPorts = { ...changing, now: () => new Date(now.getTime() + ORDERING_CHANGE_HOLD_SECONDS * 1000) };
    expect(await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_b')]), later, { partitionCount: undefined })).toMatchObject({ kind: 'accepted' });
  });

  it('routes to partitions in partition mode', async () => {
    const { queue, ports } = setup();
    const response = await ingestEvents(request([event('1', 'sub_a')]), ports, { partitionCount: 16 });
    expect(response).toMatchObject({ results: [{ message_group_id: messageGroupIdFor('sub_a', 16) }] });
    expect(queue[0]?.messageGroupId).toMatch(/^partition-\d+$/);
  });

  it('answers a resent event_id as duplicate, by its refused record, keeping the first place recorded', async () => {
    const { queue, ports, store, depthOf } = setup();
    await ingestEvents(request([event('1')]), ports, { partitionCount: undefined });
    const first = recordOf(store, '1')?.accepted?.queuePosition;
    const again = await ingestEvents(request([event('1'), event('2')]), ports, { partitionCount: undefined });
    expect(again).toMatchObject({ kind: 'accepted', results: [{ event_id: '1', status: 'duplicate' }, { event_id: '2', status: 'accepted' }] });
    // Found recorded before anything was sent: not sent again (its record was written once its message was enqueued).
    expect(queue.map((m) => idsOf(m))).toEqual([['1'], ['2']]);
    expect(recordOf(store, '1')?.accepted?.queuePosition).toBe(first);
    expect(store.writes.filter((w) => w.startsWith('recordAccepted 1 '))).toHaveLength(1);
    expect(depthOf(messageGroupIdFor('sub_a', undefined))).toBe(2);
  });

  it('refuses the whole request as unknown_subscription when a subscription is unknown, enqueuing and recording nothing', async () => {
    const { queue, calls, ports, store } = setup();
    const response = await ingestEvents(request([event('1', 'sub_a'), event('2', 'sub_x')]), ports, { partitionCount: undefined });
    expect(response).toMatchObject({ kind: 'refused', reason: 'unknown_subscription', details: [{ path: 'events[1].subscription_id' }] });
    expect(calls).toHaveLength(0);
    expect(queue).toHaveLength(0);
    expect(store.writes).toHaveLength(0);
  });

  it('keys each event of a subscription ordered by resource by its resource, in request order per resource', async () => {
    const { queue, ports, intakes } = setup();
    const onResource = (id: string, resource: string) => ({ ...event(id, 'sub_r'), resource_id: resource });
    const response = await ingestEvents(request([onResource('1', 'r1'), onResource('2', 'r2'), onResource('3', 'r1'), { ...event('4', 'sub_a'), resource_id: 'r1' }]), ports, { partitionCount: undefined });
    const r1 = partitionKey({ subscription_id: 'sub_r', resource_id: 'r1' }, Ordering.resource);
    const r2 = partitionKey({ subscription_id: 'sub_r', resource_id: 'r2' }, Ordering.resource);
    expect(response).toMatchObject({
      kind: 'accepted',
      results: [
        { event_id: '1', message_group_id: messageGroupIdFor(r1, undefined) },
        { event_id: '2', message_group_id: messageGroupIdFor(r2, undefined) },
        { event_id: '3', message_group_id: messageGroupIdFor(r1, undefined) },
        // A subscription ordered by subscription ignores the resource.
        { event_id: '4', message_group_id: messageGroupIdFor('sub_a', undefined) },
      ],
    });
    expect(queue.filter((m) => m.orderingKey === r1).map(idsOf)).toEqual([['1', '3']]);
    expect(queuedOf(queue.find((m) => m.orderingKey === r1)).map((queued) => queued.ordering_key)).toEqual([r1, r1]);
    expect(queuedEventSchema.parse(JSON.parse(queue.find((m) => m.orderingKey === r2)?.body ?? '')).ordering_key).toBe(r2);
    expect(intakes.flatMap((intake) => intake.orderingKeys).sort()).toEqual([r1, r2, 'sub_a'].sort());
  });

  it('refuses the whole request as invalid_request when an event of a subscription ordered by resource has no resource_id, enqueuing and recording nothing', async () => {
    const { queue, calls, ports, store } = setup();
    const response = await ingestEvents(request([{ ...event('1', 'sub_r'), resource_id: 'r1' }, event('2', 'sub_a'), event('3', 'sub_r')]), ports, { partitionCount: undefined });
    expect(response).toEqual({
      kind: 'refused',
      reason: 'invalid_request',
      details: [{ path: 'events[2].resource_id', message: 'is required: subscription "sub_r" orders its events by resource' }],
    });
    expect(calls).toHaveLength(0);
    expect(queue).toHaveLength(0);
    expect(store.writes).toHaveLength(0);
  });

  it('names resource_id without a prefix for a single event', async () => {
    const { ports } = setup();
    const single = parseEventsRequest(event('1', 'sub_r'));
    if (!single.ok) throw new Error('test request is invalid');
    expect(await ingestEvents(single.value, ports, { partitionCount: undefined })).toMatchObject({ kind: 'refused', reason: 'invalid_request', details: [{ path: 'resource_id' }] });
  });

  it('refuses a resource_id whose key would pass DynamoDB\'s 2048-byte key limit, enqueuing nothing', async () => {
    const { queue, ports } = setup();
    // 128 + 256 control characters: 2304 bytes of JSON; 256 two-byte characters beside them fit.
    const response = await ingestEvents(
      request([{ ...event('1', ESCAPED_SUBSCRIPTION), resource_id: '\u0001'.repeat(256) }, { ...event('2', ESCAPED_SUBSCRIPTION), resource_id: 'é'.repeat(256) }]),
      ports,
      { partitionCount: undefined },
    );
    expect(response).toMatchObject({ kind: 'refused', reason: 'invalid_request', details: [{ path: 'events[0].resource_id' }] });
    expect(response).toHaveProperty('details.length', 1);
    expect(queue).toHaveLength(0);
  });

  it('treats a subscription of another tenant as unknown', async () => {
    const { queue, ports } = setup();
    const response = await ingestEvents(request([event('1', 'sub_a', 'tenant_2')]), ports, { partitionCount: undefined });
    expect(response).toMatchObject({ kind: 'refused', reason: 'unknown_subscription' });
    expect(queue).toHaveLength(0);
  });

  it('applies the partial-failure rule: partly enqueued, failed, then not_enqueued for the rest of that key only', async () => {
    const { queue, calls, ports, store } = setup({ refuse: (m) => idsOf(m).includes('3') });
    // sub_a's events of 400 KB travel two by two: packs [1, 3x], [3, 5x], [5]; sub_b's in one.
    const response = await ingestEvents(
      request([big('1', 400_000), event('2', 'sub_b'), big('3x', 400_000), event('4', 'sub_b'), big('3', 400_000), big('5x', 400_000), big('5', 400_000)]),
      ports,
      { partitionCount: undefined },
    );
    expect(response).toMatchObject({
      kind: 'partly_enqueued',
      retryAfterSeconds: 1,
      results: [
        { event_id: '1', status: 'accepted' },
        { event_id: '2', status: 'accepted' },
        { event_id: '3x', status: 'accepted' },
        { event_id: '4', status: 'accepted' },
        { event_id: '3', status: 'failed' },
        { event_id: '5x', status: 'failed' },
        { event_id: '5', status: 'not_enqueued' },
      ],
    });
    expect(queue.map(idsOf)).toEqual([['1', '3x'], ['2', '4']]);
    expect(calls.flat().flatMap(idsOf)).not.toContain('5');
    for (const id of ['3', '5x', '5']) expect(store.events.has(id)).toBe(false);
  });

  it('lets a retry of the whole request finish what failed, in order', async () => {
    let refuse = true;
    const { queue, ports } = setup({ refuse: (m) => refuse && idsOf(m).includes('3') });
    // Two events of 400 KB make one message: packs [1, 2], [3, 4], [5].
    const events = ['1', '2', '3', '4', '5'].map((id) => big(id, 400_000));
    expect(await ingestEvents(request(events), ports, { partitionCount: undefined })).toMatchObject({
      kind: 'partly_enqueued',
      results: [{ status: 'accepted' }, { status: 'accepted' }, { status: 'failed' }, { status: 'failed' }, { status: 'not_enqueued' }],
    });
    refuse = false;
    const retry = await ingestEvents(request(events), ports, { partitionCount: undefined });
    expect(retry).toMatchObject({ kind: 'accepted', results: [{ status: 'duplicate' }, { status: 'duplicate' }, { status: 'accepted' }, { status: 'accepted' }, { status: 'accepted' }] });
    // 1 and 2 were found recorded before anything was sent: only 3 on are sent again, in order.
    expect(queue.map(idsOf)).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });

  it('refuses an event too large for one SQS message as payload_too_large, enqueuing nothing', async () => {
    const { queue, ports } = setup();
    const huge = { ...event('1'), payload: { blob: 'x'.repeat(1_046_000) } };
    const response = await ingestEvents(request([huge]), ports, { partitionCount: undefined });
    expect(response).toMatchObject({ kind: 'refused', reason: 'payload_too_large', details: [{ path: 'events[0].payload' }] });
    expect(queue).toHaveLength(0);
  });

  describe('packs', () => {
    /** The body of the message of `e` ingested alone, in a request of its own. */
    async function bodyAlone(e: Record<string, unknown>): Promise<string> {
      const { queue, ports } = setup();
      await ingestEvents(request([e]), ports, { partitionCount: undefined });
      if (queue.length !== 1 || queue[0] === undefined) throw new Error('expected one message');
      return queue[0].body;
    }

    const tenOfOneKey = () => Array.from({ length: 10 }, (_, i) => ({ ...event(`e${i}`), payload: { i, text: i === 3 ? 'é 😀 \uFFFF' : `n${i}` } }));

    it('sends the 10 events of one key in one message of one SendMessageBatch call', async () => {
      const { calls, ports } = setup();
      const response = await ingestEvents(request(tenOfOneKey()), ports, { partitionCount: undefined });
      expect(response).toMatchObject({ kind: 'accepted' });
      expect(calls.map((call) => call.map(idsOf))).toEqual([[tenOfOneKey().map((e) => e.event_id)]]);
    });

    it('writes a pack whose events read back in request order, each as its message alone would hold it', async () => {
      const { queue, ports } = setup();
      const events = tenOfOneKey();
      await ingestEvents(request(events), ports, { partitionCount: undefined });
      const alone = await Promise.all(events.map(bodyAlone));
      expect(queue).toHaveLength(1);
      expect(queue[0]?.body).toBe(`{"version":2,"events":[${alone.join(',')}]}`);
      expect(queuedOf(queue[0])).toEqual(
        alone.map((body) => {
          const read = readQueuedEvent(body);
          if (!('queued' in read)) throw new Error(read.reason);
          return read.queued;
        }),
      );
    });

    it('sends a key with one event as that event alone (version 1)', async () => {
      const { queue, ports } = setup();
      await ingestEvents(request([event('a1', 'sub_a'), event('b1', 'sub_b'), event('a2', 'sub_a')]), ports, { partitionCount: undefined });
      const single = queue.find((m) => m.orderingKey === 'sub_b');
      expect(single?.body).toBe(await bodyAlone(event('b1', 'sub_b')));
      expect(queuedEventSchema.parse(JSON.parse(single?.body ?? '')).event).toEqual({ ...queuedFieldsOf(event('b1', 'sub_b')), event_id: namedEventId('b1', 'tenant_1', 'sub_b') });
    });

    it('gives every message a deduplication id of its own, another for the same request sent again', async () => {
      const { queue, ports } = setup();
      const same = request([event('1'), event('2'), event('3', 'sub_b')]);
      await ingestEvents(same, ports, { partitionCount: undefined });
      // Sent again as if the read before enqueueing had found no record (written meanwhile by the first).
      const { findRecorded: _unread, ...unreading } = ports;
      await ingestEvents(same, unreading, { partitionCount: undefined });
      expect(queue.map((m) => [m.deduplicationId, idsOf(m)])).toEqual([
        ['request1-0', ['1', '2']],
        ['request1-2', ['3']],
        ['request2-0', ['1', '2']],
        ['request2-2', ['3']],
      ]);
    });

    it('splits a key\'s events into packs, in order, when one message would pass MAX_QUEUED_EVENT_BYTES', async () => {
      const { queue, calls, ports } = setup();
      const response = await ingestEvents(request(['1', '2', '3', '4'].map((id) => big(id, 300_000))), ports, { partitionCount: undefined });
      expect(response).toMatchObject({ kind: 'accepted' });
      expect(queue.map(idsOf)).toEqual([['1', '2', '3'], ['4']]);
      expect(queue.map((m) => m.deduplicationId)).toEqual(['request1-0', 'request1-3']);
      for (const message of queue) expect(Buffer.byteLength(message.body, 'utf8')).toBeLessThanOrEqual(MAX_QUEUED_EVENT_BYTES);
      // One key's messages go one call after the other: a later one only once the earlier one is taken.
      expect(calls.map((call) => call.map(idsOf))).toEqual([[['1', '2', '3']], [['4']]]);
    });

    it('fails each event of a failed pack, and enqueues no later pack of its key', async () => {
      const { queue, calls, ports, store } = setup({ refuse: (m) => idsOf(m).includes('1') });
      const response = await ingestEvents(request(['1', '2', '3', '4'].map((id) => big(id, 300_000))), ports, { partitionCount: undefined });
      expect(response).toMatchObject({
        kind: 'partly_enqueued',
        results: [
          { event_id: '1', status: 'failed' },
          { event_id: '2', status: 'failed' },
          { event_id: '3', status: 'failed' },
          { event_id: '4', status: 'not_enqueued' },
        ],
      });
      expect(calls).toHaveLength(1);
      expect(queue).toEqual([]);
      expect(store.writes).toEqual([]);
    });

    it('fills a pack up to exactly MAX_QUEUED_EVENT_BYTES, and splits it one byte beyond', async () => {
      const first = big('1', 500_000);
      const fixed = Buffer.byteLength(await bodyAlone(first), 'utf8') + Buffer.byteLength(await bodyAlone(big('2', 0)), 'utf8');
      // The pack's text: `{"version":2,"events":[`, the two bodies, a comma, `]}`.
      const fitting = MAX_QUEUED_EVENT_BYTES - fixed - '{"version":2,"events":[,]}'.length;
      const exact = setup();
      await ingestEvents(request([first, big('2', fitting)]), exact.ports, { partitionCount: undefined });
      expect(exact.queue.map(idsOf)).toEqual([['1', '2']]);
      expect(Buffer.byteLength(exact.queue[0]?.body ?? '', 'utf8')).toBe(MAX_QUEUED_EVENT_BYTES);
      const over = setup();
      await ingestEvents(request([first, big('2', fitting + 1)]), over.ports, { partitionCount: undefined });
      expect(over.queue.map(idsOf)).toEqual([['1'], ['2']]);
    });

    it('leaves events found accepted out of the packs, keeping request order, and answers them duplicate', async () => {
      const { queue, ports, store } = setup();
      await ingestEvents(request([event('2'), event('5', 'sub_b')]), ports, { partitionCount: undefined });
      const recorded = ['2', '5'].map((id) => recordOf(store, id)?.accepted?.queuePosition);
      queue.length = 0;
      const response = await ingestEvents(request([event('1'), event('2'), event('3'), event('4', 'sub_b'), event('5', 'sub_b')]), ports, { partitionCount: undefined });
      expect(response).toMatchObject({ results: [{ status: 'accepted' }, { status: 'duplicate' }, { status: 'accepted' }, { status: 'accepted' }, { status: 'duplicate' }] });
      expect(queue.map(idsOf)).toEqual([['1', '3'], ['4']]);
      // Not sent again: their records keep the places of their messages.
      expect(['2', '5'].map((id) => recordOf(store, id)?.accepted?.queuePosition)).toEqual(recorded);
    });

    it('sends the messages of a request of 3 keys in one SendMessageBatch call', async () => {
      const { calls, ports } = setup();
      await ingestEvents(
        request([event('a1', 'sub_a'), event('b1', 'sub_b'), event('c1', 'sub_c'), event('a2', 'sub_a'), event('b2', 'sub_b'), event('a3', 'sub_a')]),
        ports,
        { partitionCount: undefined },
      );
      expect(calls.map((call) => call.map((m) => [m.orderingKey, idsOf(m)]))).toEqual([
        [
          ['sub_a', ['a1', 'a2', 'a3']],
          ['sub_b', ['b1', 'b2']],
          ['sub_c', ['c1']],
        ],
      ]);
    });
  });

  describe('event ids, scoped per tenant and destination', () => {
    it('takes the same event_id from two tenants as two events, each enqueued, recorded and answered accepted', async () => {
      const { queue, ports, store } = setup();
      const other: IngestPorts = { ...ports, findSubscriptionRouting: async (ids) => new Map([...(await ports.findSubscriptionRouting(ids))].map(([id, routing]) => [id, id === 'sub_b' ? { ...routing, tenantId: 'tenant_2' } : routing])) };
      expect(await ingestEvents(request([event('order_1001', 'sub_a')]), other, { partitionCount: undefined })).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted' }] });
      expect(await ingestEvents(request([event('order_1001', 'sub_b', 'tenant_2')]), other, { partitionCount: undefined })).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted', message_group_id: messageGroupIdFor('sub_b', undefined) }] });
      expect(queue.map(idsOf)).toEqual([['order_1001'], ['order_1001']]);
      expect([...store.events.keys()].sort()).toEqual([namedEventId('order_1001', 'tenant_1', 'sub_a'), namedEventId('order_1001', 'tenant_2', 'sub_b')].sort());
    });

    it('takes the same event_id for two subscriptions of one tenant, in one request or two, as two events', async () => {
      const { queue, ports } = setup();
      expect(await ingestEvents(request([event('e1', 'sub_a'), event('e1', 'sub_b')]), ports, { partitionCount: undefined })).toMatchObject({ results: [{ status: 'accepted' }, { status: 'accepted' }] });
      expect(await ingestEvents(request([event('e2', 'sub_a')]), ports, { partitionCount: undefined })).toMatchObject({ results: [{ status: 'accepted' }] });
      expect(await ingestEvents(request([event('e2', 'sub_c')]), ports, { partitionCount: undefined })).toMatchObject({ results: [{ status: 'accepted' }] });
      expect(queue.map(idsOf)).toEqual([['e1'], ['e1'], ['e2'], ['e2']]);
    });

    it('refuses one request that repeats an event_id for the same tenant and destination', () => {
      expect(parseEventsRequest({ events: [event('e1', 'sub_a'), event('e1', 'sub_a')] })).toMatchObject({ ok: false, refusal: { code: 'invalid_request', details: [{ path: 'events[1].event_id' }] } });
    });

    it('refuses the whole request as event_id_conflict when an id comes back with another payload or type, enqueuing and recording nothing of it', async () => {
      const { queue, ports, store, intakes } = setup();
      await ingestEvents(request([event('e1', 'sub_a')]), ports, { partitionCount: undefined });
      const before = { messages: queue.length, writes: store.writes.length, intakes: intakes.length };
      for (const changed of [{ ...event('e1', 'sub_a'), payload: { id: 'e1', amount: 2 } }, { ...event('e1', 'sub_a'), type: 'thing.undone' }]) {
        const response = await ingestEvents(request([event('e0', 'sub_b'), changed, event('e2', 'sub_a')]), ports, { partitionCount: undefined });
        expect(response).toEqual({ kind: 'refused', reason: 'event_id_conflict', details: [{ path: 'events[1].event_id', message: expect.stringContaining('another type or payload') }] });
      }
      expect({ messages: queue.length, writes: store.writes.length, intakes: intakes.length }).toEqual(before);
    });

    it('answers duplicate, sending nothing, for the same id with the same type and payload', async () => {
      const { queue, ports } = setup();
      await ingestEvents(request([event('e1', 'sub_a')]), ports, { partitionCount: undefined });
      expect(await ingestEvents(request([event('e1', 'sub_a')]), ports, { partitionCount: undefined })).toMatchObject({ kind: 'accepted', results: [{ status: 'duplicate', message_group_id: messageGroupIdFor('sub_a', undefined) }] });
      expect(queue).toHaveLength(1);
    });

    it('refuses the one recorded second when two requests send one id with different payloads at once (neither read saw the other)', async () => {
      const { ports, store } = setup();
      const racing: IngestPorts = {
        ...ports,
        // The other request records its e1 between this one's read and its record.
        findRecorded: async (ids) => {
          const found = await store.findRecorded(ids);
          await store.recordAccepted({ eventId: namedEventId('e1', 'tenant_1', 'sub_a'), subscriptionId: 'sub_a', tenantId: 'tenant_1', orderingKey: 'sub_a', messageGroupId: messageGroupIdFor('sub_a', undefined), acceptedAt: now.toISOString(), fingerprint: 'theirs' });
          return found;
        },
      };
      expect(await ingestEvents(request([event('e1', 'sub_a')]), racing, { partitionCount: undefined })).toMatchObject({ kind: 'refused', reason: 'event_id_conflict', details: [{ path: 'events[0].event_id' }] });
    });

    it('finds an event recorded before ids were scoped as a duplicate while the upgrade window is open, and sends nothing of it', async () => {
      const { queue, ports, store } = setup();
      // As a stack before the upgrade recorded it: under the producer's id, with its tenant and subscription.
      await store.recordAccepted({ eventId: 'old_1', subscriptionId: 'sub_a', tenantId: 'tenant_1', orderingKey: 'sub_a', messageGroupId: messageGroupIdFor('sub_a', undefined), acceptedAt: '2026-12-01T00:00:00.000Z' });
      const open = { partitionCount: undefined, legacyEventIdsUntil: '2026-12-31T00:00:00Z' };
      expect(await ingestEvents(request([event('old_1', 'sub_a')]), ports, open)).toMatchObject({ results: [{ status: 'duplicate' }] });
      // Another subscription's event with that id is its own.
      expect(await ingestEvents(request([event('old_1', 'sub_b')]), ports, open)).toMatchObject({ results: [{ status: 'accepted' }] });
      expect(queue.map(idsOf)).toEqual([['old_1']]);
      // Once the window has closed, the old record is not looked up.
      expect(await ingestEvents(request([event('old_1', 'sub_a')]), ports, { partitionCount: undefined, legacyEventIdsUntil: '2026-12-02T11:59:59Z' })).toMatchObject({ results: [{ status: 'accepted' }] });
    });
  });
});

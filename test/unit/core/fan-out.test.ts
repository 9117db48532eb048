/**
 * Fan-out by event type (docs/api.md#fan-out-by-event-type): an event naming its tenant and no subscription goes to every
 * subscription of the tenant whose event_types take its type, each in its own key, once per event
 * id whatever the resends, and never to a subscription created after its first acceptance.
 */
import { describe, expect, it } from 'vitest';
import { parseEventsRequest, publicEventIdOf, readQueuedMessage, type EventsRequest, type QueuedEvent } from '../../../lambda/core/event.js';
import { fanOutEventId, fanOutRecordKey, namedEventId } from '../../../lambda/core/fan-out-id.js';
import { SendFailureKind } from '../../../lambda/core/enqueue-plan.js';
import { ingestEvents, MAX_DELIVERIES_PER_REQUEST, type FanOutRecord, type IngestPorts, type SubscriptionRouting } from '../../../lambda/core/ingest.js';
import { messageGroupIdFor, Ordering } from '../../../lambda/core/routing.js';
import { signWebhook } from '../../../lambda/core/webhook.js';
import { fakeQueue } from '../../support/fake-queue.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

const now = new Date('2026-12-04T12:00:00.000Z');

function request(events: Record<string, unknown>[]): EventsRequest {
  const parsed = parseEventsRequest({ events });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.refusal));
  return parsed.value;
}

const fanOut = (id: string, type: string, tenant = 'acme', extra: Record<string, unknown> = {}) => ({ event_id: id, tenant_id: tenant, type, payload: { id }, ...extra });

/** A tenant's subscriptions, changeable between requests; ingest wired to in-memory stores. */
function setup(initial: Record<string, SubscriptionRouting>) {
  const subscriptions = new Map(Object.entries(initial));
  const records = new Map<string, FanOutRecord>();
  const store = new InMemoryDeliveryStore();
  /** Ordering keys whose messages SQS refuses, for now. */
  const refusing = new Set<string>();
  const { queue, sendBatch } = fakeQueue((message) => refusing.has(message.orderingKey));
  let requests = 0;
  const ports: IngestPorts = {
    findSubscriptionRouting: async (ids) => new Map(ids.flatMap((id) => (subscriptions.has(id) ? [[id, subscriptions.get(id) as SubscriptionRouting] as const] : []))),
    findTenantSubscriptions: async (tenantIds) => new Map(tenantIds.map((tenant) => [tenant, new Map([...subscriptions].filter(([, routing]) => routing.tenantId === tenant))])),
    findFanOuts: async (keys) => new Map(keys.flatMap((key) => (records.has(key) ? [[key, records.get(key) as FanOutRecord] as const] : []))),
    recordFanOut: async (record) => {
      const key = fanOutRecordKey(record.eventId, record.tenantId);
      const stands = records.get(key) ?? record;
      records.set(key, stands);
      return stands;
    },
    recordAccepted: store.recordAccepted,
    recordGroupIntake: async () => undefined,
    sendBatch,
    now: () => now,
    uniqueId: () => `request${(requests += 1)}`,
  };
  /** Every queued delivery so far, in queue order. */
  const queued = (): QueuedEvent[] =>
    queue.flatMap((message) => {
      const read = readQueuedMessage(message.body);
      if ('reason' in read) throw new Error(read.reason);
      return read.items.map((item) => {
        if (!('queued' in item)) throw new Error(item.reason);
        return item.queued;
      });
    });
  return { subscriptions, records, refusing, ports, queued, ingest: (events: Record<string, unknown>[]) => ingestEvents(request(events), ports, { partitionCount: undefined }) };
}

const bySubscription = { tenantId: 'acme', ordering: Ordering.subscription } as const;

describe('fan-out by event type', () => {
  it('delivers to every subscription of the tenant whose event_types take the type, each in its own key, in request order', async () => {
    const { ingest, queued } = setup({
      all: bySubscription,
      orders: { ...bySubscription, eventTypes: ['order.paid', 'order.shipped'] },
      invoices: { ...bySubscription, eventTypes: ['invoice.sent'] },
      other_tenant: { tenantId: 'globex', ordering: Ordering.subscription },
    });
    const outcome = await ingest([fanOut('e1', 'order.paid'), fanOut('e2', 'invoice.sent'), fanOut('e3', 'order.shipped')]);
    expect(outcome).toEqual({
      kind: 'accepted',
      results: [
        { event_id: 'e1', status: 'accepted', message_group_id: null, deliveries: ['all', 'orders'].map((id) => ({ subscription_id: id, status: 'accepted', message_group_id: messageGroupIdFor(id, undefined) })) },
        { event_id: 'e2', status: 'accepted', message_group_id: null, deliveries: ['all', 'invoices'].map((id) => ({ subscription_id: id, status: 'accepted', message_group_id: messageGroupIdFor(id, undefined) })) },
        { event_id: 'e3', status: 'accepted', message_group_id: null, deliveries: ['all', 'orders'].map((id) => ({ subscription_id: id, status: 'accepted', message_group_id: messageGroupIdFor(id, undefined) })) },
      ],
    });
    const perSubscription = (id: string) => queued().filter((q) => q.event.subscription_id === id).map(publicEventIdOf);
    expect([perSubscription('all'), perSubscription('orders'), perSubscription('invoices'), perSubscription('other_tenant')]).toEqual([['e1', 'e2', 'e3'], ['e1', 'e3'], ['e2'], []]);
    // Each delivery goes by an id of its own inside the service, and carries the event's own to the receiver.
    const [first] = queued();
    expect(first?.event.event_id).toBe(fanOutEventId('e1', 'all'));
    expect(first?.fan_out).toEqual({ event_id: 'e1' });
    const webhook = signWebhook({ queued: first as QueuedEvent, sequence: 1, previousSequence: 0, secrets: ['whsec_' + Buffer.alloc(32, 1).toString('base64')], attemptedAt: now });
    expect(webhook.headers['webhook-id']).toBe('e1');
  });

  it('answers a resend duplicate for every delivery, and never reaches a subscription created after the first acceptance', async () => {
    const { ingest, subscriptions, queued } = setup({ all: bySubscription });
    await ingest([fanOut('e1', 'order.paid')]);
    subscriptions.set('late', bySubscription);
    const resent = await ingest([fanOut('e1', 'order.paid')]);
    expect(resent).toMatchObject({ kind: 'accepted', results: [{ event_id: 'e1', status: 'duplicate', deliveries: [{ subscription_id: 'all', status: 'duplicate' }] }] });
    expect(queued().some((q) => q.event.subscription_id === 'late')).toBe(false);
    // A new event reaches it.
    expect(await ingest([fanOut('e2', 'order.paid')])).toMatchObject({ results: [{ deliveries: [{ subscription_id: 'all' }, { subscription_id: 'late' }] }] });
  });

  it('holds a fan-out whole while one of its subscriptions is changing its ordering, and a resend once it is made reaches every one', async () => {
    const { ingest, subscriptions, queued } = setup({ a: bySubscription, b: { ...bySubscription, orderingChange: { ordering: Ordering.resource, startedAt: now.toISOString() } } });
    expect(await ingest([fanOut('e1', 't')])).toEqual({ kind: 'paused', retryAfterSeconds: 5, orderingChanges: ['b'] });
    expect(queued()).toEqual([]);
    subscriptions.set('b', bySubscription);
    expect(await ingest([fanOut('e1', 't')])).toMatchObject({ kind: 'accepted', results: [{ deliveries: [{ subscription_id: 'a', status: 'accepted' }, { subscription_id: 'b', status: 'accepted' }] }] });
  });

  it('answers a partial failure per delivery, enqueues nothing of a refused key after it, and a resend completes it once', async () => {
    const { ingest, refusing, queued } = setup({ a: bySubscription, b: bySubscription });
    refusing.add('b');
    const first = await ingest([fanOut('e1', 't'), fanOut('e2', 't')]);
    expect(first).toMatchObject({
      kind: 'partly_enqueued',
      results: [
        { event_id: 'e1', status: 'failed', deliveries: [{ subscription_id: 'a', status: 'accepted' }, { subscription_id: 'b', status: 'failed' }] },
        { event_id: 'e2', status: 'failed', deliveries: [{ subscription_id: 'a', status: 'accepted' }, { subscription_id: 'b', status: 'failed' }] },
      ],
    });
    refusing.clear();
    const resent = await ingest([fanOut('e1', 't'), fanOut('e2', 't')]);
    expect(resent).toMatchObject({ kind: 'accepted', results: [{ status: 'accepted', deliveries: [{ status: 'duplicate' }, { status: 'accepted' }] }, { status: 'accepted', deliveries: [{ status: 'duplicate' }, { status: 'accepted' }] }] });
    // b got each event once, in order; a's copies from the resend are skipped by the consumer as copies of recorded ones.
    expect(queued().filter((q) => q.event.subscription_id === 'b').map(publicEventIdOf)).toEqual(['e1', 'e2']);
  });

  it('accepts an event no subscription takes, saying so with an empty delivery list', async () => {
    const { ingest, queued } = setup({ orders: { ...bySubscription, eventTypes: ['order.paid'] } });
    expect(await ingest([fanOut('e1', 'invoice.sent')])).toEqual({ kind: 'accepted', results: [{ event_id: 'e1', status: 'accepted', message_group_id: null, deliveries: [] }] });
    expect(queued()).toEqual([]);
  });

  it('keeps a fan-out and an event naming a subscription apart, beside each other in a request, and by event id', async () => {
    const { ingest, queued } = setup({ all: bySubscription, direct: bySubscription });
    const outcome = await ingest([fanOut('e1', 't'), { event_id: 'e2', tenant_id: 'acme', subscription_id: 'direct', type: 't', payload: {} }]);
    expect(outcome).toMatchObject({ kind: 'accepted', results: [{ event_id: 'e1', status: 'accepted', deliveries: [{ subscription_id: 'all' }, { subscription_id: 'direct' }] }, { event_id: 'e2', status: 'accepted', message_group_id: messageGroupIdFor('direct', undefined) }] });
    // The same id again, naming a subscription: an event of its own, not a resend of the fan-out.
    expect(await ingest([{ event_id: 'e1', tenant_id: 'acme', subscription_id: 'direct', type: 't', payload: {} }])).toMatchObject({ results: [{ event_id: 'e1', status: 'accepted' }] });
    expect(queued().map((q) => q.event.event_id)).toEqual([fanOutEventId('e1', 'all'), fanOutEventId('e1', 'direct'), namedEventId('e2', 'acme', 'direct'), namedEventId('e1', 'acme', 'direct')]);
  });

  it('takes an event id another tenant fanned out as a fan-out of its own', async () => {
    const { ingest, queued } = setup({ all: bySubscription, theirs: { tenantId: 'globex', ordering: Ordering.subscription } });
    expect(await ingest([fanOut('e1', 't', 'globex')])).toMatchObject({ kind: 'accepted', results: [{ deliveries: [{ subscription_id: 'theirs', status: 'accepted' }] }] });
    expect(await ingest([fanOut('e1', 't')])).toMatchObject({ kind: 'accepted', results: [{ deliveries: [{ subscription_id: 'all', status: 'accepted' }] }] });
    expect(queued().map((q) => [q.event.subscription_id, publicEventIdOf(q)])).toEqual([['theirs', 'e1'], ['all', 'e1']]);
  });

  it('refuses a fan-out sent again with another payload or type as event_id_conflict, enqueuing nothing', async () => {
    const { ingest, queued } = setup({ all: bySubscription });
    await ingest([fanOut('e1', 't')]);
    const before = queued().length;
    for (const changed of [{ ...fanOut('e1', 't'), payload: { changed: true } }, fanOut('e1', 'other.type')]) {
      expect(await ingest([changed])).toEqual({ kind: 'refused', reason: 'event_id_conflict', details: [{ path: 'events[0].event_id', message: expect.stringContaining('another type or payload') }] });
    }
    expect(queued()).toHaveLength(before);
  });

  it('refuses, enqueuing nothing, a fan-out another request of its tenant recorded at the same moment with another payload', async () => {
    const { ports, queued } = setup({ all: bySubscription });
    // The other request records it between this one's read and its write.
    const racing: IngestPorts = { ...ports, recordFanOut: async (record) => ({ ...record, fingerprint: 'theirs' }) };
    expect(await ingestEvents(request([fanOut('e1', 't')]), racing, { partitionCount: undefined })).toEqual({ kind: 'refused', reason: 'event_id_conflict', details: [{ path: 'events[0].event_id', message: expect.stringContaining('another type or payload') }] });
    expect(queued()).toEqual([]);
  });

  it('takes the subscriptions another request of the same tenant recorded first, and never one of another tenant', async () => {
    const { ports, queued } = setup({ a: bySubscription, b: bySubscription, theirs: { tenantId: 'globex', ordering: Ordering.subscription } });
    const racing: IngestPorts = { ...ports, recordFanOut: async (record) => ({ ...record, subscriptionIds: ['b', 'theirs'] }) };
    expect(await ingestEvents(request([fanOut('e1', 't')]), racing, { partitionCount: undefined })).toMatchObject({ kind: 'accepted', results: [{ deliveries: [{ subscription_id: 'b' }] }] });
    expect(queued().map((q) => q.event.subscription_id)).toEqual(['b']);
  });

  it('records nothing of a request it refuses: its resend, corrected, goes to the subscriptions of then', async () => {
    const { ingest, records, subscriptions } = setup({ a: { ...bySubscription, ordering: Ordering.resource } });
    expect(await ingest([fanOut('e1', 't')])).toMatchObject({ kind: 'refused' });
    expect(records.size).toBe(0);
    subscriptions.set('late', bySubscription);
    expect(await ingest([fanOut('e1', 't', 'acme', { resource_id: 'r1' })])).toMatchObject({ kind: 'accepted', results: [{ deliveries: [{ subscription_id: 'a' }, { subscription_id: 'late' }] }] });
  });

  it('names a fan-out refused by the queue for good when one of its deliveries was, whatever the others met', async () => {
    const { ports } = setup({ a: bySubscription, b: bySubscription });
    // a's message refused for good, b's (the later delivery of the same event) for a moment.
    const refusedForGood: IngestPorts['sendBatch'] = async (entries) => ({
      refused: new Map(entries.map((entry) => [entry.index, entry.orderingKey === 'a' ? { kind: SendFailureKind.messageRefused, code: 'InvalidMessageContents' } : { kind: SendFailureKind.transient, code: 'ServiceUnavailable' }])),
      sequenceNumbers: new Map(),
    });
    const outcome = await ingestEvents(request([fanOut('e1', 't')]), { ...ports, sendBatch: refusedForGood }, { partitionCount: undefined });
    expect(outcome).toMatchObject({ kind: 'enqueue_refused', blame: 'message_refused', details: [{ path: 'events[0].event_id' }] });
  });

  it('refuses a fan-out to a subscription ordered by resource when the event has no resource_id, naming it once', async () => {
    const { ingest } = setup({ a: { ...bySubscription, ordering: Ordering.resource }, b: { ...bySubscription, ordering: Ordering.resource } });
    expect(await ingest([fanOut('e1', 't')])).toMatchObject({ kind: 'refused', reason: 'invalid_request', details: [{ path: 'events[0].resource_id' }] });
  });

  it('checks the key of every subscription ordered by resource, not only the first one’s', async () => {
    // 128 control characters, six bytes each once JSON-escaped in the key.
    const long = '\u0001'.repeat(128);
    const { ingest } = setup({ a: { ...bySubscription, ordering: Ordering.resource }, [long]: { ...bySubscription, ordering: Ordering.resource } });
    // Fits beside "a", not beside that subscription id.
    const outcome = await ingest([fanOut('e1', 't', 'acme', { resource_id: '\u0001'.repeat(256) })]);
    expect(outcome).toMatchObject({ kind: 'refused', reason: 'invalid_request', details: [{ path: 'events[0].resource_id', message: expect.stringContaining('ordering key of more than') }] });
  });

  it(`refuses a request of more than ${MAX_DELIVERIES_PER_REQUEST} deliveries, counting a fan-out once per subscription`, async () => {
    const tenant = Object.fromEntries(Array.from({ length: 200 }, (_, n) => [`s${String(n).padStart(3, '0')}`, bySubscription]));
    const { ingest } = setup(tenant);
    expect(await ingest(Array.from({ length: 10 }, (_, n) => fanOut(`ok${n}`, 't')))).toMatchObject({ kind: 'accepted' });
    const refused = await ingest(Array.from({ length: 11 }, (_, n) => fanOut(`e${n}`, 't')));
    expect(refused).toEqual({ kind: 'refused', reason: 'invalid_request', details: [{ path: 'events', message: expect.stringContaining('2200 deliveries') }] });
  });

  it('refuses a queued fan-out delivery whose id is not its event and subscription’s', () => {
    const body = (eventId: string) => JSON.stringify({ version: 1, event: { event_id: eventId, tenant_id: 'acme', subscription_id: 'all', type: 't', payload: {} }, ordering_key: 'all', message_group_id: 'g', accepted_at: now.toISOString(), fan_out: { event_id: 'e1' } });
    expect(readQueuedMessage(body(fanOutEventId('e1', 'all')))).toHaveProperty('items');
    expect(readQueuedMessage(body(fanOutEventId('e1', 'other')))).toHaveProperty('reason');
    expect(readQueuedMessage(body('e1'))).toHaveProperty('reason');
  });
});

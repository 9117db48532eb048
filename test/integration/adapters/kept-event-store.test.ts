/**
 * The kept-event store (bodies and run numbers for a replay) on dynalite, in the DeadLetters table
 * beside dead letters: windows, paging, the numbers of a run found from any of its events' places,
 * and the dead letters' lists and counts untouched by what it keeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeadLetterStore } from '../../../lambda/adapters/dead-letter-store.js';
import { createKeptEventStore } from '../../../lambda/adapters/kept-event-store.js';
import { randomBytes } from 'node:crypto';
import { encodeQueuedEvent, messageOfBodies, type QueuedEvent } from '../../../lambda/core/event.js';
import type { KeptEvent, KeptEventStore } from '../../../lambda/core/kept-event.js';
import { numberIn } from '../../../lambda/core/kept-event.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';
import { queuePositionOf } from '../../../lambda/core/delivery.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';
import { inMemoryPayloads } from '../support/payloads.js';

let tables: DynaliteTables;
let store: KeptEventStore;
const payloads = inMemoryPayloads();
const { objects } = payloads;

let uniqueCount = 0;
function uniqueId(prefix: string): string {
  uniqueCount += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${uniqueCount}`;
}

function keptOf(input: { subscriptionId: string; eventId: string; acceptedAt: string; sequenceNumber?: string; payload?: Record<string, unknown> }): KeptEvent {
  const group = messageGroupIdFor(input.subscriptionId, undefined);
  const queued: QueuedEvent = {
    version: 1,
    event: { event_id: input.eventId, tenant_id: 'tenant', subscription_id: input.subscriptionId, type: 'order.updated', payload_json: JSON.stringify(input.payload ?? { n: input.eventId }) },
    ordering_key: input.subscriptionId,
    message_group_id: group,
    accepted_at: input.acceptedAt,
  };
  return { queued, queuePosition: input.sequenceNumber === undefined ? undefined : queuePositionOf({ messageGroupId: group, sequenceNumber: input.sequenceNumber }) };
}

async function keep(event: KeptEvent): Promise<void> {
  await store.keep({ events: [event], body: encodeQueuedEvent(event.queued) });
}

async function readAll(input: { subscriptionId: string; since: string; until: string; limit: number }): Promise<KeptEvent[]> {
  const events: KeptEvent[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await store.readWindow({ ...input, after });
    // `limit` counts kept messages: a pack holds several events.
    expect(page.events.length).toBeLessThanOrEqual(input.limit * 10);
    // Each event carries its kept message's place, where a page after it starts.
    for (const event of page.events) expect(event.cursor).toMatch(/^!event#/);
    events.push(...page.events.map(({ cursor: _cursor, ...event }) => event));
    if (page.nextAfter === undefined) return events;
    after = page.nextAfter;
  }
  throw new Error('paging never ended');
}

beforeAll(async () => {
  tables = await startDynaliteTables();
  store = createKeptEventStore(tables.dynamo, { tableName: TABLES.deadLetters.localName, retentionDays: 7, payloads });
});

afterAll(async () => {
  await tables.stop();
});

describe('kept events', () => {
  it('reads back exactly the events accepted inside a window, bounds included, in acceptance order, page by page', async () => {
    const subscriptionId = uniqueId('sub');
    const times = ['2026-12-04T10:00:00.000Z', '2026-12-04T10:00:01.000Z', '2026-12-04T10:00:01.000Z', '2026-12-04T10:00:02.000Z', '2026-12-04T10:00:03.000Z'];
    const events = times.map((acceptedAt, index) => keptOf({ subscriptionId, eventId: `evt-${index}`, acceptedAt, sequenceNumber: String(100 + index) }));
    // Kept out of order: the store sorts them.
    for (const event of [...events].reverse()) await keep(event);
    await keep(keptOf({ subscriptionId: uniqueId('other'), eventId: 'evt-x', acceptedAt: times[1] ?? '' }));

    const window = await readAll({ subscriptionId, since: '2026-12-04T10:00:01.000Z', until: '2026-12-04T10:00:02.000Z', limit: 2 });
    expect(window).toEqual([events[1], events[2], events[3]]);
    expect(await readAll({ subscriptionId, since: '2026-12-04T09:00:00.000Z', until: '2026-12-04T11:00:00.000Z', limit: 10 })).toEqual(events);
    expect(await readAll({ subscriptionId, since: '2026-12-04T10:00:04.000Z', until: '2026-12-04T11:00:00.000Z', limit: 10 })).toEqual([]);
  });

  it("keeps a pack's events in one item, each with its place in the pack", async () => {
    const subscriptionId = uniqueId('sub');
    const group = messageGroupIdFor(subscriptionId, undefined);
    const events = [1, 2, 3].map((n, indexInMessage) => ({
      ...keptOf({ subscriptionId, eventId: `evt-${n}`, acceptedAt: '2026-12-04T10:00:00.000Z' }),
      queuePosition: queuePositionOf({ messageGroupId: group, sequenceNumber: '42', indexInMessage }),
    }));
    const [first, ...rest] = events;
    if (first === undefined) throw new Error('no event');
    await store.keep({ events: [first, ...rest], body: messageOfBodies([encodeQueuedEvent(first.queued), ...rest.map((event) => encodeQueuedEvent(event.queued))]) });
    expect(await readAll({ subscriptionId, since: '2026-12-04T10:00:00.000Z', until: '2026-12-04T10:00:00.000Z', limit: 1 })).toEqual(events);
  });

  it('keeps an event without a place in the queue, and one too large for an item even compressed in the payload store', async () => {
    const subscriptionId = uniqueId('sub');
    const small = keptOf({ subscriptionId, eventId: 'evt-small', acceptedAt: '2026-12-04T10:00:00.000Z' });
    // Random bytes do not compress: over 350 KB gzipped.
    const large = keptOf({ subscriptionId, eventId: 'evt-large', acceptedAt: '2026-12-04T10:00:01.000Z', sequenceNumber: '7', payload: { text: randomBytes(400_000).toString('base64') } });
    await keep(small);
    await keep(large);
    const stored = [...objects.keys()].filter((key) => key.includes(encodeURIComponent(subscriptionId)));
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatch(/^dead-letters\//);
    expect(await readAll({ subscriptionId, since: '2026-12-04T10:00:00.000Z', until: '2026-12-04T10:00:01.000Z', limit: 10 })).toEqual([small, large]);
  });

  it("tells when a subscription's newest kept event was accepted, past its runs' numbers kept beside them, and nothing for one with none", async () => {
    const subscriptionId = uniqueId('sub');
    expect(await store.newestAcceptedAt(subscriptionId)).toBeUndefined();
    for (const [index, acceptedAt] of ['2026-12-04T10:00:02.000Z', '2026-12-04T10:00:09.500Z', '2026-12-04T10:00:01.000Z'].entries()) {
      await keep(keptOf({ subscriptionId, eventId: `evt-${index}`, acceptedAt, sequenceNumber: String(100 + index) }));
    }
    await store.keepNumbers({ subscriptionId, orderingKey: subscriptionId, firstPosition: 'g/1', firstSequence: 1, eventIds: ['evt-0'], at: '2026-12-04T10:00:30.000Z' });
    expect(await store.newestAcceptedAt(subscriptionId)).toBe('2026-12-04T10:00:09.500Z');
  });

  it("finds a run's numbers from the place of any of its events, in its group alone", async () => {
    const subscriptionId = uniqueId('sub');
    const orderingKey = subscriptionId;
    const place = (group: string, sequenceNumber: string, indexInMessage?: number) => queuePositionOf({ messageGroupId: group, sequenceNumber, ...(indexInMessage === undefined ? {} : { indexInMessage }) });
    const group = messageGroupIdFor(orderingKey, undefined);
    const at = '2026-12-04T10:00:00.000Z';
    await store.keepNumbers({ subscriptionId, orderingKey, firstPosition: place(group, '1000'), firstSequence: 1, eventIds: ['a', 'b', 'c'], at });
    await store.keepNumbers({ subscriptionId, orderingKey, firstPosition: place(group, '2000', 0), firstSequence: 4, eventIds: ['d', 'e'], at });
    await store.keepNumbers({ subscriptionId, orderingKey, firstPosition: place('partition-1', '1500'), firstSequence: 9, eventIds: ['z'], at });

    const runAt = (queuePosition: string) => store.findNumbers({ subscriptionId, orderingKey, queuePosition });
    expect(numberIn(await runAt(place(group, '1000')), 'a')).toBe(1);
    expect(numberIn(await runAt(place(group, '1200')), 'c')).toBe(3);
    expect(numberIn(await runAt(place(group, '2000', 1)), 'e')).toBe(5);
    // A pack's later event sorts after its message's first: the run that starts there holds it.
    expect(numberIn(await runAt(place(group, '2000', 0)), 'd')).toBe(4);
    expect(await runAt(place(group, '0999'))).toBeUndefined();
    // Another group's run is not this group's, whatever the order of their numbers.
    expect(numberIn(await runAt(place('partition-1', '1600')), 'z')).toBe(9);
    expect(await runAt(place('partition-0', '9999'))).toBeUndefined();
    expect(await store.findNumbers({ subscriptionId, orderingKey: `${orderingKey}-other`, queuePosition: place(group, '2000') })).toBeUndefined();
  });

  it("never shows among a subscription's dead letters, nor in their count", async () => {
    const subscriptionId = uniqueId('sub');
    const deadLetters = createDeadLetterStore(tables.dynamo, { tableName: TABLES.deadLetters.localName, ttlDays: 30, payloads });
    const kept = keptOf({ subscriptionId, eventId: 'evt-kept', acceptedAt: '2026-12-04T10:00:00.000Z', sequenceNumber: '5' });
    await keep(kept);
    await store.keepNumbers({ subscriptionId, orderingKey: subscriptionId, firstPosition: kept.queuePosition ?? '', firstSequence: 1, eventIds: ['evt-kept'], at: kept.queued.accepted_at });
    await deadLetters.put({ queued: { ...kept.queued, event: { ...kept.queued.event, event_id: 'evt-dead' } }, sequence: 2, attempts: 3, reason: 'HTTP 500', deadLetteredAt: '2026-12-04T10:01:00.000Z' });

    const page = await deadLetters.readPage({ subscriptionId, after: undefined, limit: 10 });
    expect(page.letters.map((letter) => letter.queued.event.event_id)).toEqual(['evt-dead']);
    const rows = await deadLetters.listRows({ subscriptionId, after: undefined, limit: 10 });
    expect(rows.rows.map((row) => row.event_id)).toEqual(['evt-dead']);
    expect(await deadLetters.count(subscriptionId)).toBe(1);
  });
});

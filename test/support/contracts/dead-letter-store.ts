/**
 * The rules of the store of dead letters that the consumer, redrive and the backstop import rely
 * on, as one suite for the in-memory fake (test/unit) and the DynamoDB adapter on dynalite
 * (test/integration/adapters). Fix the fake or report the adapter; never loosen the suite.
 */
import { describe, expect, it } from 'vitest';
import { positionOf, RemoveOutcome, type DeadLetter, type DeadLetterStore, type StoredDeadLetter } from '../../../lambda/core/dead-letter.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';

const T0 = '2026-12-02T12:00:00.000Z';
const T1 = '2026-12-02T12:01:00.000Z';
const T2 = '2026-12-02T12:02:00.000Z';

let uniqueCount = 0;
function uniqueId(prefix: string): string {
  uniqueCount += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${uniqueCount}`;
}

function letterOf(input: { subscriptionId: string; orderingKey: string; eventId: string; sequence: number | undefined; deadLetteredAt?: string; acceptedAt?: string; payload?: Record<string, unknown> }): DeadLetter {
  const queued: QueuedEvent = {
    version: 1,
    event: { event_id: input.eventId, tenant_id: 'tenant', subscription_id: input.subscriptionId, type: 'order.updated', payload_json: JSON.stringify(input.payload ?? { n: 1 }) },
    ordering_key: input.orderingKey,
    message_group_id: messageGroupIdFor(input.orderingKey, undefined),
    accepted_at: input.acceptedAt ?? T0,
  };
  return { queued, sequence: input.sequence, attempts: 3, reason: 'HTTP 500', deadLetteredAt: input.deadLetteredAt ?? T1 };
}

/** Every letter of a subscription, page after page, as redrive and the list read them. */
async function readAll(store: DeadLetterStore, subscriptionId: string, limit: number): Promise<StoredDeadLetter[]> {
  const letters: StoredDeadLetter[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await store.readPage({ subscriptionId, after, limit });
    expect(page.letters.length).toBeLessThanOrEqual(limit);
    letters.push(...page.letters);
    if (page.nextAfter === undefined) return letters;
    after = page.nextAfter;
  }
  throw new Error('paging never ended');
}

export function describeDeadLetterStoreContract(name: string, makeStore: () => DeadLetterStore): void {
  describe(`dead-letter store contract: ${name}`, () => {
    it('reads back a dead letter whole, with where it sits and where it died', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      const letter = letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 4 });
      await store.put(letter);
      const page = await store.readPage({ subscriptionId, after: undefined, limit: 10 });
      expect(page).toEqual({
        letters: [{ ...letter, subscriptionId, position: positionOf(letter), orderingKey: 'key-a', messageGroupId: messageGroupIdFor('key-a', undefined) }],
        nextAfter: undefined,
      });
      expect(await store.count(subscriptionId)).toBe(1);
    });

    it('rewrites a dead letter in place and counts it once when the same event is dead-lettered again', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      await store.put(letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 4, deadLetteredAt: T1 }));
      await store.put(letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 4, deadLetteredAt: T2 }));
      const letters = await readAll(store, subscriptionId, 10);
      expect(letters.map((l) => l.deadLetteredAt)).toEqual([T2]);
      expect(await store.count(subscriptionId)).toBe(1);
    });

    it('pages through a subscription in position order: by key, then sequence, unnumbered last by acceptance', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      const written = [
        letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'a-10', sequence: 10 }),
        letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'a-x', sequence: undefined, acceptedAt: '2026-12-02T11:00:00.000Z' }),
        letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'a-9', sequence: 9 }),
        letterOf({ subscriptionId, orderingKey: 'key-b', eventId: 'b-2', sequence: 2 }),
        letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'a-2', sequence: 2 }),
        letterOf({ subscriptionId, orderingKey: 'key-b', eventId: 'b-1', sequence: 1 }),
      ];
      // Written in an order of their own, and one at a time: the store sorts them.
      for (const letter of written) await store.put(letter);
      const expected = written.map(positionOf).sort();
      for (const limit of [1, 2, 4, 6, 10]) {
        expect((await readAll(store, subscriptionId, limit)).map((l) => l.position)).toEqual(expected);
      }
      const ofKeyA = (await readAll(store, subscriptionId, 10)).filter((l) => l.orderingKey === 'key-a').map((l) => l.queued.event.event_id);
      expect(ofKeyA).toEqual(['a-2', 'a-9', 'a-10', 'a-x']);
    });

    it('answers an empty last page after the last position, and an empty one for a subscription without dead letters', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      const letter = letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 1 });
      await store.put(letter);
      expect(await store.readPage({ subscriptionId, after: positionOf(letter), limit: 10 })).toEqual({ letters: [], nextAfter: undefined });
      expect(await store.readPage({ subscriptionId: uniqueId('sub'), after: undefined, limit: 10 })).toEqual({ letters: [], nextAfter: undefined });
      expect(await store.count(uniqueId('sub'))).toBe(0);
    });

    it('keeps subscriptions apart', async () => {
      const store = makeStore();
      const first = uniqueId('sub');
      const second = uniqueId('sub');
      await store.put(letterOf({ subscriptionId: first, orderingKey: 'key-a', eventId: 'evt-1', sequence: 1 }));
      await store.put(letterOf({ subscriptionId: second, orderingKey: 'key-a', eventId: 'evt-2', sequence: 1 }));
      await store.put(letterOf({ subscriptionId: second, orderingKey: 'key-a', eventId: 'evt-3', sequence: 2 }));
      expect((await readAll(store, first, 10)).map((l) => l.queued.event.event_id)).toEqual(['evt-1']);
      expect(await store.count(first)).toBe(1);
      expect(await store.count(second)).toBe(2);
    });

    it('removes the dead letter that was read, and uncounts it once', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      await store.put(letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 1 }));
      await store.put(letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-2', sequence: 2 }));
      const [read] = await readAll(store, subscriptionId, 10);
      if (read === undefined) throw new Error('no dead letter read');
      expect(await store.remove(read)).toBe(RemoveOutcome.removed);
      expect(await store.remove(read)).toBe(RemoveOutcome.gone);
      expect((await readAll(store, subscriptionId, 10)).map((l) => l.queued.event.event_id)).toEqual(['evt-2']);
      expect(await store.count(subscriptionId)).toBe(1);
    });

    it('refuses to remove a dead letter given up again since it was read, and keeps the new one', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      await store.put(letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 1, deadLetteredAt: T1 }));
      const [stale] = await readAll(store, subscriptionId, 10);
      if (stale === undefined) throw new Error('no dead letter read');
      await store.put(letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 1, deadLetteredAt: T2 }));
      expect(await store.remove(stale)).toBe(RemoveOutcome.replaced);
      expect((await readAll(store, subscriptionId, 10)).map((l) => l.deadLetteredAt)).toEqual([T2]);
      expect(await store.count(subscriptionId)).toBe(1);
    });

    it('refuses to remove a dead letter given up again since it was read at the very same time on another clock, and keeps the new one', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      const first = letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-1', sequence: 1, deadLetteredAt: T1 });
      await store.put(first);
      const [stale] = await readAll(store, subscriptionId, 10);
      if (stale === undefined) throw new Error('no dead letter read');
      // Its redrive's copy given up again by a consumer whose clock reads what the first one's did.
      const again: DeadLetter = { ...first, queued: { ...first.queued, redrive: { sequence: 1, redriven_at: T2, give_up: 1 } } };
      await store.put(again);
      expect(await store.remove(stale)).toBe(RemoveOutcome.replaced);
      expect((await readAll(store, subscriptionId, 10)).map((l) => l.queued.redrive?.give_up)).toEqual([1]);
      expect(await store.count(subscriptionId)).toBe(1);
    });

    it('keeps an event too large for a store item whole, and removes it', async () => {
      const store = makeStore();
      const subscriptionId = uniqueId('sub');
      // Over the adapter's 350 000-byte inline limit: kept in the payload store, pointed at.
      const letter = letterOf({ subscriptionId, orderingKey: 'key-a', eventId: 'evt-big', sequence: 1, payload: { blob: 'x'.repeat(360_000) } });
      await store.put(letter);
      const [read] = await readAll(store, subscriptionId, 10);
      expect(read?.queued).toEqual(letter.queued);
      if (read === undefined) throw new Error('no dead letter read');
      expect(await store.remove(read)).toBe(RemoveOutcome.removed);
      expect(await store.count(subscriptionId)).toBe(0);
    });
  });
}

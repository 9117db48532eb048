import { describe, expect, it } from 'vitest';
import {
  allBucketNamesOf,
  countInMinute,
  MINUTE_COUNT_SPAN,
  minuteOf,
  planBucketUpdate,
  RATE_RING_MINUTES,
  RateCounter,
  ratesOfLastFullMinute,
  type BucketUpdate,
  type RateBuckets,
} from '../../../lambda/core/group-rates.js';

/** What DynamoDB does with a plan: `SET add = if_not_exists(add, base) + events REMOVE remove`. */
function apply(item: RateBuckets, update: BucketUpdate): RateBuckets {
  const next: Record<string, number> = { ...item };
  for (const name of update.remove) delete next[name];
  next[update.add.name] = (item[update.add.name] ?? update.add.base) + update.add.events;
  return next;
}

/** The ring after writes of `[minute, events]`, one after another. */
function afterWrites(writes: readonly (readonly [number, number])[], counter: RateCounter = RateCounter.accepted): RateBuckets {
  return writes.reduce<RateBuckets>((item, [minute, events]) => apply(item, planBucketUpdate(counter, minute, events)), {});
}

const M = minuteOf(new Date('2026-12-03T17:00:00.000Z'));

describe('planBucketUpdate', () => {
  it('adds to its minute’s bucket and removes every slot but its own and its neighbours’', () => {
    const update = planBucketUpdate(RateCounter.delivered, M, 7);
    expect(update.add).toEqual({ name: `delivered_m${M % RATE_RING_MINUTES}`, base: (M % 10_000_000) * MINUTE_COUNT_SPAN, events: 7 });
    expect(update.remove).toHaveLength(RATE_RING_MINUTES - 3);
    expect(new Set([...update.remove, update.add.name, `delivered_m${(M - 1) % RATE_RING_MINUTES}`, `delivered_m${(M + 1) % RATE_RING_MINUTES}`])).toEqual(
      new Set(allBucketNamesOf(RateCounter.delivered)),
    );
  });

  it('keeps every value an exact integer of a JavaScript number', () => {
    const update = planBucketUpdate(RateCounter.accepted, M, MINUTE_COUNT_SPAN - 1);
    expect(Number.isSafeInteger(update.add.base + update.add.events)).toBe(true);
  });
});

describe('countInMinute', () => {
  it.each([
    { case: 'the writes of one minute, summed', writes: [[M, 3], [M, 4]], minute: M, count: 7 },
    { case: 'the previous minute, while the next one counts', writes: [[M, 5], [M + 1, 2]], minute: M, count: 5 },
    { case: 'a minute without writes: 0, not the minute before', writes: [[M, 5], [M + 2, 1]], minute: M + 1, count: 0 },
    { case: 'a minute read a ring later: 0, not its leftover', writes: [[M, 5]], minute: M + RATE_RING_MINUTES, count: 0 },
    { case: 'a minute after three idle hours: its own count only', writes: [[M, 50], [M + 180 + 7, 2]], minute: M + 187, count: 2 },
    { case: 'a minute after a pause of exactly a ring: its own count only', writes: [[M, 50], [M + RATE_RING_MINUTES, 2], [M + RATE_RING_MINUTES + 1, 1]], minute: M + RATE_RING_MINUTES + 1, count: 1 },
    { case: 'a late write of the minute before: the newer minute’s count kept', writes: [[M + 1, 4], [M, 1], [M + 1, 2]], minute: M + 1, count: 6 },
    { case: 'a minute of no group at all', writes: [], minute: M, count: 0 },
  ] as const)('is $case', ({ writes, minute, count }) => {
    expect(countInMinute(afterWrites(writes), RateCounter.accepted, minute)).toBe(count);
  });

  it('never reads a leftover as a count, even in the one case it undercounts: a pause landing on the leftover’s slot', () => {
    // The pause ends on the slot of the last minute before it: the bucket holds that minute's tag.
    const buckets = afterWrites([[M, 50], [M + RATE_RING_MINUTES, 2]]);
    expect(countInMinute(buckets, RateCounter.accepted, M + RATE_RING_MINUTES)).toBe(0);
    // The next minute has a bucket of its own again.
    expect(countInMinute(apply(buckets, planBucketUpdate(RateCounter.accepted, M + RATE_RING_MINUTES + 1, 3)), RateCounter.accepted, M + RATE_RING_MINUTES + 1)).toBe(3);
  });

  it('keeps the item bounded: at most three buckets per counter, whatever the writes', () => {
    const minutes = [0, 1, 1, 2, 5, 5, 6, 64, 65, 200, 201, 201, 202, 203, 263, 1000, 999, 1001].map((offset) => [M + offset, 1] as const);
    let item: RateBuckets = {};
    for (const [minute, events] of minutes) {
      item = apply(item, planBucketUpdate(RateCounter.accepted, minute, events));
      expect(Object.keys(item).length).toBeLessThanOrEqual(3);
    }
  });

  it('counts each counter apart', () => {
    const item = apply(apply({}, planBucketUpdate(RateCounter.accepted, M, 9)), planBucketUpdate(RateCounter.delivered, M, 4));
    expect([countInMinute(item, RateCounter.accepted, M), countInMinute(item, RateCounter.delivered, M)]).toEqual([9, 4]);
  });
});

describe('ratesOfLastFullMinute', () => {
  it('reads the minute before now’s, which no write adds to any more', () => {
    const item = [planBucketUpdate(RateCounter.accepted, M, 30), planBucketUpdate(RateCounter.delivered, M, 12), planBucketUpdate(RateCounter.accepted, M + 1, 8)].reduce(apply, {});
    expect(ratesOfLastFullMinute(item, new Date((M + 1) * 60_000 + 59_999))).toEqual({ acceptedPerMinute: 30, deliveredPerMinute: 12 });
    expect(ratesOfLastFullMinute(item, new Date((M + 2) * 60_000))).toEqual({ acceptedPerMinute: 8, deliveredPerMinute: 0 });
    expect(ratesOfLastFullMinute(item, new Date((M + 3) * 60_000))).toEqual({ acceptedPerMinute: 0, deliveredPerMinute: 0 });
  });
});

/**
 * A message group's events per minute, accepted and delivered, counted on its Groups item by the
 * writes that already happen (ingest's one per group per request, the consumer's one per group per
 * batch): no request of its own, and a bounded item. Pure: minutes come in as parameters.
 *
 * Each counter is a ring of RATE_RING_MINUTES per-minute buckets, one attribute per slot, a minute
 * going to slot `minute mod RATE_RING_MINUTES`. A write adds to its minute's bucket and removes
 * every slot but its own and its two neighbours', in the same expression: the item never holds
 * more than three buckets per counter. The previous minute's is what readers read; the next
 * minute's is kept for a write that took its time before a minute ended and lands after another
 * write of the next minute (two ingest requests of one group a millisecond apart), which must not
 * remove that newer count. A DynamoDB update cannot branch on a value, only on whether
 * an attribute exists (`if_not_exists`), so a bucket cannot tell a count of this minute from a
 * leftover of the same slot a ring ago by its name: its value says it, as
 * `minuteTag * MINUTE_COUNT_SPAN + count`, the tag set by the write that creates the bucket and
 * kept by every addition. A reader takes a bucket only when its tag is the minute asked for.
 */

/** The two counters a group keeps, by the prefix of their attributes. */
export const RateCounter = {
  /** Events ingest counted into the group (a redrive's included). */
  accepted: 'accepted',
  /** Events the consumer settled: delivered, or dead-lettered. */
  delivered: 'delivered',
} as const;
export type RateCounter = (typeof RateCounter)[keyof typeof RateCounter];

/**
 * Slots of a counter's ring. A write removes every slot but three, so a leftover survives only a
 * pause of the group's writes of RATE_RING_MINUTES - 2 minutes or more; its tag tells it from this
 * minute's count (see `countInMinute` for the one case it costs a minute's count).
 */
export const RATE_RING_MINUTES = 60;

/**
 * Minutes a bucket's tag tells apart (about 19 years): the tag is the minute modulo this, so that
 * `tag * MINUTE_COUNT_SPAN` stays an exact integer in a JavaScript number (below 2^53).
 */
export const MINUTE_TAG_SPAN = 10_000_000;

/** Events per minute one bucket can count before its count would reach into its tag. */
export const MINUTE_COUNT_SPAN = 100_000_000;

/** The minute of a time: whole minutes since the epoch. */
export function minuteOf(at: Date): number {
  return Math.floor(at.getTime() / 60_000);
}

/** The attribute of a counter's bucket for a minute. */
export function bucketNameOf(counter: RateCounter, minute: number): string {
  return `${counter}_m${((minute % RATE_RING_MINUTES) + RATE_RING_MINUTES) % RATE_RING_MINUTES}`;
}

/** Every attribute a counter's ring may have, for readers that project attributes. */
export function allBucketNamesOf(counter: RateCounter): string[] {
  return Array.from({ length: RATE_RING_MINUTES }, (_, slot) => bucketNameOf(counter, slot));
}

/** What a bucket holds before a minute's first event: its tag, and a count of zero. */
export function bucketBaseOf(minute: number): number {
  return (minute % MINUTE_TAG_SPAN) * MINUTE_COUNT_SPAN;
}

/**
 * What one write does to a counter's ring: `SET <add.name> = if_not_exists(<add.name>, <add.base>)
 * + <add.events>` and `REMOVE <remove>`, in the write that already happens. The adapter writes it
 * out as expression text; this is all the logic there is.
 */
export interface BucketUpdate {
  readonly add: { readonly name: string; readonly base: number; readonly events: number };
  /** Every slot but this minute's and its neighbours'. */
  readonly remove: readonly string[];
}

/** The update of a counter's ring for `events` counted at `minute`. */
export function planBucketUpdate(counter: RateCounter, minute: number, events: number): BucketUpdate {
  const keep = new Set([bucketNameOf(counter, minute - 1), bucketNameOf(counter, minute), bucketNameOf(counter, minute + 1)]);
  return {
    add: { name: bucketNameOf(counter, minute), base: bucketBaseOf(minute), events },
    remove: allBucketNamesOf(counter).filter((name) => !keep.has(name)),
  };
}

/** A group's buckets as read: attribute name to stored value. */
export type RateBuckets = Readonly<Record<string, number>>;

/**
 * The events a counter counted in `minute`; 0 when its bucket is absent or holds another minute
 * (the group wrote nothing that minute). One case is undercounted: the first minute after a pause
 * of the group's writes of RATE_RING_MINUTES - 2 minutes or more whose bucket lands on a leftover
 * (about 3 pauses in RATE_RING_MINUTES) reads 0, as its count was added under the leftover's tag.
 */
export function countInMinute(buckets: RateBuckets, counter: RateCounter, minute: number): number {
  const value = buckets[bucketNameOf(counter, minute)];
  if (value === undefined) return 0;
  const tag = Math.floor(value / MINUTE_COUNT_SPAN);
  return tag === minute % MINUTE_TAG_SPAN ? value - tag * MINUTE_COUNT_SPAN : 0;
}

/** A group's accepted and delivered events in the last full minute before `now`. */
export interface GroupRates {
  readonly acceptedPerMinute: number;
  readonly deliveredPerMinute: number;
}

/** The rates of the last full minute: the one before `now`'s, which no write adds to any more. */
export function ratesOfLastFullMinute(buckets: RateBuckets, now: Date): GroupRates {
  const minute = minuteOf(now) - 1;
  return { acceptedPerMinute: countInMinute(buckets, RateCounter.accepted, minute), deliveredPerMinute: countInMinute(buckets, RateCounter.delivered, minute) };
}

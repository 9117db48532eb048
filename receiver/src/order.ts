/**
 * What a receiver makes of each event's place in its ordering key: in order, a duplicate, a gap
 * (with the numbers it skipped), or the redelivery of a number it was missing. Pure: the state of
 * one key in, a report and the key's next state out (see `ReceiverStore` for where it is kept).
 *
 * An ordered-webhooks key numbers its events 1, 2, 3, … and sends each only after the one before
 * it was delivered or dead-lettered. Every webhook says, under its signature, the event's number
 * (`sequence`) and the number of the key's last event delivered before it (`previous_sequence`).
 * So a receiver that last took `m` and gets `n` knows the numbers between were dead-lettered
 * (they may come later as redeliveries) when `previous_sequence` is at most `m`, and that it lost
 * deliveries of its own (it answered 2xx and did not keep them) when `previous_sequence` is above.
 */

/** An event's place in its key, as the body says it. */
export interface Place {
  readonly sequence: number;
  readonly previousSequence: number;
  readonly isRedelivery: boolean;
}

/**
 * What a receiver keeps per ordering key: the highest number it took, and the numbers below it it
 * has not got, as ranges `[from, to]`, sorted and apart (a run of dead letters is one range).
 */
export interface KeyState {
  readonly last: number;
  readonly missing: readonly (readonly [number, number])[];
}

export const Verdict = {
  /** The number after the last one taken: nothing between. */
  inOrder: 'in_order',
  /** A number taken before (a retry whose answer was lost, a batch sent again one at a time, a replay). */
  duplicate: 'duplicate',
  /** Numbers were skipped: `missing` were dead-lettered, `lost` were delivered and not kept here. */
  gap: 'gap',
  /** A number this receiver was missing, redelivered (a redriven dead letter, a replay): it fills its gap. */
  redelivery: 'redelivery',
} as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

export interface OrderReport {
  readonly verdict: Verdict;
  /**
   * The numbers this event skipped that the service dead-lettered: each may come later as a
   * redelivery (an operator's redrive). Empty but for a gap, or a redelivery above the last
   * number taken (what it skipped is missing too).
   */
  readonly missing: readonly number[];
  /**
   * The numbers this event skipped that the service delivered (its `previous_sequence` is above the
   * last number taken here): this receiver answered 2xx and did not keep them. Empty but for a gap.
   */
  readonly lost: readonly number[];
}

/** The most numbers a report lists; a longer gap is reported by its first ones (the state keeps all of it as ranges). */
export const MAX_LISTED_NUMBERS = 1_000;

function numbersIn(from: number, to: number): number[] {
  const count = Math.max(0, Math.min(to - from + 1, MAX_LISTED_NUMBERS));
  return Array.from({ length: count }, (_, index) => from + index);
}

/** Adds `[from, to]` to sorted, apart ranges, merging what touches it. */
function withRange(ranges: KeyState['missing'], from: number, to: number): KeyState['missing'] {
  if (from > to) return ranges;
  let start = from;
  let end = to;
  const kept: (readonly [number, number])[] = [];
  for (const [low, high] of ranges) {
    if (high < start - 1 || low > end + 1) kept.push([low, high]);
    else {
      start = Math.min(start, low);
      end = Math.max(end, high);
    }
  }
  return [...kept, [start, end] as const].sort((a, b) => a[0] - b[0]);
}

/** Takes one number out of the ranges. */
function withoutNumber(ranges: KeyState['missing'], number: number): KeyState['missing'] {
  return ranges.flatMap(([low, high]): (readonly [number, number])[] => {
    if (number < low || number > high) return [[low, high]];
    return [...(low < number ? [[low, number - 1] as const] : []), ...(number < high ? [[number + 1, high] as const] : [])];
  });
}

export function isMissing(state: KeyState, number: number): boolean {
  return state.missing.some(([low, high]) => number >= low && number <= high);
}

/**
 * Judges one event against its key's state. A key never seen starts from what the event says: all
 * up to its `previous_sequence` was delivered before this receiver kept anything, so only numbers
 * after that count as skipped.
 */
export function judge(state: KeyState | undefined, place: Place): { readonly report: OrderReport; readonly next: KeyState } {
  const { sequence, previousSequence } = place;
  const known: KeyState = state ?? { last: Math.min(previousSequence, sequence - 1), missing: [] };
  if (sequence <= known.last) {
    if (!isMissing(known, sequence)) return { report: { verdict: Verdict.duplicate, missing: [], lost: [] }, next: known };
    return { report: { verdict: Verdict.redelivery, missing: [], lost: [] }, next: { last: known.last, missing: withoutNumber(known.missing, sequence) } };
  }
  // Above the last number taken. Between them: up to previous_sequence (and below this one) the
  // service delivered, after it the service dead-lettered (a redelivery's previous_sequence is the
  // key's last delivered when it was sent, which may be above its own number: then nothing
  // between was dead-lettered after it).
  // A redelivery's previous_sequence is the key's last delivered when it was sent, not the number
  // before it: what it skips is only missing (dead-lettered, or not known here), never lost.
  const deliveredTo = place.isRedelivery ? known.last : Math.min(previousSequence, sequence - 1);
  const lost = { from: known.last + 1, to: deliveredTo };
  const deadLettered = { from: Math.max(known.last, place.isRedelivery ? known.last : previousSequence) + 1, to: sequence - 1 };
  const missing = withRange(withRange(known.missing, lost.from, lost.to), deadLettered.from, deadLettered.to);
  const report: OrderReport = {
    verdict: place.isRedelivery ? Verdict.redelivery : lost.from <= lost.to || deadLettered.from <= deadLettered.to ? Verdict.gap : Verdict.inOrder,
    missing: numbersIn(deadLettered.from, deadLettered.to),
    lost: numbersIn(lost.from, lost.to),
  };
  return { report, next: { last: sequence, missing } };
}

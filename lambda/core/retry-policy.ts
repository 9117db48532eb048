/**
 * When a failed attempt is tried again, and when the consumer gives up
 * (docs/api.md#verifying-and-answering-a-webhook, docs/guarantees.md#dead-lettering-breaks-order-on-purpose-and-loudly). Pure:
 * randomness and the clock come in as parameters.
 */

/** What happens to an event that used all its attempts. */
export const OnExhausted = {
  /** Dead-letter it and move its key on (the default): order gives way to progress. */
  deadLetter: 'dead_letter',
  /** Keep retrying it at the maximum backoff: its key waits, and the stalled-group alarm pages. */
  stall: 'stall',
} as const;
export type OnExhausted = (typeof OnExhausted)[keyof typeof OnExhausted];

export interface RetryPolicy {
  readonly maxDeliveryAttempts: number;
  readonly retryBaseSeconds: number;
  readonly retryMaxSeconds: number;
  readonly onExhausted: OnExhausted;
  /**
   * The longest visibility timeout the consumer may set (`visibilityCeilingSeconds` of the
   * configuration): SQS's 43,200 s counted from the receive, less the consumer's timeout. SQS
   * refuses a longer one and changes nothing, so no delay decided here exceeds it.
   */
  readonly visibilityCeilingSeconds: number;
  /**
   * The most events a message carries (`maxEventsPerMessage` of the configuration; 1 when absent):
   * a message is received once per attempt of each of its events, so its receive count grows that
   * much faster than an event's, and the fault backoff counts receives per event.
   */
  readonly eventsPerMessage?: number;
  /**
   * Set: a head that used its attempts while its key had been failing this long is not given up;
   * its subscription is paused instead (`AUTO_PAUSE_AFTER_SECONDS`, see `giveUpOrPause`).
   */
  readonly autoPauseAfterSeconds?: number | undefined;
  /**
   * Set: a held group whose head has waited this long is parked, moved out of the queue into the
   * store of dead letters in order (`PAUSE_EVACUATION=store`, at `HELD_AGE_ALARM_SECONDS`, see
   * `core/park.ts`); unset: held groups stay in the queue.
   */
  readonly parkAfterSeconds?: number | undefined;
}

/** The longest a failed attempt waits: RETRY_MAX_SECONDS, and never past the visibility ceiling. */
export function maxRetryDelaySeconds(policy: RetryPolicy): number {
  return Math.min(policy.retryMaxSeconds, policy.visibilityCeilingSeconds);
}

/**
 * Slack, beside the longest retry delay, between two failures of one failure streak: the receive
 * after a backoff, the consumer's own time, the next head of a key begun after one given up.
 */
const STREAK_SLACK_SECONDS = 300;

/**
 * The longest time between two failures of a key that still counts as one failure streak (see
 * `liveStreak`): the longest retry delay and some slack. A key that went longer without a failed
 * attempt (idle, held by a pause, or waiting out a fault) was not being tried: its endpoint may
 * have recovered meanwhile, so its next failure begins a new streak.
 */
export function streakGapSeconds(policy: RetryPolicy): number {
  return maxRetryDelaySeconds(policy) + STREAK_SLACK_SECONDS;
}

/** The most attempts the store may count: unbounded when exhausted heads stall instead of giving up. */
export function attemptLimit(policy: RetryPolicy): number {
  return policy.onExhausted === OnExhausted.stall ? Number.MAX_SAFE_INTEGER : policy.maxDeliveryAttempts;
}

/** What happens to an event after a failed attempt. */
export const FailureDecisionKind = { retryLater: 'retry_later', deadLetter: 'dead_letter' } as const;

export type FailureDecision =
  | { readonly kind: typeof FailureDecisionKind.retryLater; readonly delaySeconds: number }
  | { readonly kind: typeof FailureDecisionKind.deadLetter; readonly reason: string };

/**
 * Exponential backoff with full jitter, bounded below by the base: after attempt n the delay is
 * uniform in [base, min(max, base × 2^n)] whole seconds, max being RETRY_MAX_SECONDS within the
 * visibility ceiling. Jitter spreads the retries of many failing keys so that a recovering
 * endpoint is not hit by all of them at once.
 * @param random a number in [0, 1), e.g. `Math.random`
 */
export function backoffSeconds(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(maxRetryDelaySeconds(policy), policy.retryBaseSeconds * 2 ** Math.max(1, attempt));
  const spread = ceiling - policy.retryBaseSeconds;
  return Math.min(ceiling, policy.retryBaseSeconds + Math.floor(random() * (spread + 1)));
}

/**
 * A fault waits at least this long even when RETRY_BASE_SECONDS is 0: retrying a dependency that
 * is down at once would spin through SQS's receive count to the backstop in moments.
 */
export const MIN_FAULT_DELAY_SECONDS = 1;

/**
 * How long a record that met a fault (DynamoDB, SQS or S3 down, a permission missing) waits:
 * exponential in SQS's receive count, from max(RETRY_BASE_SECONDS, 1 s) toward the visibility
 * ceiling, not RETRY_MAX_SECONDS, which paces receivers. An outage may last hours, and every
 * receive counts toward the backstop's `maxReceiveCount`: only delays that grow to hours keep a
 * lasting one from walking whole keys into the backstop. The jitter keeps the upper half:
 * after receive n the delay is uniform in [⌈c/2⌉, c] whole seconds, c = min(ceiling, base × 2^n),
 * so the time to the backstop has a floor whatever the draws.
 *
 * A message of several events (`eventsPerMessage`, e) is received e times as often for the same
 * attempts: n counts its receives per event, ⌈receives / e⌉, and c stops at ceiling / e. With
 * single events and the defaults otherwise (base 5 s; ceiling 43,200 − 130 = 43,070 s), c is 10,
 * 20, …, 40,960 s for receives 1–13 and the ceiling after (backstop 60 receives: 12 to 24 days);
 * with the defaults' 10 events per message and backstop at 10 × 10 × (5 + 1) = 600 receives, a
 * fault that never ends takes a message to the backstop after 13 to 26 days (see the tests).
 * @param receiveCount SQS's ApproximateReceiveCount, counting this receive
 * @param random a number in [0, 1), e.g. `Math.random`
 */
export function faultBackoffSeconds(receiveCount: number, policy: RetryPolicy, random: () => number): number {
  const perMessage = policy.eventsPerMessage ?? 1;
  const base = Math.min(policy.visibilityCeilingSeconds, Math.max(MIN_FAULT_DELAY_SECONDS, policy.retryBaseSeconds));
  // Per event's share of the receives, toward a ceiling as much lower: the time a lasting fault
  // takes to the backstop (whose receives grow with the events per message) stays as it was.
  const highest = Math.max(base, Math.floor(policy.visibilityCeilingSeconds / perMessage));
  const ceiling = Math.min(highest, base * 2 ** Math.max(1, Math.ceil(receiveCount / perMessage)));
  const lowest = Math.max(base, Math.ceil(ceiling / 2));
  return Math.min(ceiling, lowest + Math.floor(random() * (ceiling - lowest + 1)));
}

/**
 * Reads a `Retry-After` header: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * @returns whole seconds from `now`, never negative; undefined when absent or unreadable
 */
export function parseRetryAfter(header: string | undefined, now: Date): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  // The three HTTP-date forms all begin with a day name; V8's Date.parse would read "-5" or "1.5" as dates.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** The facts of one failed attempt that the decision needs. */
export interface FailedAttempt {
  /** Real attempts so far, this one included. */
  readonly attempts: number;
  /** Why it failed, for the dead letter and the lag view. */
  readonly reason: string;
  /** The receiver's `Retry-After`, already read into seconds. */
  readonly retryAfterSeconds: number | undefined;
}

/**
 * The give-up rule: at `maxDeliveryAttempts` real attempts the event is dead-lettered so that its
 * key moves on (or, with `ON_EXHAUSTED=stall`, retried at the maximum backoff for as long as it
 * takes); before that it is retried after the backoff, or after the receiver's `Retry-After` when
 * given, never beyond `retryMaxSeconds` nor the visibility ceiling.
 */
export function decideAfterFailure(failed: FailedAttempt, policy: RetryPolicy, random: () => number): FailureDecision {
  const isExhausted = failed.attempts >= policy.maxDeliveryAttempts;
  if (isExhausted && policy.onExhausted === OnExhausted.stall) {
    return { kind: FailureDecisionKind.retryLater, delaySeconds: maxRetryDelaySeconds(policy) };
  }
  if (isExhausted) {
    return {
      kind: FailureDecisionKind.deadLetter,
      reason: `${failed.attempts} of ${policy.maxDeliveryAttempts} attempts failed; last: ${failed.reason}`,
    };
  }
  const delaySeconds =
    failed.retryAfterSeconds === undefined
      ? backoffSeconds(failed.attempts, policy, random)
      : Math.min(maxRetryDelaySeconds(policy), Math.max(policy.retryBaseSeconds, failed.retryAfterSeconds));
  return { kind: FailureDecisionKind.retryLater, delaySeconds };
}

/**
 * How long a key waits after a failed batch (docs/api.md#batches) before its first event is attempted
 * alone: what the receiver's `Retry-After` asks, within the usual bounds, else not at all. The
 * batch counted no attempt; the single attempts that follow back off as always.
 */
export function delayAfterFailedBatch(retryAfterSeconds: number | undefined, policy: RetryPolicy): number {
  return retryAfterSeconds === undefined ? 0 : Math.min(maxRetryDelaySeconds(policy), Math.max(policy.retryBaseSeconds, retryAfterSeconds));
}

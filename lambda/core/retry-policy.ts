/**
 * When a failed attempt is tried again, and when the consumer gives up (CONTRACT §3). Pure:
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
}

/** The longest a failed attempt waits: RETRY_MAX_SECONDS, and never past the visibility ceiling. */
function maxRetryDelaySeconds(policy: RetryPolicy): number {
  return Math.min(policy.retryMaxSeconds, policy.visibilityCeilingSeconds);
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

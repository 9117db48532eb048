import { describe, expect, it } from 'vitest';
import { backstopMaxReceiveCount, Deployment, loadConfig, maxEventsPerMessage, visibilityCeilingSeconds } from '../../../lambda/config.js';
import {
  attemptLimit,
  backoffSeconds,
  decideAfterFailure,
  faultBackoffSeconds,
  FailureDecisionKind,
  MIN_FAULT_DELAY_SECONDS,
  parseRetryAfter,
  type RetryPolicy,
} from '../../../lambda/core/retry-policy.js';

const policy: RetryPolicy = { maxDeliveryAttempts: 5, retryBaseSeconds: 5, retryMaxSeconds: 900, onExhausted: 'dead_letter', visibilityCeilingSeconds: 43_070 };
/** A policy whose RETRY_MAX_SECONDS is above the visibility ceiling: config refuses one, the core holds anyway. */
const loose: RetryPolicy = { ...policy, retryMaxSeconds: 43_200 };
const lowest = () => 0;
const highest = () => 0.999_999;

describe('backoffSeconds', () => {
  it.each([
    { attempt: 1, min: 5, max: 10 },
    { attempt: 2, min: 5, max: 20 },
    { attempt: 3, min: 5, max: 40 },
    { attempt: 4, min: 5, max: 80 },
    { attempt: 8, min: 5, max: 900 },
    { attempt: 30, min: 5, max: 900 },
  ])('stays within [$min, $max] after attempt $attempt', ({ attempt, min, max }) => {
    expect(backoffSeconds(attempt, policy, lowest)).toBe(min);
    expect(backoffSeconds(attempt, policy, highest)).toBe(max);
    for (let i = 0; i < 200; i += 1) {
      const delay = backoffSeconds(attempt, policy, Math.random);
      expect(delay).toBeGreaterThanOrEqual(min);
      expect(delay).toBeLessThanOrEqual(max);
      expect(Number.isInteger(delay)).toBe(true);
    }
  });

  it('spreads delays (full jitter) rather than giving every key the same one', () => {
    const delays = new Set(Array.from({ length: 200 }, () => backoffSeconds(4, policy, Math.random)));
    expect(delays.size).toBeGreaterThan(20);
  });

  it('retries at once when the base is 0', () => {
    const instant = { ...policy, retryBaseSeconds: 0 };
    expect(backoffSeconds(3, instant, highest)).toBe(0);
  });

  it('never exceeds a maximum smaller than the base doubled', () => {
    const tight = { ...policy, retryBaseSeconds: 10, retryMaxSeconds: 12 };
    expect(backoffSeconds(1, tight, highest)).toBe(12);
    expect(backoffSeconds(1, tight, lowest)).toBe(10);
  });

  it('never exceeds the visibility ceiling, whatever RETRY_MAX_SECONDS says', () => {
    expect(backoffSeconds(30, loose, highest)).toBe(43_070);
  });
});

describe('faultBackoffSeconds', () => {
  it('counts a message of ten events received 14 times as an event received twice: a passing fault costs seconds, not hours', () => {
    const packs: RetryPolicy = { ...policy, eventsPerMessage: 10 };
    expect([faultBackoffSeconds(14, packs, lowest), faultBackoffSeconds(14, packs, highest)]).toEqual([10, 20]);
    expect(faultBackoffSeconds(14, policy, lowest)).toBeGreaterThan(20_000);
    // Its ceiling is the visibility ceiling's tenth: ten receives of it take an event's one.
    expect(faultBackoffSeconds(600, packs, highest)).toBe(4_307);
  });

  it.each([
    { receiveCount: 1, min: 5, max: 10 },
    { receiveCount: 2, min: 10, max: 20 },
    { receiveCount: 3, min: 20, max: 40 },
    { receiveCount: 8, min: 640, max: 1280 },
    { receiveCount: 13, min: 20_480, max: 40_960 },
    { receiveCount: 14, min: 21_535, max: 43_070 },
    { receiveCount: 60, min: 21_535, max: 43_070 },
    { receiveCount: 5000, min: 21_535, max: 43_070 },
  ])('stays within [$min, $max] at receive $receiveCount, past RETRY_MAX_SECONDS', ({ receiveCount, min, max }) => {
    expect(faultBackoffSeconds(receiveCount, policy, lowest)).toBe(min);
    expect(faultBackoffSeconds(receiveCount, policy, highest)).toBe(max);
    for (let i = 0; i < 200; i += 1) {
      const delay = faultBackoffSeconds(receiveCount, policy, Math.random);
      expect(delay).toBeGreaterThanOrEqual(min);
      expect(delay).toBeLessThanOrEqual(max);
      expect(Number.isInteger(delay)).toBe(true);
    }
  });

  it('waits at least MIN_FAULT_DELAY_SECONDS when the base is 0', () => {
    const instant = { ...policy, retryBaseSeconds: 0 };
    expect(faultBackoffSeconds(1, instant, lowest)).toBe(MIN_FAULT_DELAY_SECONDS);
    expect(faultBackoffSeconds(1, instant, highest)).toBe(2 * MIN_FAULT_DELAY_SECONDS);
    expect(faultBackoffSeconds(20, instant, highest)).toBe(43_070);
  });

  it('spreads the delays of many keys at one receive count', () => {
    const delays = new Set(Array.from({ length: 200 }, () => faultBackoffSeconds(20, policy, Math.random)));
    expect(delays.size).toBeGreaterThan(100);
  });

  it('takes a fault that never ends 12 to 26 days to walk a message into the backstop, with the defaults', () => {
    const config = loadConfig({}, Deployment.deployed);
    const defaults: RetryPolicy = { ...config, visibilityCeilingSeconds: visibilityCeilingSeconds(config), eventsPerMessage: maxEventsPerMessage(config) };
    // The message is received, backed off, received again … until its receive count passes maxReceiveCount.
    const receives = backstopMaxReceiveCount(config);
    const secondsToBackstop = (random: () => number): number =>
      Array.from({ length: receives }, (_, n) => faultBackoffSeconds(n + 1, defaults, random)).reduce((sum, delay) => sum + delay, 0);
    expect({ receives, ceiling: defaults.visibilityCeilingSeconds, eventsPerMessage: defaults.eventsPerMessage }).toEqual({ receives: 600, ceiling: 43_070, eventsPerMessage: 10 });
    // Counted per event's ten receives: 10 × (10 + 20 + … + 2,560) = 51,100 s for receives 1–90,
    // then ⌊43,070 / 10⌋ = 4,307 s for receives 91–600 (510 × 4,307 = 2,196,570 s): 2,247,670 s, 26 days.
    expect(secondsToBackstop(highest)).toBe(2_247_670);
    // The lowest draws give half of each: 1,124,090 s, 13 days.
    expect(secondsToBackstop(lowest)).toBe(1_124_090);
    expect(secondsToBackstop(lowest) / 86_400).toBeGreaterThan(12);
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  it.each([
    { header: undefined, expected: undefined },
    { header: '0', expected: 0 },
    { header: '120', expected: 120 },
    { header: ' 7 ', expected: 7 },
    { header: 'Wed, 02 Dec 2026 12:00:30 GMT', expected: 30 },
    { header: 'Wed, 02 Dec 2026 11:00:00 GMT', expected: 0 },
    { header: 'soon', expected: undefined },
    { header: '-5', expected: undefined },
    { header: '1.5', expected: undefined },
  ])('reads $header as $expected', ({ header, expected }) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});

describe('decideAfterFailure', () => {
  it.each([1, 2, 3, 4])('retries after attempt %i of 5', (attempts) => {
    const decision = decideAfterFailure({ attempts, reason: 'HTTP 500', retryAfterSeconds: undefined }, policy, lowest);
    expect(decision).toEqual({ kind: FailureDecisionKind.retryLater, delaySeconds: 5 });
  });

  it('dead-letters at the last real attempt, naming the attempts and the last reason', () => {
    const decision = decideAfterFailure({ attempts: 5, reason: 'HTTP 500', retryAfterSeconds: undefined }, policy, lowest);
    expect(decision).toEqual({ kind: FailureDecisionKind.deadLetter, reason: '5 of 5 attempts failed; last: HTTP 500' });
  });

  it('dead-letters at once when one attempt is allowed', () => {
    const once = { ...policy, maxDeliveryAttempts: 1 };
    expect(decideAfterFailure({ attempts: 1, reason: 'HTTP 503', retryAfterSeconds: 30 }, once, lowest).kind).toBe(FailureDecisionKind.deadLetter);
  });

  it.each([
    { retryAfterSeconds: 60, expected: 60 },
    { retryAfterSeconds: 0, expected: 5 },
    { retryAfterSeconds: 86_400, expected: 900 },
  ])('honours Retry-After $retryAfterSeconds within [base, max]', ({ retryAfterSeconds, expected }) => {
    const decision = decideAfterFailure({ attempts: 1, reason: 'HTTP 429', retryAfterSeconds }, policy, highest);
    expect(decision).toEqual({ kind: FailureDecisionKind.retryLater, delaySeconds: expected });
  });

  it('retries at the maximum backoff instead of giving up when exhausted heads stall', () => {
    const stalling: RetryPolicy = { ...policy, onExhausted: 'stall' };
    for (const attempts of [5, 6, 50]) {
      expect(decideAfterFailure({ attempts, reason: 'HTTP 500', retryAfterSeconds: 1 }, stalling, lowest)).toEqual({ kind: FailureDecisionKind.retryLater, delaySeconds: 900 });
    }
    expect(attemptLimit(stalling)).toBe(Number.MAX_SAFE_INTEGER);
    expect(attemptLimit(policy)).toBe(5);
  });

  it('keeps Retry-After and a held head within the visibility ceiling, whatever RETRY_MAX_SECONDS says', () => {
    const retryAfter = decideAfterFailure({ attempts: 1, reason: 'HTTP 503', retryAfterSeconds: 86_400 }, loose, lowest);
    expect(retryAfter).toEqual({ kind: FailureDecisionKind.retryLater, delaySeconds: 43_070 });
    const held = decideAfterFailure({ attempts: 5, reason: 'HTTP 500', retryAfterSeconds: undefined }, { ...loose, onExhausted: 'stall' }, lowest);
    expect(held).toEqual({ kind: FailureDecisionKind.retryLater, delaySeconds: 43_070 });
  });

  it('gives up even when Retry-After asks for more time, once the attempts are spent', () => {
    const decision = decideAfterFailure({ attempts: 5, reason: 'HTTP 429', retryAfterSeconds: 10 }, policy, lowest);
    expect(decision.kind).toBe(FailureDecisionKind.deadLetter);
  });
});

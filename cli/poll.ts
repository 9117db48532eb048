/**
 * Waiting for the API to reach a state: ask, and ask again every interval until the answer says
 * so or the deadline passes. A transient failure (no answer, throttling, 5xx) is reported and
 * asked again; anything else ends the wait.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { formatMs } from './duration.js';
import { InterruptedError, TimedOutError, isTransient, type CliError } from './errors.js';

/** Time as the CLI sees it; tests keep the system clock and use short intervals. */
export interface Clock {
  readonly now: () => number;
  /** Rejects when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }),
};

export interface PollOptions<T> {
  /** What is awaited, as the timeout message ends: `waiting for <what>`. */
  readonly what: string;
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  /** The awaited value once the state is reached, undefined until then. */
  readonly check: () => Promise<T | undefined>;
  /** Told of each transient failure that the loop rides out. */
  readonly onTransientError: (error: CliError) => void;
}

/** Resolves with the first value `check` gives; throws {@link TimedOutError} after `timeoutMs`. */
export async function pollUntil<T>(options: PollOptions<T>): Promise<T> {
  const deadline = options.clock.now() + options.timeoutMs;
  for (;;) {
    try {
      const value = await options.check();
      if (value !== undefined) return value;
    } catch (error) {
      if (!isTransient(error)) throw error;
      options.onTransientError(error);
    }
    const leftMs = deadline - options.clock.now();
    if (leftMs <= 0) throw new TimedOutError(`Timed out after ${formatMs(options.timeoutMs)} waiting for ${options.what}.`);
    await pause(options, Math.min(options.intervalMs, leftMs));
  }
}

/** Sleeps, unless the operator interrupts. */
export async function pause(options: { readonly clock: Clock; readonly signal: AbortSignal }, ms: number): Promise<void> {
  try {
    await options.clock.sleep(ms, options.signal);
  } catch (error) {
    if (options.signal.aborted) throw new InterruptedError('Interrupted.');
    throw error;
  }
}

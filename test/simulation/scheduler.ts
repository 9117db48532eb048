/**
 * The simulation's clock and scheduler. Everything that takes time (an SDK call, an HTTP request,
 * a poller's wait) awaits `sleep` on the simulated clock; the scheduler wakes the earliest sleeper
 * (ties in a seeded random order), lets every microtask run, and repeats. Nothing uses real timers
 * or real I/O, so a seed is one exact history.
 *
 * A crash is modelled by a `Life`: code running inside a life that was killed never wakes again
 * (its pending sleeps are dropped), exactly like a Lambda invocation whose process died between
 * two steps.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { SeededRandom } from './random.js';

/** One invocation's (or one actor's) life: once killed, none of its sleeps ever wakes. */
export class Life {
  private isKilled = false;
  constructor(readonly name: string) {}
  get isDead(): boolean {
    return this.isKilled;
  }
  kill(): void {
    this.isKilled = true;
  }
}

interface Sleeper {
  readonly at: number;
  readonly order: number;
  readonly life: Life | undefined;
  readonly wake: () => void;
}

/** Thrown by `run` when a step limit is reached: a livelock, reported with the seed. */
export class StepLimitError extends Error {
  override readonly name = 'StepLimitError';
}

export class Scheduler {
  readonly random: SeededRandom;
  private nowMs: number;
  private sleepers: Sleeper[] = [];
  private readonly lives = new AsyncLocalStorage<Life>();
  private readonly failures: unknown[] = [];
  steps = 0;

  /**
   * @param onAdvance called with the new time whenever the clock moves, e.g. to make `Date` follow
   *   it for code that reads the wall clock itself
   */
  constructor(
    seed: number,
    startMs = Date.UTC(2026, 0, 1),
    private readonly onAdvance: (nowMs: number) => void = () => undefined,
  ) {
    this.random = new SeededRandom(seed);
    this.nowMs = startMs;
    onAdvance(startMs);
  }

  /** Simulated epoch milliseconds. */
  now(): number {
    return this.nowMs;
  }

  nowDate(): Date {
    return new Date(this.nowMs);
  }

  /** The life the calling code runs in, if any. */
  currentLife(): Life | undefined {
    return this.lives.getStore();
  }

  /** Runs `body` inside `life`: every sleep it (and what it awaits) makes belongs to that life. */
  runIn<T>(life: Life, body: () => Promise<T>): Promise<T> {
    return this.lives.run(life, body);
  }

  /**
   * Resolves after `ms` simulated milliseconds. Sleepers due at the same time wake in a random
   * (seeded) order: that is where interleavings come from. A sleep of a dead life never resolves.
   */
  sleep(ms: number): Promise<void> {
    const life = this.lives.getStore();
    if (life?.isDead === true) return new Promise<void>(() => undefined);
    return new Promise<void>((resolve) => {
      this.sleepers.push({ at: this.nowMs + Math.max(0, ms), order: this.random.next(), life, wake: resolve });
    });
  }

  /** A promise that never settles: what a killed life's pending call turns into. */
  never<T>(): Promise<T> {
    return new Promise<T>(() => undefined);
  }

  /** Starts a concurrent actor; an exception escaping it fails the run. */
  spawn(name: string, body: () => Promise<void>, life: Life = new Life(name)): Life {
    void this.runIn(life, body).catch((error: unknown) => {
      this.failures.push(new Error(`actor ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
    });
    return life;
  }

  /** Lets every pending microtask run: afterwards every actor waits on a sleep, or has ended. */
  private async settle(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  /**
   * Runs until `isDone()` holds after a step, no sleeper is left, or the clock passes `untilMs`.
   * @throws the first failure of an actor, or StepLimitError after `maxSteps` wake-ups
   */
  async run(options: { readonly untilMs: number; readonly isDone?: () => boolean; readonly maxSteps?: number }): Promise<void> {
    const maxSteps = options.maxSteps ?? 1_000_000;
    await this.settle();
    for (;;) {
      if (this.failures.length > 0) throw this.failures[0];
      if (options.isDone?.() === true) return;
      const next = this.takeNext(options.untilMs);
      if (next === undefined) return;
      this.steps += 1;
      if (this.steps > maxSteps) throw new StepLimitError(`more than ${maxSteps} steps`);
      if (next.at > this.nowMs) {
        this.nowMs = next.at;
        this.onAdvance(this.nowMs);
      }
      if (next.life?.isDead !== true) next.wake();
      await this.settle();
    }
  }

  /** Removes and returns the earliest sleeper due by `untilMs`; a later one stays for a later run. */
  private takeNext(untilMs: number): Sleeper | undefined {
    let best = -1;
    for (let index = 0; index < this.sleepers.length; index += 1) {
      const candidate = this.sleepers[index];
      const current = this.sleepers[best];
      if (candidate === undefined) continue;
      if (current === undefined || candidate.at < current.at || (candidate.at === current.at && candidate.order < current.order)) best = index;
    }
    if (best < 0 || (this.sleepers[best]?.at ?? Infinity) > untilMs) return undefined;
    const [next] = this.sleepers.splice(best, 1);
    return next;
  }
}

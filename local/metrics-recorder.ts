/**
 * The local stack's metrics source: it has no CloudWatch, so the consumer's counts (what it
 * publishes per invocation, `publishCounts`) are summed here per minute, in memory, and read back
 * by `GET /v1/metrics` as CloudWatch's would be. Only the last MAX_METRICS_MINUTES minutes are
 * kept, the most a request may ask for: memory stays bounded however long `npm start` runs.
 */
import type { ConsumerCounts } from '../lambda/core/consumer-metrics.js';
import { CONSUMER_SERIES, MAX_METRICS_MINUTES, MetricsSourceName, startOfMinute, type ConsumerSeriesName, type Datapoint, type MetricsSource } from '../lambda/core/metrics.js';

/** The consumer's counts of one minute. */
type MinuteSums = Record<ConsumerSeriesName, number>;

export interface MetricsRecorder extends MetricsSource {
  /** Adds one invocation's counts to the current minute: the local consumer's `publishCounts`. */
  readonly record: (counts: ConsumerCounts) => void;
  /** Minutes held now (at most MAX_METRICS_MINUTES): for tests of the bound. */
  readonly minutesHeld: () => number;
}

/** A recorder of the consumer's counts on the clock `now` (the local stack's, when a test sets one). */
export function createMetricsRecorder(now: () => Date = () => new Date()): MetricsRecorder {
  const minutes = new Map<number, MinuteSums>();
  /**
   * Keeps the minute just counted and the MAX_METRICS_MINUTES − 1 before it. Should the clock have
   * gone back, the minutes now in its future go first (a time that has not come, as CloudWatch
   * would not show either), then the oldest: never the minute just counted.
   */
  const forgetOld = (current: number): void => {
    const oldestKept = current - (MAX_METRICS_MINUTES - 1) * 60_000;
    for (const minute of minutes.keys()) if (minute < oldestKept || minute > current) minutes.delete(minute);
  };
  return {
    record(counts) {
      if (CONSUMER_SERIES.every((name) => counts[name] === 0)) return;
      const current = startOfMinute(now()).getTime();
      const sums = minutes.get(current) ?? { delivered: 0, failedAttempts: 0, deadLettered: 0 };
      for (const name of CONSUMER_SERIES) sums[name] += counts[name];
      minutes.set(current, sums);
      forgetOld(current);
    },
    async readConsumerSeries({ since, until }) {
      const inWindow = [...minutes].filter(([minute]) => minute >= since.getTime() && minute < until.getTime()).sort(([a], [b]) => a - b);
      const seriesOf = (name: ConsumerSeriesName): Datapoint[] => inWindow.map(([minute, sums]) => ({ at: new Date(minute), sum: sums[name] }));
      return { delivered: seriesOf('delivered'), failedAttempts: seriesOf('failedAttempts'), deadLettered: seriesOf('deadLettered'), source: MetricsSourceName.local };
    },
    minutesHeld: () => minutes.size,
  };
}

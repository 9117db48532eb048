/**
 * `GET /v1/metrics`: the operator console's overview figures. The consumer's counts per minute
 * over the last minutes (what it publishes per invocation, CONSUMER_METRICS), read through the
 * {@link MetricsSource} port (CloudWatch when deployed, an in-memory recorder locally), and the
 * live lag figures the lag job publishes, computed at request time from the active groups. Pure:
 * the clock and the datapoints come in as parameters.
 */
import * as z from 'zod';
import { parseWith, type Parsed } from './event.js';
import type { LagSummary } from './lag.js';
import { wholeNumberParameter } from './paging.js';

/** One point per minute: the consumer publishes per invocation, the alarms sum per minute too. */
export const METRICS_PERIOD_SECONDS = 60;

const PERIOD_MS = METRICS_PERIOD_SECONDS * 1000;

/** Minutes of the series when the request names none: the console's last hour. */
export const DEFAULT_METRICS_MINUTES = 60;

/** The most minutes one request may ask for, and what the local recorder keeps. */
export const MAX_METRICS_MINUTES = 180;

/** Where the series came from, as the answer's `source` says. */
export const MetricsSourceName = {
  cloudwatch: 'cloudwatch',
  local: 'local',
} as const;
export type MetricsSourceName = (typeof MetricsSourceName)[keyof typeof MetricsSourceName];

/** The consumer's counts the series are of, by the answer's field names. */
export const CONSUMER_SERIES = ['delivered', 'failedAttempts', 'deadLettered'] as const;
export type ConsumerSeriesName = (typeof CONSUMER_SERIES)[number];

/** One datapoint of a series: the sum of the minute starting at `at`. */
export interface Datapoint {
  readonly at: Date;
  readonly sum: number;
}

/**
 * The consumer's series as a source has them, and which source that is: minutes with no data may
 * be absent, the datapoints in any order.
 */
export type ConsumerSeries = Readonly<Record<ConsumerSeriesName, readonly Datapoint[]>> & { readonly source: MetricsSourceName };

/** The minutes a series is read over: from `since` (a minute's start, inclusive) to `until` (exclusive). */
export interface MetricsWindow {
  readonly since: Date;
  readonly until: Date;
}

/** The port the metrics route reads the consumer's counts through. */
export interface MetricsSource {
  /** The per-minute sums of each of the consumer's counts whose minute starts in the window. */
  readonly readConsumerSeries: (window: MetricsWindow) => Promise<ConsumerSeries>;
}

/** The start of the minute `at` is in. */
export function startOfMinute(at: Date | number): Date {
  const ms = typeof at === 'number' ? at : at.getTime();
  return new Date(Math.floor(ms / PERIOD_MS) * PERIOD_MS);
}

/** The window of `minutes` whole minutes, the last one the minute `now` is in (partial, so far). */
export function metricsWindowOf(minutes: number, now: Date): MetricsWindow {
  const current = startOfMinute(now).getTime();
  return { since: new Date(current - (minutes - 1) * PERIOD_MS), until: new Date(current + PERIOD_MS) };
}

/** The metrics route's query parameters as a client sends them (what the API document shows). */
export const metricsQuerySchema = z.object({
  minutes: wholeNumberParameter(MAX_METRICS_MINUTES)
    .meta({ description: `Minutes of the series, 1 to ${MAX_METRICS_MINUTES}, the last being the current one; ${DEFAULT_METRICS_MINUTES} when absent.` })
    .optional(),
});

/** Reads `minutes` (integer 1–180, default 60); a bad value is an `invalid_request` refusal naming `minutes`. */
export function parseMetricsQuery(query: Readonly<Record<string, string | undefined>> | undefined): Parsed<{ readonly minutes: number }> {
  const schema = metricsQuerySchema.transform(({ minutes }) => ({ minutes: minutes ?? DEFAULT_METRICS_MINUTES }));
  return parseWith(schema, query ?? {}, 'The metrics parameters are not valid.');
}

/** One minute of the series: the sums of the consumer's counts in the minute starting at `at`. */
export interface MetricsPoint {
  /** The minute's start, ISO 8601. */
  readonly at: string;
  readonly delivered: number;
  readonly failed_attempts: number;
  readonly dead_lettered: number;
}

/** The answer of `GET /v1/metrics` (see {@link buildMetricsAnswer}); `metricsAnswerSchema` documents it. */
export interface MetricsAnswer {
  readonly minutes: number;
  readonly period_seconds: typeof METRICS_PERIOD_SECONDS;
  readonly points: readonly MetricsPoint[];
  readonly stalled_groups: number;
  readonly max_oldest_wait_seconds: number;
  readonly backlog: number;
  readonly held_groups: number;
  readonly falling_behind_keys: number;
  readonly source: MetricsSourceName;
}

/** What the metrics answer is built of. */
export interface MetricsInput {
  readonly minutes: number;
  readonly now: Date;
  readonly series: ConsumerSeries;
  /** The lag figures of the active groups now (`summarizeLag`). */
  readonly lag: LagSummary;
}

/**
 * The answer of `GET /v1/metrics`: exactly `minutes` points, oldest first, one per whole minute,
 * the last the current (partial) one; a minute with no datapoint is zeros. A datapoint is placed by
 * the minute it falls in (a source's timestamps are period starts), several in one minute are
 * added up, and one outside the window is left out. Sums are rounded to whole counts: CloudWatch
 * answers doubles.
 */
export function buildMetricsAnswer(input: MetricsInput): MetricsAnswer {
  const { minutes, now, series, lag } = input;
  const { since } = metricsWindowOf(minutes, now);
  const sums = CONSUMER_SERIES.map((name) => {
    const byMinute = new Array<number>(minutes).fill(0);
    for (const { at, sum } of series[name]) {
      const index = Math.floor((startOfMinute(at).getTime() - since.getTime()) / PERIOD_MS);
      if (index >= 0 && index < minutes) byMinute[index] = (byMinute[index] ?? 0) + sum;
    }
    return byMinute.map((sum) => Math.max(0, Math.round(sum)));
  });
  const [delivered = [], failedAttempts = [], deadLettered = []] = sums;
  return {
    minutes,
    period_seconds: METRICS_PERIOD_SECONDS,
    points: Array.from({ length: minutes }, (_, index) => ({
      at: new Date(since.getTime() + index * PERIOD_MS).toISOString(),
      delivered: delivered[index] ?? 0,
      failed_attempts: failedAttempts[index] ?? 0,
      dead_lettered: deadLettered[index] ?? 0,
    })),
    stalled_groups: lag.stalledGroups,
    max_oldest_wait_seconds: lag.maxOldestWaitSeconds,
    backlog: lag.backlog,
    held_groups: lag.heldGroups,
    falling_behind_keys: lag.fallingBehindKeys,
    source: series.source,
  };
}

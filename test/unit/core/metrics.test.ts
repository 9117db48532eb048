import { describe, expect, it } from 'vitest';
import type { LagSummary } from '../../../lambda/core/lag.js';
import {
  buildMetricsAnswer,
  DEFAULT_METRICS_MINUTES,
  MAX_METRICS_MINUTES,
  metricsWindowOf,
  parseMetricsQuery,
  startOfMinute,
  type ConsumerSeries,
} from '../../../lambda/core/metrics.js';

const now = new Date('2026-12-02T12:10:42.500Z');
const noLag: LagSummary = { maxOldestWaitSeconds: 0, stalledGroups: 0, backlog: 0, fallingBehindKeys: 0, worstFallingBehind: [], heldGroups: 0, oldestHeldSeconds: 0, nearRetention: [] };
const empty: ConsumerSeries = { delivered: [], failedAttempts: [], deadLettered: [], source: 'local' };
const at = (iso: string) => new Date(iso);
const MINUTES_DETAIL = { path: 'minutes', message: `must be an integer from 1 to ${MAX_METRICS_MINUTES}` };

describe('parseMetricsQuery', () => {
  it.each([
    ['absent', {}, DEFAULT_METRICS_MINUTES],
    ['1', { minutes: '1' }, 1],
    ['60', { minutes: '60' }, 60],
    ['180', { minutes: '180' }, 180],
  ])('reads minutes when %s', (_case, query: Record<string, string>, minutes) => {
    expect(parseMetricsQuery(query)).toEqual({ ok: true, value: { minutes } });
  });

  it('reads the default when no query parameter came at all', () => {
    expect(parseMetricsQuery(undefined)).toEqual({ ok: true, value: { minutes: DEFAULT_METRICS_MINUTES } });
  });

  it.each(['0', '181', '1000', '-1', '1.5', '1e2', ' 5', '05', 'sixty', ''])('refuses minutes=%j with invalid_request naming minutes', (minutes) => {
    expect(parseMetricsQuery({ minutes })).toEqual({ ok: false, refusal: { code: 'invalid_request', message: 'The metrics parameters are not valid.', details: [MINUTES_DETAIL] } });
  });

  it('leaves other parameters alone', () => {
    expect(parseMetricsQuery({ minutes: '5', other: 'x' })).toEqual({ ok: true, value: { minutes: 5 } });
  });
});

describe('metricsWindowOf', () => {
  it.each([
    [1, '2026-12-02T12:10:00.000Z', '2026-12-02T12:11:00.000Z'],
    [5, '2026-12-02T12:06:00.000Z', '2026-12-02T12:11:00.000Z'],
    [180, '2026-12-02T09:11:00.000Z', '2026-12-02T12:11:00.000Z'],
  ])('spans %i whole minutes ending with the current one', (minutes, since, until) => {
    expect(metricsWindowOf(minutes, now)).toEqual({ since: at(since), until: at(until) });
  });

  it('starts a minute exactly on its first millisecond', () => {
    expect(startOfMinute(at('2026-12-02T12:10:00.000Z'))).toEqual(at('2026-12-02T12:10:00.000Z'));
    expect(startOfMinute(at('2026-12-02T12:10:59.999Z'))).toEqual(at('2026-12-02T12:10:00.000Z'));
  });
});

describe('buildMetricsAnswer', () => {
  it('answers exactly `minutes` points, oldest first, zeros where no data, the last the current minute', () => {
    const answer = buildMetricsAnswer({ minutes: 4, now, series: empty, lag: noLag });
    expect(answer.points).toEqual(
      ['12:07', '12:08', '12:09', '12:10'].map((minute) => ({ at: `2026-12-02T${minute}:00.000Z`, delivered: 0, failed_attempts: 0, dead_lettered: 0 })),
    );
    expect(answer).toMatchObject({ minutes: 4, period_seconds: 60, source: 'local' });
  });

  it('places datapoints given in any order by their minute, and adds up several in one minute', () => {
    const series: ConsumerSeries = {
      delivered: [
        { at: at('2026-12-02T12:10:00.000Z'), sum: 3 },
        { at: at('2026-12-02T12:08:00.000Z'), sum: 5 },
        // Not a period start: counted in its minute.
        { at: at('2026-12-02T12:10:30.000Z'), sum: 2 },
      ],
      failedAttempts: [{ at: at('2026-12-02T12:09:00.000Z'), sum: 7 }],
      deadLettered: [{ at: at('2026-12-02T12:09:00.000Z'), sum: 1 }],
      source: 'cloudwatch',
    };
    expect(buildMetricsAnswer({ minutes: 3, now, series, lag: noLag })).toMatchObject({
      points: [
        { at: '2026-12-02T12:08:00.000Z', delivered: 5, failed_attempts: 0, dead_lettered: 0 },
        { at: '2026-12-02T12:09:00.000Z', delivered: 0, failed_attempts: 7, dead_lettered: 1 },
        { at: '2026-12-02T12:10:00.000Z', delivered: 5, failed_attempts: 0, dead_lettered: 0 },
      ],
      source: 'cloudwatch',
    });
  });

  it('counts the current, partial minute and leaves out datapoints before the window or after now’s minute', () => {
    const series: ConsumerSeries = {
      ...empty,
      delivered: [
        { at: at('2026-12-02T12:07:59.999Z'), sum: 100 },
        { at: at('2026-12-02T12:08:00.000Z'), sum: 1 },
        { at: at('2026-12-02T12:10:42.000Z'), sum: 2 },
        { at: at('2026-12-02T12:11:00.000Z'), sum: 100 },
      ],
    };
    expect(buildMetricsAnswer({ minutes: 3, now, series, lag: noLag }).points.map((point) => point.delivered)).toEqual([1, 0, 2]);
  });

  it('rounds CloudWatch’s double sums to whole counts', () => {
    const series: ConsumerSeries = { ...empty, delivered: [{ at: at('2026-12-02T12:10:00.000Z'), sum: 2.9999999 }] };
    expect(buildMetricsAnswer({ minutes: 1, now, series, lag: noLag }).points).toEqual([{ at: '2026-12-02T12:10:00.000Z', delivered: 3, failed_attempts: 0, dead_lettered: 0 }]);
  });

  it('carries the lag figures as the lag job takes them', () => {
    const lag: LagSummary = { ...noLag, maxOldestWaitSeconds: 95, stalledGroups: 2, backlog: 14, fallingBehindKeys: 1, heldGroups: 3 };
    expect(buildMetricsAnswer({ minutes: 1, now, series: empty, lag })).toMatchObject({ stalled_groups: 2, max_oldest_wait_seconds: 95, backlog: 14, held_groups: 3, falling_behind_keys: 1 });
  });
});

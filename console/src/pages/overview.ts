/**
 * Overview: how delivery goes, at a glance. The last hour per minute (delivered, failed attempts,
 * dead-lettered: the consumer's own counts, from CloudWatch when deployed) as a chart refreshed
 * live, the figures the alarms watch (stalled groups, the oldest wait), and the worst groups.
 */
import uPlot from 'uplot';
import type { LagAnswer } from '../../../lambda/core/answers.js';
import type { MetricsAnswer } from '../../../lambda/core/metrics.js';
import { api } from '../api.js';
import { cell, code, el, link, replaceChildren, replaceKeepingFocus, table } from '../dom.js';
import { formatSeconds } from '../format.js';
import { every, REFRESH_MS, type Page } from '../page.js';
import { errorBox, figure } from '../ui.js';
import { groupHash, rowStates } from './lag.js';

/** How often the overview reads a deployed API's figures: CloudWatch's own resolution. */
const CLOUDWATCH_REFRESH_MS = 60_000;

/** The chart's series, in the order of the answer's point fields. */
const SERIES = [
  { label: 'Delivered', field: 'delivered', stroke: '#1d6b35' },
  { label: 'Failed attempts', field: 'failed_attempts', stroke: '#7a4b00' },
  { label: 'Dead-lettered', field: 'dead_lettered', stroke: '#a4161a' },
] as const;

type Point = MetricsAnswer['points'][number];

function chartData(points: readonly Point[]): uPlot.AlignedData {
  return [points.map((point) => Date.parse(point.at) / 1000), ...SERIES.map((series) => points.map((point) => point[series.field]))];
}

function totals(points: readonly Point[]): string {
  return SERIES.map((series) => `${points.reduce((sum, point) => sum + point[series.field], 0)} ${series.label.toLowerCase()}`).join(', ');
}

export const overviewPage: Page = (main) => {
  const figures = el('ul', { class: 'figures' });
  const chartBox = el('div', { class: 'chart', role: 'img', 'data-testid': 'chart', 'aria-label': 'Deliveries per minute over the last hour' });
  const chartSummary = el('p', { class: 'muted', 'data-testid': 'chart-summary' });
  const worst = el('div', {});
  const status = el('div', {});
  replaceChildren(
    main,
    el('h1', {}, 'Overview'),
    status,
    figures,
    el('h2', {}, 'The last hour, per minute'),
    chartBox,
    chartSummary,
    el('h2', {}, 'Worst groups'),
    worst,
  );
  let chart: uPlot | undefined;
  let points = 0;

  const refresh = async (): Promise<void> => {
    try {
      const [metrics, lag] = await Promise.all([api.get<MetricsAnswer>('/v1/metrics', { minutes: '60' }), api.get<LagAnswer>('/v1/lag', { limit: '5' })]);
      source = metrics.source;
      replaceChildren(status);
      replaceChildren(
        figures,
        figure('stalled groups', metrics.stalled_groups, metrics.stalled_groups > 0, 'stalled-groups'),
        figure('oldest wait', formatSeconds(metrics.max_oldest_wait_seconds), false, 'oldest-wait'),
        figure('events waiting', metrics.backlog, false, 'backlog'),
        figure('groups held for a pause', metrics.held_groups, metrics.held_groups > 0, 'held-groups'),
        figure('keys falling behind', metrics.falling_behind_keys, metrics.falling_behind_keys > 0, 'falling-behind'),
      );
      const data = chartData(metrics.points);
      if (chart === undefined) {
        chart = new uPlot(
          {
            width: Math.max(480, Math.min(1200, main.clientWidth - 16)),
            height: 260,
            series: [{}, ...SERIES.map((series) => ({ label: series.label, stroke: series.stroke, width: 2 }))],
            axes: [{}, { label: 'events per minute' }],
            scales: { y: { range: (_self, _min, max) => [0, Math.max(5, max)] } },
          },
          data,
          chartBox,
        );
      } else chart.setData(data);
      points += 1;
      chartBox.dataset.refreshes = String(points);
      chartBox.setAttribute('aria-label', `Last ${metrics.minutes} minutes, per minute: ${totals(metrics.points)}`);
      chartSummary.textContent = `In the last ${metrics.minutes} minutes: ${totals(metrics.points)}. Source: ${metrics.source === 'cloudwatch' ? 'CloudWatch (a minute or two behind)' : 'the local stack'}.`;
      replaceKeepingFocus(
        worst,
        lag.groups.length === 0
          ? el('p', {}, 'Nothing is waiting.')
          : table(
              'The five worst groups (all of them on the Lag page)',
              [{ label: 'Group' }, { label: 'Subscription' }, { label: 'Depth', isNumber: true }, { label: 'Oldest wait' }, { label: 'State' }],
              lag.groups.map((row) =>
                el(
                  'tr',
                  {},
                  cell(link(groupHash(row.message_group_id), code(row.message_group_id))),
                  cell(row.subscription_id === null ? '—' : code(row.subscription_id)),
                  cell(row.depth),
                  cell(formatSeconds(row.oldest_wait_seconds)),
                  cell(...rowStates(row)),
                ),
              ),
            ),
      );
    } catch (error) {
      replaceChildren(status, errorBox('The figures could not be read', error));
    }
  };
  // Deployed, the series come from CloudWatch, a minute at a time: each read is a GetMetricData of
  // three metrics (billed per metric), so the page reads once a minute there, every few seconds locally.
  let source: MetricsAnswer['source'] = 'local';
  const view = every(() => (source === 'cloudwatch' ? CLOUDWATCH_REFRESH_MS : REFRESH_MS), refresh);
  return {
    stop: () => {
      view.stop();
      chart?.destroy();
    },
  };
};

/**
 * `GET /v1/metrics`: the operator console's overview figures. The consumer's counts per minute
 * come from the metrics source (CloudWatch deployed, the recorder locally); the lag figures are
 * taken now from the active groups, with the lag job's thresholds, so that the console and the lag
 * alarms count alike.
 */
import { summarizeLag, type GroupLag, type LagThresholds } from '../../core/lag.js';
import { buildMetricsAnswer, metricsWindowOf, parseMetricsQuery, type MetricsAnswer, type MetricsSource } from '../../core/metrics.js';
import type { Route } from '../http.js';
import { errorResponse, type Answer } from '../responses.js';

export interface MetricsRoutesDeps {
  readonly listActiveGroups: () => Promise<GroupLag[]>;
  readonly metricsSource: MetricsSource;
  /** The lag job's thresholds (`lagThresholdsOf`). */
  readonly lagThresholds: LagThresholds;
  readonly now: () => Date;
}

/** The metrics route, by its route key. */
export function createMetricsRoutes(deps: MetricsRoutesDeps): Readonly<Record<'GET /v1/metrics', Route>> {
  return {
    'GET /v1/metrics': async (event): Answer<MetricsAnswer> => {
      const query = parseMetricsQuery(event.queryStringParameters);
      if (!query.ok) return errorResponse(query.refusal);
      const { minutes } = query.value;
      const now = deps.now();
      const [series, groups] = await Promise.all([deps.metricsSource.readConsumerSeries(metricsWindowOf(minutes, now)), deps.listActiveGroups()]);
      return {
        statusCode: 200,
        body: buildMetricsAnswer({ minutes, now, series, lag: summarizeLag(groups, now, deps.lagThresholds) }),
      };
    },
  };
}

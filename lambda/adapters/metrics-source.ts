/**
 * The deployed metrics source: the consumer's counts (CONSUMER_METRICS, published per invocation
 * through Powertools Metrics EMF) read back from CloudWatch with GetMetricData, one `Sum` per
 * minute of each. CloudWatch answers each period by its start time, leaves out a period with no
 * datapoint (the core zero-fills it), and pages with `NextToken`.
 */
import { GetMetricDataCommand, ScanBy, StatusCode, type CloudWatchClient, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { CONSUMER_METRICS, SERVICE_DIMENSION } from '../core/consumer-metrics.js';
import { CONSUMER_SERIES, METRICS_PERIOD_SECONDS, MetricsSourceName, type ConsumerSeriesName, type Datapoint, type MetricsSource } from '../core/metrics.js';
import { IamAction, NO_RESOURCE, type AccessMap } from './access.js';

/**
 * The IAM actions of each method of {@link MetricsSource}: GetMetricData supports no resource-level
 * permissions, so it is declared on no resource (granted on `Resource: *`).
 */
export const METRICS_SOURCE_ACCESS = {
  readConsumerSeries: [{ resource: NO_RESOURCE, actions: [IamAction.getMetricData] }],
} as const satisfies AccessMap<MetricsSource>;

/** CloudWatch refused part of the answer (`Forbidden`, or `InternalError` with no page to retry from): a fault. */
export class MetricDataStatusError extends Error {
  override readonly name = 'MetricDataStatusError';
  constructor(
    readonly queryId: string,
    readonly statusCode: string,
  ) {
    super(`GetMetricData answered ${statusCode} for ${queryId}`);
  }
}

/** The sum per minute of a consumer count: query ids are the series' names (a lowercase letter first, as CloudWatch requires). */
function queryOf(name: ConsumerSeriesName) {
  return {
    Id: name,
    MetricStat: {
      Metric: { Namespace: CONSUMER_METRICS.namespace, MetricName: CONSUMER_METRICS[name], Dimensions: [{ Name: SERVICE_DIMENSION, Value: CONSUMER_METRICS.service }] },
      Period: METRICS_PERIOD_SECONDS,
      Stat: 'Sum',
    },
    ReturnData: true,
  };
}

const isSeriesName = (id: string | undefined): id is ConsumerSeriesName => (CONSUMER_SERIES as readonly (string | undefined)[]).includes(id);

/** The datapoints of one result, paired by position as CloudWatch returns them. */
function datapointsOf(result: MetricDataResult): Datapoint[] {
  const values = result.Values ?? [];
  return (result.Timestamps ?? []).flatMap((at, index) => {
    const sum = values[index];
    return sum === undefined ? [] : [{ at, sum }];
  });
}

export function createMetricsSource(client: CloudWatchClient): MetricsSource {
  return {
    async readConsumerSeries({ since, until }) {
      const series: Record<ConsumerSeriesName, Datapoint[]> = { delivered: [], failedAttempts: [], deadLettered: [] };
      let nextToken: string | undefined;
      do {
        const page = await client.send(
          new GetMetricDataCommand({
            MetricDataQueries: CONSUMER_SERIES.map(queryOf),
            // StartTime inclusive, EndTime exclusive: whole minutes, so CloudWatch rounds neither.
            StartTime: since,
            EndTime: until,
            ScanBy: ScanBy.TIMESTAMP_ASCENDING,
            NextToken: nextToken,
          }),
        );
        nextToken = page.NextToken;
        for (const result of page.MetricDataResults ?? []) {
          if (!isSeriesName(result.Id)) continue;
          // PartialData: the rest comes on the next page. InternalError: retried from NextToken, if any.
          if (result.StatusCode === StatusCode.FORBIDDEN || (result.StatusCode === StatusCode.INTERNAL_ERROR && nextToken === undefined)) {
            throw new MetricDataStatusError(result.Id, result.StatusCode);
          }
          series[result.Id].push(...datapointsOf(result));
        }
      } while (nextToken !== undefined);
      return { ...series, source: MetricsSourceName.cloudwatch };
    },
  };
}

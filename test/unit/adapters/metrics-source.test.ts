import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCloudWatchClient } from '../../../lambda/adapters/aws-clients.js';
import { createMetricsSource, MetricDataStatusError } from '../../../lambda/adapters/metrics-source.js';
import { CONSUMER_METRICS } from '../../../lambda/core/consumer-metrics.js';

const cloudWatchMock = mockClient(CloudWatchClient);
const source = createMetricsSource(createCloudWatchClient({ region: 'us-east-1' }));
const window = { since: new Date('2026-12-02T11:11:00.000Z'), until: new Date('2026-12-02T12:11:00.000Z') };
const minute = (hhmm: string) => new Date(`2026-12-02T${hhmm}:00.000Z`);

beforeEach(() => cloudWatchMock.reset());

describe('createMetricsSource', () => {
  it('asks for the Sum per minute of each consumer count, by namespace, name and service dimension, oldest first', async () => {
    cloudWatchMock.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
    await source.readConsumerSeries(window);
    const calls = cloudWatchMock.commandCalls(GetMetricDataCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      MetricDataQueries: [
        ['delivered', CONSUMER_METRICS.delivered],
        ['failedAttempts', CONSUMER_METRICS.failedAttempts],
        ['deadLettered', CONSUMER_METRICS.deadLettered],
      ].map(([id, metricName]) => ({
        Id: id,
        MetricStat: { Metric: { Namespace: 'OrderedWebhooks', MetricName: metricName, Dimensions: [{ Name: 'service', Value: 'consumer' }] }, Period: 60, Stat: 'Sum' },
        ReturnData: true,
      })),
      StartTime: window.since,
      EndTime: window.until,
      ScanBy: 'TimestampAscending',
      NextToken: undefined,
    });
  });

  it('follows NextToken until it is absent, and joins each series’ datapoints over the pages', async () => {
    cloudWatchMock
      .on(GetMetricDataCommand)
      .resolvesOnce({
        MetricDataResults: [
          { Id: 'delivered', Timestamps: [minute('11:20'), minute('11:21')], Values: [3, 4], StatusCode: 'PartialData' },
          { Id: 'failedAttempts', Timestamps: [minute('11:21')], Values: [2], StatusCode: 'PartialData' },
          { Id: 'deadLettered', Timestamps: [], Values: [], StatusCode: 'PartialData' },
        ],
        NextToken: 'page-2',
      })
      .resolvesOnce({
        MetricDataResults: [
          { Id: 'delivered', Timestamps: [minute('12:10')], Values: [5], StatusCode: 'Complete' },
          { Id: 'deadLettered', Timestamps: [minute('12:09')], Values: [1], StatusCode: 'Complete' },
        ],
      });
    const series = await source.readConsumerSeries(window);
    const calls = cloudWatchMock.commandCalls(GetMetricDataCommand);
    expect(calls.map((call) => call.args[0].input.NextToken)).toEqual([undefined, 'page-2']);
    // Every page asks the same queries over the same window.
    expect(calls[1]?.args[0].input.MetricDataQueries).toEqual(calls[0]?.args[0].input.MetricDataQueries);
    expect(series).toEqual({
      delivered: [
        { at: minute('11:20'), sum: 3 },
        { at: minute('11:21'), sum: 4 },
        { at: minute('12:10'), sum: 5 },
      ],
      failedAttempts: [{ at: minute('11:21'), sum: 2 }],
      deadLettered: [{ at: minute('12:09'), sum: 1 }],
      source: 'cloudwatch',
    });
  });

  it('throws when CloudWatch refuses a series, rather than answering zeros', async () => {
    cloudWatchMock.on(GetMetricDataCommand).resolves({ MetricDataResults: [{ Id: 'delivered', Timestamps: [], Values: [], StatusCode: 'Forbidden' }] });
    await expect(source.readConsumerSeries(window)).rejects.toBeInstanceOf(MetricDataStatusError);
  });
});

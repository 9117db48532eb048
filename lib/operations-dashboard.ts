import { Duration } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FALLING_BEHIND_MESSAGE } from '../lambda/core/lag.js';
import { consumerMetric } from './consumer-metrics.js';
import type { DeliveryAlarms } from './alarms.js';
import type { LagMetricsJob } from './lag-metrics-job.js';

/** Properties of {@link OperationsDashboard}. */
export interface OperationsDashboardProps {
  readonly deliveryQueue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  /** The function behind `POST /v1/events`. */
  readonly ingest: lambda.IFunction;
  /** The HTTP API in front of ingest. */
  readonly httpApi: apigwv2.IHttpApi;
  /** The delivery queue's consumer. */
  readonly consumer: lambda.IFunction;
  /** The event source mapping's maximum concurrency, drawn on the consumer's concurrency graph. */
  readonly consumerMaxConcurrency: number;
  readonly lagMetrics: LagMetricsJob;
  /** Shown as a status row, and as threshold lines on the graphs they watch. */
  readonly alarms: DeliveryAlarms;
}

/** Every graph reads one-minute datapoints: the finest SQS and the lag job publish. */
const PERIOD = Duration.minutes(1);
const THIRD = 8;

/**
 * The worst keys falling behind with their rates, from the lag job's line for each (one per key
 * per run, FALLING_BEHIND_MESSAGE): a metric per key would be a custom metric per key, billed
 * and unbounded, so the dashboard tabulates the log instead, each key's latest line in the range.
 */
const WORST_KEYS_QUERY = [
  'fields @timestamp, message_group_id, accepted_per_minute, delivered_per_minute, oldest_wait_seconds, depth',
  `filter message = '${FALLING_BEHIND_MESSAGE}'`,
  'stats latest(accepted_per_minute) as accepted_per_min, latest(delivered_per_minute) as delivered_per_min, latest(oldest_wait_seconds) as oldest_wait_s, latest(depth) as pending, max(@timestamp) as last_seen by message_group_id',
  'sort last_seen desc, oldest_wait_s desc',
  'limit 20',
];

/**
 * The CloudWatch dashboard of the service, one row per stage of the pipeline: the alarms'
 * states, the delivery queue and its dead letters, the lag of the message groups and the keys
 * falling behind, ingest behind the HTTP API, and the consumer. Lag comes before ingest and
 * consumer because it is what a receiver feels; the rows below explain it.
 */
export class OperationsDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: OperationsDashboardProps) {
    super(scope, id);
    const { deliveryQueue, deadLetterQueue, ingest, httpApi, consumer, lagMetrics, alarms } = props;
    const maximum = { statistic: cloudwatch.Stats.MAXIMUM, period: PERIOD };
    const sum = { statistic: cloudwatch.Stats.SUM, period: PERIOD };
    const p99 = { statistic: cloudwatch.Stats.p(99), period: PERIOD };

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new cloudwatch.AlarmStatusWidget({
            title: 'Alarms',
            alarms: [...alarms.alarms],
            width: 3 * THIRD,
            height: 3,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Delivery queue: messages',
            left: [
              deliveryQueue.metricApproximateNumberOfMessagesVisible({ ...maximum, label: 'Visible' }),
              deliveryQueue.metricApproximateNumberOfMessagesNotVisible({ ...maximum, label: 'In flight' }),
            ],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Delivery queue: oldest message age (s)',
            left: [deliveryQueue.metricApproximateAgeOfOldestMessage({ ...maximum, label: 'Oldest message age' })],
            leftAnnotations: [alarms.oldestMessageAlarm.toAnnotation()],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Backstop dead-letter queue: messages to import',
            left: [deadLetterQueue.metricApproximateNumberOfMessagesVisible({ ...maximum, label: 'Backstop messages' })],
            leftAnnotations: [alarms.backstopAlarm.toAnnotation()],
            width: THIRD,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Lag: longest wait of any group (s)',
            left: [lagMetrics.metricMaxOldestWaitSeconds({ label: 'Longest wait' })],
            leftAnnotations: [alarms.maxGroupWaitAlarm.toAnnotation()],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Lag: stalled groups',
            left: [lagMetrics.metricStalledGroups({ label: 'Stalled groups' })],
            leftAnnotations: [alarms.stalledGroupsAlarm.toAnnotation()],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Lag: backlog (pending events)',
            left: [lagMetrics.metricBacklog({ label: 'Backlog' })],
            width: THIRD,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Lag: keys falling behind (whales)',
            left: [lagMetrics.metricFallingBehindKeys({ label: 'Keys falling behind' })],
            leftAnnotations: [alarms.fallingBehindKeysAlarm.toAnnotation()],
            width: THIRD,
          }),
          new cloudwatch.LogQueryWidget({
            title: 'Lag: keys falling behind, accepted and delivered per minute (latest run first)',
            logGroupNames: [lagMetrics.handler.logGroup.logGroupName],
            queryLines: WORST_KEYS_QUERY,
            view: cloudwatch.LogQueryVisualizationType.TABLE,
            width: 2 * THIRD,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Paused: held groups',
            left: [lagMetrics.metricHeldGroups({ label: 'Held groups' })],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Paused: oldest held event (s; SQS drops it at 1,209,600)',
            left: [lagMetrics.metricOldestHeldSeconds({ label: 'Oldest held' })],
            leftAnnotations: [alarms.oldestHeldAlarm.toAnnotation()],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Delivery queue: visible messages (FIFO looks through the first 120,000)',
            left: [deliveryQueue.metricApproximateNumberOfMessagesVisible({ label: 'Visible', statistic: cloudwatch.Stats.MAXIMUM })],
            leftAnnotations: [alarms.queueBacklogAlarm.toAnnotation()],
            width: THIRD,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Ingest: invocations and errors',
            left: [
              ingest.metricInvocations({ ...sum, label: 'Invocations' }),
              ingest.metricErrors({ ...sum, label: 'Errors' }),
            ],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Ingest: duration p99 (ms)',
            left: [ingest.metricDuration({ ...p99, label: 'Duration p99' })],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'HTTP API: 4xx and 5xx (left), latency p99 in ms (right)',
            left: [
              httpApi.metricClientError({ ...sum, label: '4xx' }),
              httpApi.metricServerError({ ...sum, label: '5xx' }),
            ],
            right: [httpApi.metricLatency({ ...p99, label: 'Latency p99' })],
            width: THIRD,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Consumer: invocations and errors',
            left: [
              consumer.metricInvocations({ ...sum, label: 'Invocations' }),
              consumer.metricErrors({ ...sum, label: 'Errors' }),
            ],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Consumer: duration (ms)',
            left: [
              consumer.metricDuration({ ...p99, label: 'Duration p99' }),
              consumer.metricDuration({ ...maximum, label: 'Duration max' }),
            ],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Consumer: concurrent executions',
            left: [consumer.metric('ConcurrentExecutions', { ...maximum, label: 'Concurrent executions' })],
            // At this line the consumer is saturated: active groups wait for a free invocation.
            leftAnnotations: [{ value: props.consumerMaxConcurrency, label: 'Maximum concurrency' }],
            width: THIRD,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Consumer: delivered and failed attempts per minute',
            left: [consumerMetric('delivered', { label: 'Delivered' }), consumerMetric('failedAttempts', { label: 'Failed attempts' })],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Consumer: dead letters per minute',
            left: [consumerMetric('deadLettered', { label: 'Dead-lettered' })],
            leftAnnotations: [alarms.deadLetteredAlarm.toAnnotation()],
            width: THIRD,
          }),
          new cloudwatch.GraphWidget({
            title: 'Consumer: faults per minute',
            left: [consumerMetric('faults', { label: 'Faults' })],
            leftAnnotations: [alarms.consumerFaultsAlarm.toAnnotation()],
            width: THIRD,
          }),
        ],
      ],
    });
  }

  /** The dashboard's name, generated by CloudFormation. */
  get dashboardName(): string {
    return this.dashboard.dashboardName;
  }
}

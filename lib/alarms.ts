import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { LagMetricsJob } from './lag-metrics-job.js';

/** Properties of {@link DeliveryAlarms}. */
export interface DeliveryAlarmsProps {
  /** The ordered queue whose oldest message is watched. */
  readonly deliveryQueue: sqs.IQueue;
  /** The backstop dead-letter queue, whose depth is watched. */
  readonly deadLetterQueue: sqs.IQueue;
  /** The consumer's count of dead letters (events given up, records set aside). */
  readonly deadLettered: cloudwatch.IMetric;
  /** The consumer's count of records that met a fault. */
  readonly consumerFaults: cloudwatch.IMetric;
  /** Age of the delivery queue's oldest message at which the alarm goes off. */
  readonly oldestMessageAgeThreshold: Duration;
  /**
   * Consecutive one-minute periods the oldest message must be at least that old.
   * @default 3
   */
  readonly oldestMessageEvaluationPeriods?: number;
  /** The lag job, whose metrics and whose own errors are watched. */
  readonly lagMetrics: LagMetricsJob;
  /** Wait of the longest-waiting pending event of any message group at which the alarm goes off. */
  readonly maxGroupWaitThreshold: Duration;
  /** Number of stalled message groups at which the alarm goes off. */
  readonly stalledGroupsThreshold: number;
  /** Wait of a held group's oldest event (a paused subscription's) at which its alarm goes off. */
  readonly heldAgeThreshold: Duration;
  /** Visible messages of the delivery queue at which its alarm goes off. */
  readonly queueBacklogThreshold: number;
  /**
   * Number of keys falling behind (whales) at which their alarm goes off.
   * @default 1
   */
  readonly fallingBehindKeysThreshold?: number;
  /**
   * E-mail address subscribed to the alarms' topic (the subscription must be confirmed).
   * @default - no subscription; subscribe to the topic yourself
   */
  readonly alarmEmail?: string;
}

/**
 * The alarms of the delivery pipeline and the SNS topic they notify, on alarm and on recovery.
 *
 * `ApproximateAgeOfOldestMessage` is queue-wide: it shows a stuck group only while that group's
 * head is the oldest message, so per-group lag is watched on the lag job's metrics as well: the
 * longest wait of any group and the number of stalled groups; a whale, a key fed faster than one
 * event (or batch) per round trip of its endpoint, alarms apart from both, as neither retries nor
 * a fixed receiver help it. The lag job's own errors alarm too,
 * or a broken job would leave those two alarms without data, quietly OK. Dead letters alarm on the
 * consumer's count of them, so every new one alarms again once the last alarm cleared: each is a
 * gap a receiver sees. The backstop queue alarms on its first message: SQS moved a message there
 * behind the consumer's back (a crash loop), and it must be imported into the store.
 *
 * The topic requires TLS. It is not KMS-encrypted: CloudWatch cannot publish to a topic encrypted
 * with the AWS managed key `aws/sns`, and the notifications carry alarm states, never events.
 */
export class DeliveryAlarms extends Construct {
  readonly topic: sns.Topic;
  readonly oldestMessageAlarm: cloudwatch.Alarm;
  readonly backstopAlarm: cloudwatch.Alarm;
  readonly deadLetteredAlarm: cloudwatch.Alarm;
  readonly consumerFaultsAlarm: cloudwatch.Alarm;
  readonly maxGroupWaitAlarm: cloudwatch.Alarm;
  readonly stalledGroupsAlarm: cloudwatch.Alarm;
  readonly fallingBehindKeysAlarm: cloudwatch.Alarm;
  readonly lagJobErrorsAlarm: cloudwatch.Alarm;
  readonly oldestHeldAlarm: cloudwatch.Alarm;
  readonly queueBacklogAlarm: cloudwatch.Alarm;
  /** Every alarm above, each notifying the topic. */
  readonly alarms: readonly cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: DeliveryAlarmsProps) {
    super(scope, id);

    this.topic = new sns.Topic(this, 'Topic', { enforceSSL: true });
    if (props.alarmEmail !== undefined) {
      this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    }

    this.oldestMessageAlarm = new cloudwatch.Alarm(this, 'OldestMessageAge', {
      alarmDescription:
        'The oldest message of the delivery queue has waited too long: ' +
        'a message group is stalled or the consumer is behind.',
      metric: props.deliveryQueue.metricApproximateAgeOfOldestMessage({
        statistic: cloudwatch.Stats.MAXIMUM,
        period: Duration.minutes(1),
      }),
      threshold: props.oldestMessageAgeThreshold.toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: props.oldestMessageEvaluationPeriods ?? 3,
      // SQS stops sending metrics for a queue that has been idle for 6 hours: an idle queue is healthy.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.deadLetteredAlarm = new cloudwatch.Alarm(this, 'DeadLettered', {
      alarmDescription: 'Events were dead-lettered: receivers see a gap in webhook-sequence. See GET /v1/dead-letters.',
      metric: props.deadLettered,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.consumerFaultsAlarm = new cloudwatch.Alarm(this, 'ConsumerFaults', {
      alarmDescription:
        'The consumer met faults (DynamoDB, SQS or S3 errors, missing permissions) in three minutes of five: ' +
        'the records wait and back off, toward 12 hours. See the consumer’s log group.',
      metric: props.consumerFaults,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      // A passing throttle is retried within seconds; a lasting fault holds keys back.
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.backstopAlarm = new cloudwatch.Alarm(this, 'BackstopMessages', {
      alarmDescription:
        'SQS moved messages to the backstop dead-letter queue (a crash loop, or a record the consumer cannot read). ' +
        'Import them into the store of dead letters: POST /v1/dead-letters/import.',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        statistic: cloudwatch.Stats.MAXIMUM,
        period: Duration.minutes(1),
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    // The lag job publishes once a minute, and a run can land in a neighbouring minute: one breaching
    // minute of three raises these alarms, and three quiet minutes clear them, so a missing datapoint
    // does not flap them.
    const lagAlarm = { evaluationPeriods: 3, datapointsToAlarm: 1 };
    this.maxGroupWaitAlarm = new cloudwatch.Alarm(this, 'MaxGroupWait', {
      alarmDescription:
        'A pending event of some message group has waited too long: its group is stalled or slow. ' +
        'See GET /v1/lag for the worst groups.',
      metric: props.lagMetrics.metricMaxOldestWaitSeconds(),
      threshold: props.maxGroupWaitThreshold.toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...lagAlarm,
      // No datapoint means no run: a failing lag job has its own alarm below.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.stalledGroupsAlarm = new cloudwatch.Alarm(this, 'StalledGroups', {
      alarmDescription:
        'Message groups have a head that keeps failing: their later events wait behind it. ' +
        'See GET /v1/lag for the groups and their last errors.',
      metric: props.lagMetrics.metricStalledGroups(),
      threshold: props.stalledGroupsThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...lagAlarm,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // A whale is a key at its ceiling, not a failure: it must last. Three breaching minutes of five
    // (a run can land in a neighbouring minute) raise it; a burst a key works off in a minute or two does not.
    this.fallingBehindKeysAlarm = new cloudwatch.Alarm(this, 'FallingBehindKeys', {
      alarmDescription:
        'Keys are falling behind: each accepts events at least as fast as it delivers them, one event (or batch) per round trip of its endpoint, ' +
        'and its oldest wait keeps growing. Raise the subscription batch_size, set ordering "resource", or have the receiver answer faster. ' +
        'See GET /v1/lag (is_falling_behind) and the dashboard.',
      metric: props.lagMetrics.metricFallingBehindKeys(),
      threshold: props.fallingBehindKeysThreshold ?? 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      // No datapoint means no run: LagJobErrors alarms on that.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.oldestHeldAlarm = new cloudwatch.Alarm(this, 'OldestHeld', {
      alarmDescription:
        'A paused subscription has held events for long: SQS drops a message 14 days after it was sent, and these are lost then. ' +
        'Resume the subscription (POST /v1/subscriptions/{id}/resume), or skip its head. See GET /v1/lag (is_paused) and the lag job’s warnings.',
      metric: props.lagMetrics.metricOldestHeldSeconds(),
      threshold: props.heldAgeThreshold.toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      ...lagAlarm,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // Visible messages, not in flight: a FIFO queue looks for a group to hand out among its first
    // 120,000 messages only, so a backlog past that (a failing or paused key fed without pause)
    // hides every group queued behind it.
    this.queueBacklogAlarm = new cloudwatch.Alarm(this, 'QueueBacklog', {
      alarmDescription:
        'The delivery queue holds many messages: SQS FIFO looks for available message groups among its first 120,000 only, so groups behind a large backlog wait. ' +
        'See GET /v1/lag for the deepest groups; pause their producers, resume or skip their heads.',
      metric: props.deliveryQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, period: Duration.minutes(5) }),
      threshold: props.queueBacklogThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.lagJobErrorsAlarm = new cloudwatch.Alarm(this, 'LagJobErrors', {
      alarmDescription:
        'The lag job failed: the lag metrics, and the alarms on them, are missing. See its log group.',
      metric: props.lagMetrics.handler.function.metricErrors({
        statistic: cloudwatch.Stats.SUM,
        period: Duration.minutes(5),
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.alarms = [
      this.oldestMessageAlarm,
      this.deadLetteredAlarm,
      this.consumerFaultsAlarm,
      this.backstopAlarm,
      this.maxGroupWaitAlarm,
      this.stalledGroupsAlarm,
      this.fallingBehindKeysAlarm,
      this.oldestHeldAlarm,
      this.queueBacklogAlarm,
      this.lagJobErrorsAlarm,
    ];
    const action = new SnsAction(this.topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}

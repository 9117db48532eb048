import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Properties of {@link DeliveryAlarms}. */
export interface DeliveryAlarmsProps {
  /** The ordered queue whose oldest message is watched. */
  readonly deliveryQueue: sqs.IQueue;
  /** The dead-letter queue whose depth is watched. */
  readonly deadLetterQueue: sqs.IQueue;
  /** Age of the delivery queue's oldest message at which the alarm goes off. */
  readonly oldestMessageAgeThreshold: Duration;
  /**
   * Consecutive one-minute periods the oldest message must be at least that old.
   * @default 3
   */
  readonly oldestMessageEvaluationPeriods?: number;
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
 * head is the oldest message, so per-group lag needs the project's own metric as well. The
 * dead-letter alarm fires on the first message, because every dead letter is a gap a receiver sees.
 *
 * The topic requires TLS. It is not KMS-encrypted: CloudWatch cannot publish to a topic encrypted
 * with the AWS managed key `aws/sns`, and the notifications carry alarm states, never events.
 */
export class DeliveryAlarms extends Construct {
  readonly topic: sns.Topic;
  readonly oldestMessageAlarm: cloudwatch.Alarm;
  readonly deadLetterAlarm: cloudwatch.Alarm;

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

    this.deadLetterAlarm = new cloudwatch.Alarm(this, 'DeadLetters', {
      alarmDescription: 'Events were dead-lettered: receivers see a gap in webhook-sequence. See GET /v1/dead-letters.',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        statistic: cloudwatch.Stats.MAXIMUM,
        period: Duration.minutes(1),
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    const action = new SnsAction(this.topic);
    for (const alarm of [this.oldestMessageAlarm, this.deadLetterAlarm]) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}

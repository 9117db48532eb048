import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { NOTICE_TOPIC } from '../lambda/resources.js';

/** An action of the notice topic's grants. */
export type NoticeAction = `sns:${string}`;

export interface NoticeTopicProps {
  /**
   * E-mail address subscribed to the notices (the alarms' `ALARM_EMAIL`); the subscription must be confirmed.
   * @default - no subscription; subscribe to the topic yourself
   */
  readonly email?: string;
}

/**
 * The SNS topic of operational notices (NOTICE_TOPIC): one message per automatic pause, a JSON
 * object of ids, times and the endpoint's last failure, never an event. Apart from the alarm
 * topic, whose subscribers (chat, paging integrations) expect CloudWatch's alarm messages only.
 * Only the project's functions publish to it, so it is encrypted with the AWS managed key of SNS
 * (whose key policy lets the account's principals use it through SNS), and it requires TLS.
 */
export class NoticeTopic extends Construct {
  readonly topic: sns.Topic;

  constructor(scope: Construct, id: string, props: NoticeTopicProps = {}) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', {
      enforceSSL: true,
      masterKey: kms.Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns'),
    });
    if (props.email !== undefined) this.topic.addSubscription(new EmailSubscription(props.email));
  }

  /** Lets `fn` make `actions` on the topic, by its ARN, and tells it the ARN. */
  grantTopicActions(fn: lambda.Function, actions: readonly NoticeAction[]): void {
    if (actions.length === 0) throw new Error('A grant on the notice topic names no action');
    iam.Grant.addToPrincipal({ grantee: fn, actions: [...actions], resourceArns: [this.topic.topicArn] });
    fn.addEnvironment(NOTICE_TOPIC.envVar, this.topic.topicArn);
  }
}

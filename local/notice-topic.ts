/**
 * The notice topic (NOTICE_TOPIC, lambda/resources.ts) in fauxqs's SNS, as the CDK stack declares
 * it: notices are published locally exactly as deployed, and a test or a user can subscribe a
 * queue to read them. Creating a topic that exists answers its ARN, as on AWS.
 */
import { CreateTopicCommand, type SNSClient } from '@aws-sdk/client-sns';
import { NOTICE_TOPIC } from '../lambda/resources.js';

/** Creates the topic unless it exists; resolves to its ARN. */
export async function ensureNoticeTopic(sns: SNSClient): Promise<string> {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: NOTICE_TOPIC.localName }));
  if (TopicArn === undefined) throw new Error(`creating the topic ${NOTICE_TOPIC.localName} answered no ARN`);
  return TopicArn;
}

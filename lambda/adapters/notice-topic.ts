/**
 * The notice topic (NOTICE_TOPIC): operational notices as SNS messages, for whoever subscribed
 * (an e-mail address, a chat integration, a queue). A notice names ids and reasons, never an
 * event's payload or a secret.
 */
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { PauseNotice } from '../core/pause.js';
import type { AccessMap } from './access.js';

export interface NoticeTopic {
  /** Publishes one notice of an automatic pause. */
  readonly publishPause: (notice: PauseNotice) => Promise<void>;
}

/** The IAM actions of each method of {@link NoticeTopic}, on the notice topic. */
export const NOTICE_TOPIC_ACCESS = {
  publishPause: [{ resource: 'noticeTopic', actions: ['sns:Publish'] }],
} as const satisfies AccessMap<NoticeTopic>;

/** SNS's longest subject: 100 characters. */
const MAX_SUBJECT_LENGTH = 100;

export function createNoticeTopic(client: SNSClient, topicArn: string): NoticeTopic {
  return {
    async publishPause(notice) {
      await client.send(
        new PublishCommand({
          TopicArn: topicArn,
          Subject: `ordered-webhooks: subscription ${notice.subscription_id} paused`.slice(0, MAX_SUBJECT_LENGTH),
          Message: JSON.stringify(notice),
          // Subscribers may filter on the kind of notice without reading the message.
          MessageAttributes: { notice: { DataType: 'String', StringValue: notice.notice } },
        }),
      );
    },
  };
}

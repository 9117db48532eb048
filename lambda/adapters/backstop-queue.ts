/**
 * The FIFO dead-letter queue, which is only SQS's backstop: the consumer sets records it cannot
 * read aside there, SQS moves crash-looping messages there, and the operations function imports
 * what holds an event into the store of dead letters.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { BackstopMessage } from '../core/backstop-import.js';
import type { UnreadableRecord } from '../core/delivery.js';
import { MAX_SQS_BATCH_ENTRIES } from '../core/limits.js';
import type { AccessMap } from './access.js';

/** Names of the attributes an unreadable record carries beside its body. */
export const UnreadableRecordAttribute = {
  reason: 'reason',
  deadLetteredAt: 'dead_lettered_at',
} as const;

/** SQS message attributes are part of the 1 MiB; a reason is a sentence, not a log. */
const MAX_REASON_LENGTH = 1024;

/** Long enough to import a received batch; what is not removed is released explicitly. */
const HOLD_SECONDS = 60;

export interface BackstopQueue {
  /** Sets a record the consumer cannot read aside, as received, with why. */
  readonly quarantine: (record: UnreadableRecord) => Promise<void>;
  readonly receive: () => Promise<readonly BackstopMessage[]>;
  readonly release: (messages: readonly BackstopMessage[]) => Promise<void>;
  readonly remove: (message: BackstopMessage) => Promise<void>;
}

/** The IAM actions of each method of {@link BackstopQueue}, all on the dead-letter queue. Never a purge. */
export const BACKSTOP_QUEUE_ACCESS = {
  quarantine: [{ resource: 'deadLetterQueueUrl', actions: ['sqs:SendMessage'] }],
  receive: [{ resource: 'deadLetterQueueUrl', actions: ['sqs:ReceiveMessage'] }],
  // ChangeMessageVisibilityBatch.
  release: [{ resource: 'deadLetterQueueUrl', actions: ['sqs:ChangeMessageVisibility'] }],
  remove: [{ resource: 'deadLetterQueueUrl', actions: ['sqs:DeleteMessage'] }],
} as const satisfies AccessMap<BackstopQueue>;

export function createBackstopQueue(client: SQSClient, queueUrl: string): BackstopQueue {
  return {
    async quarantine(record) {
      // Same message group, deduplicated by the SQS message id: a retried send is not doubled.
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: record.body === '' ? '(empty body)' : record.body,
          MessageGroupId: record.messageGroupId,
          MessageDeduplicationId: record.messageId,
          MessageAttributes: {
            [UnreadableRecordAttribute.reason]: { DataType: 'String', StringValue: record.reason.slice(0, MAX_REASON_LENGTH) },
            [UnreadableRecordAttribute.deadLetteredAt]: { DataType: 'String', StringValue: record.at },
          },
        }),
      );
    },

    async receive() {
      const output = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: MAX_SQS_BATCH_ENTRIES,
          WaitTimeSeconds: 1,
          VisibilityTimeout: HOLD_SECONDS,
          MessageSystemAttributeNames: ['MessageGroupId', 'ApproximateReceiveCount'],
        }),
      );
      return (output.Messages ?? []).flatMap((message) =>
        message.MessageId === undefined || message.ReceiptHandle === undefined
          ? []
          : [
              {
                messageId: message.MessageId,
                receiptHandle: message.ReceiptHandle,
                messageGroupId: message.Attributes?.MessageGroupId ?? '',
                body: message.Body ?? '',
                receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 0),
              },
            ],
      );
    },

    async release(messages) {
      for (let start = 0; start < messages.length; start += MAX_SQS_BATCH_ENTRIES) {
        const chunk = messages.slice(start, start + MAX_SQS_BATCH_ENTRIES);
        await client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((message, index) => ({ Id: String(index), ReceiptHandle: message.receiptHandle, VisibilityTimeout: 0 })),
          }),
        );
      }
    },

    async remove(message) {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
    },
  };
}

/**
 * Reading the FIFO dead-letter queue for a redrive: receive, release, remove, and send another
 * key's dead letter to the back of its group.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import type { DeadLetterMessage } from '../core/redrive.js';
import { DeadLetterAttribute } from './sqs-queues.js';

/** Long enough to enqueue and remove a batch's dead letters; released explicitly after. */
const HOLD_SECONDS = 60;

export interface DeadLetterQueue {
  readonly receive: () => Promise<readonly DeadLetterMessage[]>;
  readonly release: (messages: readonly DeadLetterMessage[]) => Promise<void>;
  readonly remove: (message: DeadLetterMessage) => Promise<void>;
  readonly moveToBack: (message: DeadLetterMessage) => Promise<void>;
}

export function createDeadLetterQueue(client: SQSClient, queueUrl: string): DeadLetterQueue {
  return {
    async receive() {
      const output = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: HOLD_SECONDS,
          MessageSystemAttributeNames: ['MessageGroupId'],
          MessageAttributeNames: ['All'],
        }),
      );
      return (output.Messages ?? []).flatMap((message) => {
        if (message.MessageId === undefined || message.ReceiptHandle === undefined) return [];
        const sequence = Number(message.MessageAttributes?.[DeadLetterAttribute.sequence]?.StringValue);
        return [
          {
            messageId: message.MessageId,
            receiptHandle: message.ReceiptHandle,
            messageGroupId: message.Attributes?.MessageGroupId ?? '',
            body: message.Body ?? '',
            sequence: Number.isInteger(sequence) && sequence > 0 ? sequence : undefined,
            attributes: Object.fromEntries(
              Object.entries(message.MessageAttributes ?? {}).flatMap(([name, value]) =>
                value.DataType === undefined || value.StringValue === undefined ? [] : [[name, { dataType: value.DataType, value: value.StringValue }]],
              ),
            ),
          },
        ];
      });
    },

    async release(messages) {
      for (let start = 0; start < messages.length; start += 10) {
        const chunk = messages.slice(start, start + 10);
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

    async moveToBack(message) {
      const attributes = Object.entries(message.attributes);
      // The copy keeps the dead letter's attributes; a fresh deduplication id, or SQS would drop it.
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: message.body,
          MessageGroupId: message.messageGroupId,
          MessageDeduplicationId: randomUUID(),
          ...(attributes.length === 0
            ? {}
            : { MessageAttributes: Object.fromEntries(attributes.map(([name, { dataType, value }]) => [name, { DataType: dataType, StringValue: value }])) }),
        }),
      );
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
    },
  };
}

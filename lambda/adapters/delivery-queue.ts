/**
 * The delivery queue, as the functions call it: enqueue in batches, change the visibility of the
 * records of a batch, read its approximate counts. Bound to the queue's URL, so that each call's
 * resource is the delivery queue.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type QueueAttributeName,
  type SendMessageBatchCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { VisibilityChange } from '../core/consumer-batch.js';
import { SendFailureKind, type SendBatch, type SendFailure } from '../core/enqueue-plan.js';
import type { AccessMap } from './access.js';
import { classifySqsError } from './sqs-errors.js';

/** SQS takes at most 10 entries per batch action. */
const MAX_BATCH_ENTRIES = 10;

/** The delivery queue's approximate counts: visible, in flight (received, not deleted) and delayed. */
export interface QueueCounts {
  readonly queued: number;
  readonly inFlight: number;
  readonly delayed: number;
}

export interface DeliveryQueue {
  /**
   * Sends one SendMessageBatch. Entry ids are the messages' request indexes. Resolves to the
   * entries SQS did not take, each classified by `classifySqsError`, and the sequence numbers of
   * those it took. A call that fails as a whole fails every entry, with the call's classification:
   * an outcome rather than a fault (see `sentOrRefused`), so that ingest can answer per event.
   */
  readonly sendBatch: SendBatch;
  /**
   * Applies the visibility changes of a batch plan in one call (at most 10 entries, as a batch
   * holds at most 10 records). A refused change is logged: the message then reappears after its
   * current visibility timeout, later than planned but still in order.
   */
  readonly changeVisibility: (changes: readonly VisibilityChange[]) => Promise<void>;
  /**
   * Lets held messages go (visibility 0) by their receipt handles, ten per call, the calls side by
   * side (the caller bounds how many handles it gives at once). A handle SQS
   * refuses is of a message received again or deleted since: its hold is over, and it is not
   * counted. A refusal worth a retry (throttling, SQS unavailable) throws, so that the caller's
   * caller tries again. How many SQS let go.
   */
  readonly letGo: (receiptHandles: readonly string[]) => Promise<number>;
  readonly counts: () => Promise<QueueCounts>;
}

/** The IAM actions of each method of {@link DeliveryQueue}, all on the delivery queue. */
export const DELIVERY_QUEUE_ACCESS = {
  // SendMessageBatch.
  sendBatch: [{ resource: 'deliveryQueueUrl', actions: ['sqs:SendMessage'] }],
  // ChangeMessageVisibilityBatch.
  changeVisibility: [{ resource: 'deliveryQueueUrl', actions: ['sqs:ChangeMessageVisibility'] }],
  // ChangeMessageVisibilityBatch.
  letGo: [{ resource: 'deliveryQueueUrl', actions: ['sqs:ChangeMessageVisibility'] }],
  counts: [{ resource: 'deliveryQueueUrl', actions: ['sqs:GetQueueAttributes'] }],
} as const satisfies AccessMap<DeliveryQueue>;

/**
 * Sends one SendMessageBatch, translating a call that fails as a whole into its classified
 * failure: the one deliberate translation of an SDK error in this adapter. The caller cannot know
 * which entries SQS took, and the contract's partial-failure rule needs an answer per event, not a
 * fault: a transient failure is answered `503 enqueue_failed` (the producer's retry is safe, SQS
 * deduplicates by event id), a permanent one `500` (our configuration). Only the call is guarded:
 * an error while building the command or reading its output is a fault and propagates.
 */
async function sentOrRefused(client: SQSClient, command: SendMessageBatchCommand, logger: Logger): Promise<SendMessageBatchCommandOutput | SendFailure> {
  try {
    return await client.send(command);
  } catch (error) {
    const failure = classifySqsError({ source: 'call', error });
    logger.error('SendMessageBatch failed as a whole; every entry counts as refused', { error, failure, entries: command.input.Entries?.length ?? 0 });
    return failure;
  }
}

export function createDeliveryQueue(client: SQSClient, queueUrl: string, logger: Logger): DeliveryQueue {
  return {
    async sendBatch(entries) {
      const command = new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: entries.map((message) => ({
          Id: String(message.index),
          MessageBody: message.body,
          MessageGroupId: message.messageGroupId,
          MessageDeduplicationId: message.deduplicationId,
        })),
      });
      const output = await sentOrRefused(client, command, logger);
      if ('kind' in output) return { refused: new Map(entries.map((message) => [message.index, output])), sequenceNumbers: new Map() };
      const refused = new Map<number, SendFailure>();
      for (const entry of output.Failed ?? []) {
        const failure = classifySqsError({ source: 'entry', code: entry.Code, isSenderFault: entry.SenderFault });
        logger.warn('SQS refused an entry', { entryId: entry.Id, code: entry.Code, senderFault: entry.SenderFault, kind: failure.kind });
        refused.set(Number(entry.Id), failure);
      }
      // The SDK repeats a call whose answer it did not get, with the same deduplication ids. SQS then
      // takes each entry at most once, but what it answers for an entry it deduplicated is not
      // documented: only a call answered at its first attempt names each message's own number.
      const isFirstAnswer = (output.$metadata.attempts ?? 1) === 1;
      const sequenceNumbers = new Map<number, string>();
      for (const entry of isFirstAnswer ? (output.Successful ?? []) : []) {
        if (entry.SequenceNumber !== undefined) sequenceNumbers.set(Number(entry.Id), entry.SequenceNumber);
      }
      return { refused, sequenceNumbers };
    },

    async changeVisibility(changes) {
      if (changes.length === 0) return;
      const output = await client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: changes.map((change, index) => ({
            Id: String(index),
            ReceiptHandle: change.receiptHandle,
            VisibilityTimeout: change.timeoutSeconds,
          })),
        }),
      );
      for (const failure of output.Failed ?? []) {
        const change = changes[Number(failure.Id)];
        logger.warn('SQS refused a visibility change', { messageId: change?.messageId, code: failure.Code });
      }
    },

    async letGo(receiptHandles) {
      const batches: string[][] = [];
      for (let start = 0; start < receiptHandles.length; start += MAX_BATCH_ENTRIES) batches.push(receiptHandles.slice(start, start + MAX_BATCH_ENTRIES));
      const released = await Promise.all(
        batches.map(async (handles) => {
          const output = await client.send(
            new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: handles.map((handle, index) => ({ Id: String(index), ReceiptHandle: handle, VisibilityTimeout: 0 })) }),
          );
          for (const failure of output.Failed ?? []) {
            const { kind } = classifySqsError({ source: 'entry', code: failure.Code, isSenderFault: failure.SenderFault });
            if (kind === SendFailureKind.transient) throw new Error(`SQS could not let a held message go for now (${failure.Code ?? 'no code'}); try again`);
            // Received again or deleted since: that receive sees the pause as it is now.
            logger.info('a held message was let go already', { code: failure.Code });
          }
          return output.Successful?.length ?? 0;
        }),
      );
      return released.reduce((sum, count) => sum + count, 0);
    },

    async counts() {
      const output = await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const count = (name: QueueAttributeName): number => Number(output.Attributes?.[name] ?? 0);
      return {
        queued: count('ApproximateNumberOfMessages'),
        inFlight: count('ApproximateNumberOfMessagesNotVisible'),
        delayed: count('ApproximateNumberOfMessagesDelayed'),
      };
    },
  };
}

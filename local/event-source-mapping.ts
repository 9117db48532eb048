/**
 * Plays Lambda's SQS event source mapping for a FIFO queue with `ReportBatchItemFailures`:
 * `concurrency` pollers, each long-polling up to 10 messages, invoking the function with them and
 * a context whose `getRemainingTimeInMillis` counts down the function's timeout, then deleting the
 * records the function did not report as failed. A thrown error, or a response Lambda would not
 * accept, leaves the whole batch to come back after its visibility timeout.
 */
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { CONSUMER_BATCH_SIZE } from '../lambda/config.js';
import { toSqsEvent, type EventSource } from './sqs-event.js';

/**
 * Long-poll wait. Lambda waits up to 20 s; a short wait keeps stopping prompt, since a poller
 * finishes its current receive (and the batch it returns) before it stops. A receive is never
 * aborted: aborting the call would not undo the dequeue, and the messages would stay invisible
 * for the queue's visibility timeout.
 */
export const RECEIVE_WAIT_SECONDS = 1;

/** Pause after a failed ReceiveMessage, so that an emulator fault does not spin a poller. */
const RECEIVE_ERROR_PAUSE_MS = 500;

export interface EventSourceMappingOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly source: EventSource;
  /** The function: the consumer handler. */
  readonly invoke: (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<SQSBatchResponse | void>;
  /**
   * The function's timeout (the consumer's: `consumerTimeoutSeconds`). Lambda's context counts down
   * from it; this mapping only reports it and, unlike Lambda, does not stop a function that overruns.
   */
  readonly functionTimeoutSeconds: number;
  /** Concurrent invocations: the mapping's maximum concurrency. */
  readonly concurrency: number;
  readonly logger: Logger;
}

export interface EventSourceMapping {
  /** Stops polling; resolves when every poller's current batch is finished and settled. */
  readonly stop: () => Promise<void>;
}

/**
 * The message ids to delete after an invocation, or undefined when the whole batch failed.
 * Lambda fails the whole batch when the function throws, or when its response names an item
 * that is empty or not in the batch.
 */
export function messagesToDelete(batch: readonly Message[], response: SQSBatchResponse | void): Message[] | undefined {
  const ids = new Set(batch.map((message) => message.MessageId));
  const failures = response?.batchItemFailures ?? [];
  const failed = new Set<string>();
  for (const failure of failures) {
    const id: unknown = failure.itemIdentifier;
    if (typeof id !== 'string' || id === '' || !ids.has(id)) return undefined;
    failed.add(id);
  }
  return batch.filter((message) => message.MessageId !== undefined && !failed.has(message.MessageId));
}

/** Starts the pollers. */
export function startEventSourceMapping(options: EventSourceMappingOptions): EventSourceMapping {
  const { sqs, queueUrl, logger } = options;
  let isStopping = false;

  const receive = async (): Promise<Message[]> => {
    const output = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: CONSUMER_BATCH_SIZE,
        WaitTimeSeconds: RECEIVE_WAIT_SECONDS,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    return output.Messages ?? [];
  };

  const settle = async (toDelete: readonly Message[]): Promise<void> => {
    if (toDelete.length === 0) return;
    const output = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: toDelete.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
    for (const failure of output.Failed ?? []) {
      logger.warn('SQS refused to delete a processed message; it will be received again', { entryId: failure.Id, code: failure.Code });
    }
  };

  const invokeOnce = async (batch: readonly Message[]): Promise<void> => {
    let response: SQSBatchResponse | void;
    const deadline = Date.now() + options.functionTimeoutSeconds * 1000;
    const context = { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) };
    try {
      response = await options.invoke(toSqsEvent(batch, options.source), context);
    } catch (error) {
      logger.error('consumer invocation failed; the whole batch stays queued', { messages: batch.length, error });
      return;
    }
    const toDelete = messagesToDelete(batch, response);
    if (toDelete === undefined) {
      logger.error('consumer response names a record not in the batch; the whole batch stays queued', { messages: batch.length });
      return;
    }
    await settle(toDelete);
  };

  const poll = async (poller: number): Promise<void> => {
    while (!isStopping) {
      try {
        const batch = await receive();
        // A batch received while stopping is still processed: it is in flight already.
        if (batch.length > 0) await invokeOnce(batch);
      } catch (error) {
        if (isStopping) break;
        logger.error('poller failed; retrying', { poller, error });
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_ERROR_PAUSE_MS));
      }
    }
  };

  const pollers = Array.from({ length: options.concurrency }, (_, poller) => poll(poller));
  return {
    stop: async () => {
      isStopping = true;
      await Promise.all(pollers);
    },
  };
}

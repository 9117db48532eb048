/**
 * A model of Lambda's SQS event source mapping (ESM) for a FIFO queue with
 * `ReportBatchItemFailures`, run on the simulation's scheduler against the SQS model. It is AWS's
 * side of the system, so its SQS calls go straight to the model (never through the code under
 * test's call gate); each takes simulated time.
 *
 * Sources, cited where each rule is applied:
 * - [Scaling] https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 * - [Errors] https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 * - [Configure] https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 * - [Parameters] https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html
 *
 * How it runs: `maxConcurrency` pollers, each looping receive → invoke → delete. A poller holds at
 * most one batch, so invocations never exceed `maxConcurrency`; and SQS hands out no message of a
 * group behind an in-flight one, so they do not exceed the number of active groups either
 * ([Scaling]: "concurrent invocations are capped either by the number of message group IDs or the
 * maximum concurrency setting, whichever is lower"). One exception comes from SQS itself (see
 * `GroupLock`): a head made visible while its successors stay in flight can be received by a
 * second poller while the first still holds those successors.
 */
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { messagesToDelete } from '../../../local/event-source-mapping.js';
import { toSqsEvent } from '../../../local/sqs-event.js';
import { Life, type Scheduler } from '../scheduler.js';
import { SIMULATED_REGION, type SqsFifoModel } from './sqs-fifo-model.js';

/** [Parameters]: BatchSize for a FIFO queue is at most 10 (and no batching window). */
export const MAX_FIFO_BATCH_SIZE = 10;

/** A range of simulated milliseconds, both ends included; each use draws from the scheduler's random source. */
export interface DurationRange {
  readonly minMs: number;
  readonly maxMs: number;
}

/** A record whose deletion the simulation may make fail. */
export interface DeleteCandidate {
  readonly messageId: string;
  readonly messageGroupId: string;
}

export interface EventSourceMappingModelOptions {
  readonly scheduler: Scheduler;
  readonly sqs: SqsFifoModel;
  readonly queueUrl: string;
  /** The function. It runs in its own `Life`, killed at the function timeout. */
  readonly invoke: (event: SQSEvent) => Promise<SQSBatchResponse | void>;
  /** The mapping's maximumConcurrency (2–1,000 on AWS, [Scaling]); here the number of pollers. */
  readonly maxConcurrency: number;
  /** Records per invocation, 1–10 for a FIFO queue ([Parameters]). */
  readonly batchSize: number;
  /** The function's timeout; at most the queue's visibility timeout ([Configure]: Lambda refuses the mapping otherwise). */
  readonly functionTimeoutMs: number;
  /** Probability that an invocation attempt is throttled. Default 0. */
  readonly throttleChance?: number;
  /** How long Lambda waits before retrying a throttled invocation. Default 1–10 s. */
  readonly throttleRetryDelay?: DurationRange;
  /** Latency of each half of an SQS call (request, then response). Default 1–20 ms. */
  readonly sqsLatency?: DurationRange;
  /** Time from a batch in hand to the function starting. Default 1–50 ms. */
  readonly invokeLatency?: DurationRange;
  /** Pause after an empty receive before the next one. Default 200–1,000 ms. */
  readonly emptyReceiveWait?: DurationRange;
  /**
   * For plans of days: after each further empty receive in a row the pause's range doubles, up to
   * this many ms, and a receive that returns messages starts over. Only when messages wait does a
   * delay matter, and none are then: a poller idle for days costs a few thousand steps, not a
   * million. Unset: the pause never grows.
   */
  readonly idleBackoffMaxMs?: number;
  /**
   * The simulation's fault hook for the mapping's own deletes: a record for which it answers true
   * is not deleted (as if DeleteMessageBatch failed for it), and comes back after its visibility
   * timeout, as on AWS.
   */
  readonly shouldFailDelete?: (record: DeleteCandidate) => boolean;
  /** Names the pollers' and invocations' lives. Default `esm`. */
  readonly name?: string;
}

/** What the mapping did, for the simulation's checks. Counters only grow, except `concurrentInvocations`. */
export interface EventSourceMappingStats {
  receives: number;
  emptyReceives: number;
  messagesReceived: number;
  invocations: number;
  invocationsReturned: number;
  invocationsThrew: number;
  invocationsTimedOut: number;
  /** Responses Lambda refuses (an empty or unknown itemIdentifier): the whole batch is left. */
  responsesRejected: number;
  throttles: number;
  /** Throttled batches given up once their visibility timeout had passed ([Errors]). */
  batchesDroppedAfterThrottle: number;
  messagesDeleted: number;
  /** Records whose delete failed: the fault hook, or SQS refusing the handle (expired). */
  deleteFailures: number;
  concurrentInvocations: number;
  maxConcurrentInvocations: number;
}

/** The running mapping. */
export interface EventSourceMappingModel {
  /** Stops polling; each poller finishes the batch it holds, then ends. */
  readonly stop: () => void;
  readonly stats: Readonly<EventSourceMappingStats>;
}

/** The mapping was configured in a way Lambda refuses. */
export class EventSourceMappingConfigurationError extends Error {
  override readonly name = 'EventSourceMappingConfigurationError';
}

type InvocationOutcome =
  | { readonly kind: 'returned'; readonly response: SQSBatchResponse | void }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'timedOut' };

const DEFAULT_THROTTLE_RETRY_DELAY: DurationRange = { minMs: 1000, maxMs: 10_000 };
const DEFAULT_SQS_LATENCY: DurationRange = { minMs: 1, maxMs: 20 };
const DEFAULT_INVOKE_LATENCY: DurationRange = { minMs: 1, maxMs: 50 };
const DEFAULT_EMPTY_RECEIVE_WAIT: DurationRange = { minMs: 200, maxMs: 1000 };

/**
 * Starts the mapping's pollers on the scheduler.
 *
 * Per batch, as Lambda does it:
 * - receive up to `batchSize` messages with all system and message attributes, with the queue's
 *   visibility timeout; an empty receive is followed by a pause, standing in for a long poll;
 * - [Errors] a throttled invocation is retried after a delay, "until the message's timestamp
 *   exceeds your queue's visibility timeout, at which point Lambda drops the message": a retry
 *   that starts just before that runs on while the messages become visible and may be received
 *   again by another poller (hence [Configure]'s visibility timeout of 6 × the function timeout);
 * - the function runs in its own `Life`; at `functionTimeoutMs` the life is killed: nothing is
 *   deleted and the messages come back when their visibility timeout ends ([Errors]: "After your
 *   queue's visibility timeout runs out, the message will again reappear in the queue");
 * - a thrown error leaves the whole batch; so does a response naming an empty or unknown
 *   itemIdentifier ([Errors], partial batch responses; the project's rule `messagesToDelete`);
 * - otherwise the records not reported failed are deleted with DeleteMessageBatch.
 */
export function startEventSourceMappingModel(options: EventSourceMappingModelOptions): EventSourceMappingModel {
  const { scheduler, sqs, queueUrl } = options;
  const settings = sqs.queueSettings(queueUrl);
  if (!Number.isInteger(options.maxConcurrency) || options.maxConcurrency < 1) throw new EventSourceMappingConfigurationError('maxConcurrency must be a positive integer');
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1 || options.batchSize > MAX_FIFO_BATCH_SIZE) {
    throw new EventSourceMappingConfigurationError(`batchSize must be 1–${MAX_FIFO_BATCH_SIZE} for a FIFO queue`);
  }
  if (options.functionTimeoutMs <= 0 || options.functionTimeoutMs > settings.visibilityTimeoutSeconds * 1000) {
    throw new EventSourceMappingConfigurationError("the function timeout must be positive and at most the queue's visibility timeout");
  }
  const name = options.name ?? 'esm';
  const throttleChance = options.throttleChance ?? 0;
  const source = { queueArn: settings.arn, region: SIMULATED_REGION };
  const stats: EventSourceMappingStats = {
    receives: 0,
    emptyReceives: 0,
    messagesReceived: 0,
    invocations: 0,
    invocationsReturned: 0,
    invocationsThrew: 0,
    invocationsTimedOut: 0,
    responsesRejected: 0,
    throttles: 0,
    batchesDroppedAfterThrottle: 0,
    messagesDeleted: 0,
    deleteFailures: 0,
    concurrentInvocations: 0,
    maxConcurrentInvocations: 0,
  };
  let isStopping = false;
  let invocationSerial = 0;

  const pause = (range: DurationRange): Promise<void> => scheduler.sleep(scheduler.random.between(range.minMs, range.maxMs));
  const sqsLatency = options.sqsLatency ?? DEFAULT_SQS_LATENCY;

  const receive = async (): Promise<{ batch: Message[]; receivedAt: number }> => {
    await pause(sqsLatency);
    const receivedAt = scheduler.now();
    const output = sqs.receiveMessage({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: options.batchSize,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    });
    await pause(sqsLatency);
    return { batch: output.Messages ?? [], receivedAt };
  };

  const invoke = async (event: SQSEvent): Promise<InvocationOutcome> => {
    invocationSerial += 1;
    const life = new Life(`${name}-invocation-${invocationSerial}`);
    stats.invocations += 1;
    stats.concurrentInvocations += 1;
    stats.maxConcurrentInvocations = Math.max(stats.maxConcurrentInvocations, stats.concurrentInvocations);
    const run = scheduler.runIn(life, async () => options.invoke(event)).then(
      (response): InvocationOutcome => ({ kind: 'returned', response }),
      (error: unknown): InvocationOutcome => ({ kind: 'threw', error }),
    );
    // The timer belongs to the poller's life, not the invocation's: it fires even if the function hangs.
    const timeout = scheduler.sleep(options.functionTimeoutMs).then((): InvocationOutcome => ({ kind: 'timedOut' }));
    const outcome = await Promise.race([run, timeout]);
    stats.concurrentInvocations -= 1;
    if (outcome.kind === 'timedOut') life.kill();
    return outcome;
  };

  const deleteRecords = async (records: readonly Message[]): Promise<void> => {
    const entries = records.flatMap((message, index) => {
      const candidate = { messageId: message.MessageId ?? '', messageGroupId: message.Attributes?.MessageGroupId ?? '' };
      if (options.shouldFailDelete?.(candidate) === true) {
        stats.deleteFailures += 1;
        return [];
      }
      return [{ Id: String(index), ReceiptHandle: message.ReceiptHandle }];
    });
    if (entries.length === 0) return;
    await pause(sqsLatency);
    const output = sqs.deleteMessageBatch({ QueueUrl: queueUrl, Entries: entries });
    await pause(sqsLatency);
    stats.messagesDeleted += output.Successful?.length ?? 0;
    stats.deleteFailures += output.Failed?.length ?? 0;
  };

  const handleBatch = async (batch: Message[], receivedAt: number): Promise<void> => {
    const visibleAgainAt = receivedAt + settings.visibilityTimeoutSeconds * 1000;
    while (throttleChance > 0 && scheduler.random.chance(throttleChance)) {
      stats.throttles += 1;
      await pause(options.throttleRetryDelay ?? DEFAULT_THROTTLE_RETRY_DELAY);
      if (scheduler.now() >= visibleAgainAt) {
        stats.batchesDroppedAfterThrottle += 1;
        return;
      }
    }
    await pause(options.invokeLatency ?? DEFAULT_INVOKE_LATENCY);
    const outcome = await invoke(toSqsEvent(batch, source));
    if (outcome.kind === 'timedOut') {
      stats.invocationsTimedOut += 1;
      return;
    }
    if (outcome.kind === 'threw') {
      stats.invocationsThrew += 1;
      return;
    }
    stats.invocationsReturned += 1;
    const toDelete = messagesToDelete(batch, outcome.response);
    if (toDelete === undefined) {
      stats.responsesRejected += 1;
      return;
    }
    await deleteRecords(toDelete);
  };

  const poll = async (): Promise<void> => {
    let emptyInARow = 0;
    while (!isStopping) {
      const { batch, receivedAt } = await receive();
      stats.receives += 1;
      if (batch.length === 0) {
        stats.emptyReceives += 1;
        const wait = options.emptyReceiveWait ?? DEFAULT_EMPTY_RECEIVE_WAIT;
        const { idleBackoffMaxMs } = options;
        const scale = idleBackoffMaxMs === undefined ? 1 : 2 ** Math.min(emptyInARow, 30);
        emptyInARow += 1;
        await pause(scale === 1 ? wait : { minMs: Math.min(wait.minMs * scale, idleBackoffMaxMs ?? Infinity), maxMs: Math.min(wait.maxMs * scale, idleBackoffMaxMs ?? Infinity) });
        continue;
      }
      emptyInARow = 0;
      stats.messagesReceived += batch.length;
      // A batch received while stopping is still processed: its messages are in flight already.
      await handleBatch(batch, receivedAt);
    }
  };

  for (let poller = 0; poller < options.maxConcurrency; poller += 1) scheduler.spawn(`${name}-poller-${poller}`, poll);
  return {
    stop: () => {
      isStopping = true;
    },
    stats,
  };
}

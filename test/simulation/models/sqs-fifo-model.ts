/**
 * A synchronous in-memory model of Amazon SQS FIFO queues, as AWS documents them and, where the
 * documentation is silent, as real SQS was recorded answering. The simulation runs the project's
 * real adapters against it through `createModelSqsClient`: every operation takes the SDK
 * command's input and returns the SDK command's output shape, and every rejection is the SDK
 * error SQS would produce (see `sqs-errors.ts`).
 *
 * Time is the simulation's clock: nothing here waits or schedules. A message's visibility is a
 * deadline compared with `clock.now()` on every call, so a message whose visibility timeout has
 * passed is visible to the next call at once, with no timer.
 *
 * Sources, cited where each rule is applied:
 * - [FIFO delivery logic] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
 * - [FIFO key terms] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-key-terms.html
 * - [Message quotas] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 * - [Visibility timeout] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html
 * - [API reference] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/ (SendMessage,
 *   ReceiveMessage, DeleteMessage, ChangeMessageVisibility, the batch actions), as carried in the
 *   TSDoc of `@aws-sdk/client-sqs`.
 * - [Dead-letter queues] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 *   and https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html
 * - [Retention] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
 *   (MessageRetentionPeriod: 60 s to 1,209,600 s, 14 days; default 345,600 s, 4 days) and
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html
 * - [GetQueueAttributes] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html:
 *   the approximate counts "may not achieve consistency until at least 1 minute after the producers
 *   stop sending messages".
 * - [ReceiveMessage] https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html
 *   (MaxNumberOfMessages: "Amazon SQS never returns more messages than this value (however, fewer
 *   messages might be returned)") and https://repost.aws/knowledge-center/sqs-fifo-messages-not-returned
 *   (SQS "returns as many messages with the same message group ID as possible").
 * - [Recorded] LocalStack's SQS tests marked `aws.validated`, whose snapshots record real SQS
 *   answers (github.com/localstack/localstack, tests/aws/services/sqs/test_sqs.py and
 *   test_sqs.snapshot.json, validated 2024-04 to 2025-11).
 */
import { createHash } from 'node:crypto';
import type {
  BatchResultErrorEntry,
  ChangeMessageVisibilityBatchCommandOutput,
  ChangeMessageVisibilityBatchRequest,
  ChangeMessageVisibilityCommandOutput,
  ChangeMessageVisibilityRequest,
  DeleteMessageBatchCommandOutput,
  DeleteMessageBatchRequest,
  DeleteMessageCommandOutput,
  DeleteMessageRequest,
  GetQueueAttributesCommandOutput,
  GetQueueAttributesRequest,
  Message,
  MessageAttributeValue,
  MessageSystemAttributeName,
  QueueAttributeName,
  ReceiveMessageCommandOutput,
  ReceiveMessageRequest,
  SendMessageBatchCommandOutput,
  SendMessageBatchRequest,
  SendMessageBatchResultEntry,
  SendMessageCommandOutput,
  SendMessageRequest,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { fail, problem, SqsErrorCode, SqsMessage, SqsModelError, toSdkError, type SqsProblem } from './sqs-errors.js';

/** The account and Region every simulated queue lives in. */
export const SIMULATED_ACCOUNT_ID = '000000000000';
export const SIMULATED_REGION = 'us-east-1';

/** [Visibility timeout] and [API reference] ChangeMessageVisibility: 0 s to 12 h. */
export const MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;
/** [FIFO key terms]: a deduplication ID is remembered for 5 minutes. */
export const DEDUPLICATION_INTERVAL_MS = 5 * 60 * 1000;
/**
 * [Message quotas] and the AWS Compute Blog "More room to build: serverless services now support
 * payloads up to 1 MB" (2025): 1 MiB; [Recorded] `MaximumMessageSize` is `1048576` by default.
 */
export const MAX_MESSAGE_BYTES = 1_048_576;
/** [Message quotas]: at most 10 entries in a batch request, at most 10 messages per receive. */
export const MAX_BATCH_ENTRIES = 10;
/** [Message quotas]: a message carries at most 10 message attributes. */
const MAX_MESSAGE_ATTRIBUTES = 10;
/** [API reference] ReceiveMessage: WaitTimeSeconds 0–20. */
const MAX_WAIT_TIME_SECONDS = 20;
/** [API reference] redrive policy: maxReceiveCount 1–1,000. */
const MAX_RECEIVE_COUNT_LIMIT = 1000;
/** [Retention] MessageRetentionPeriod: 60 s to 14 days, 4 days unless set. */
const MIN_RETENTION_SECONDS = 60;
export const MAX_RETENTION_SECONDS = 1_209_600;
const DEFAULT_RETENTION_SECONDS = 345_600;

/** [Message quotas]: MessageGroupId / MessageDeduplicationId: 1–128 letters, digits and punctuation. */
const FIFO_ID_PATTERN = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;
/** [Message quotas]: a batch entry id has at most 80 letters, digits, hyphens and underscores. */
const BATCH_ENTRY_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
/** [Message quotas]: only #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF may appear in a body. */
const FORBIDDEN_BODY_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
/** [API reference] CreateQueue: up to 80 letters, digits, hyphens and underscores; a FIFO queue's name ends in `.fifo`. */
const FIFO_QUEUE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,75}\.fifo$/;

const SENDER_ID = 'AIDASIMULATEDSENDER00';
const OK_METADATA = { httpStatusCode: 200, attempts: 1, totalRetryDelay: 0 } as const;

/**
 * How a FIFO group holds back its messages while some are in flight.
 * - `inFlightPrefix` (default): a receive returns a group's messages in order up to, not including,
 *   the first one that is in flight (or delayed). [Recorded] test_fifo_group_visibility_extends_with_change_message_visibility
 *   (AWS, 2025-11-19): of three in-flight messages whose first visibility was extended, the other
 *   two stay invisible; extend the second, and the first is received again while the second and
 *   third are still in flight; test_fifo_message_group_visibility_after_terminate_visibility_timeout:
 *   the head set to visibility 0 is received again while its successor is in flight.
 * - `anyInFlight`: the documented wording read strictly, [FIFO delivery logic]: "you can't receive
 *   additional messages from the same message group ID in subsequent requests until the current
 *   messages are deleted, or they become visible again": no message of a group is returned while
 *   any message of the group is in flight. Stricter than what AWS was recorded doing; kept so a
 *   simulation can check a consumer against both readings.
 */
export const GroupLock = {
  inFlightPrefix: 'inFlightPrefix',
  anyInFlight: 'anyInFlight',
} as const;
export type GroupLock = (typeof GroupLock)[keyof typeof GroupLock];

/** A queue's deduplication scope: `DeduplicationScope` of [FIFO key terms] / high-throughput FIFO. */
export const DeduplicationScope = { queue: 'queue', messageGroup: 'messageGroup' } as const;
export type DeduplicationScope = (typeof DeduplicationScope)[keyof typeof DeduplicationScope];

/** Where a message stands, as `ApproximateNumberOfMessages*` counts it. */
export const MessageState = {
  /** Available: received by the next receive unless an earlier message of its group holds it back. */
  visible: 'visible',
  /** Received, not deleted, its visibility timeout not yet over. */
  inFlight: 'inFlight',
  /** Never received and still within the queue's delivery delay. */
  delayed: 'delayed',
} as const;
export type MessageState = (typeof MessageState)[keyof typeof MessageState];

/** The attributes of a queue the model honours. */
export interface CreateQueueInput {
  /** Must end in `.fifo`: every queue of the model is a FIFO queue. */
  readonly name: string;
  /** The queue's default visibility timeout, 0–43,200 s. */
  readonly visibilityTimeoutSeconds: number;
  /** A redrive policy: the dead-letter queue (created before, FIFO like its source) and maxReceiveCount (1–1,000). */
  readonly redrive?: { readonly deadLetterQueueName: string; readonly maxReceiveCount: number };
  /** Deduplication per queue (default) or per message group (high-throughput FIFO). */
  readonly deduplicationScope?: DeduplicationScope;
  /** With content-based deduplication a message without a MessageDeduplicationId is deduplicated by SHA-256 of its body. */
  readonly contentBasedDeduplication?: boolean;
  /** The queue's delivery delay, 0–900 s; FIFO queues accept no per-message delay. Default 0. */
  readonly delaySeconds?: number;
  /** `MaximumMessageSize`, 1,024–1,048,576 bytes. Default 1,048,576. */
  readonly maximumMessageBytes?: number;
  /** `MessageRetentionPeriod`, 60–1,209,600 s: how long SQS keeps a message from its enqueueing. Default 345,600 (4 days). */
  readonly messageRetentionSeconds?: number;
}

/**
 * [GetQueueAttributes]: the approximate counters lag. Each read reports the queue as it was up to
 * `maxMs` ago, the lag drawn per read from `random` (in [0, 1)): a message sent within the lag may
 * be missing, one deleted or moved within it still counted (in flight if it had been received by
 * then, else visible). Messages present both then and now count in their state now, so the sum of
 * the three counters is exactly the number of messages present at the drawn moment.
 */
export interface CounterLag {
  readonly maxMs: number;
  readonly random: () => number;
}

/**
 * [ReceiveMessage]: a receive may return fewer messages than are available. With `chance` (drawn
 * from `random`, in [0, 1)) a receive that found two or more returns a shorter prefix of them, at
 * least one: each group still in order, never a later message of a group without the earlier ones.
 */
export interface ShortReceives {
  readonly chance: number;
  readonly random: () => number;
}

/** The model's settings: see `GroupLock`, `CounterLag` and `ShortReceives`. Absent: exact counters, full receives. */
export interface SqsFifoModelOptions {
  readonly groupLock?: GroupLock;
  readonly counterLag?: CounterLag;
  readonly shortReceives?: ShortReceives;
}

/** A queue's settings as the model holds them. */
export interface QueueSettings {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  readonly visibilityTimeoutSeconds: number;
  readonly delaySeconds: number;
  readonly maximumMessageBytes: number;
  readonly messageRetentionSeconds: number;
  readonly deduplicationScope: DeduplicationScope;
  readonly contentBasedDeduplication: boolean;
  readonly redrive: { readonly deadLetterQueueUrl: string; readonly maxReceiveCount: number } | undefined;
}

/** A message still in a queue, for the simulation's checks. */
export interface QueuedMessageView {
  readonly messageId: string;
  readonly body: string;
  readonly messageGroupId: string;
  readonly deduplicationId: string;
  readonly sequenceNumber: string;
  readonly state: MessageState;
  readonly receiveCount: number;
  readonly sentAt: number;
  /** When it becomes (or became) visible: the end of its delay or of its current visibility timeout. */
  readonly visibleAt: number;
  readonly messageAttributes: Readonly<Record<string, MessageAttributeValue>>;
  /** Set on a message a redrive policy moved here. */
  readonly deadLetterQueueSourceArn: string | undefined;
}

/** A message deleted from a queue, for the simulation's checks. */
export interface DeletedMessageView {
  readonly messageId: string;
  readonly body: string;
  readonly messageGroupId: string;
  readonly sequenceNumber: string;
  readonly receiveCount: number;
  readonly sentAt: number;
  /** When it entered this queue: its send, or its move from the source queue. */
  readonly enqueuedAt: number;
  /** Its first receive from this queue, if any. */
  readonly firstReceivedAt: number | undefined;
  readonly deletedAt: number;
}

/** A message SQS deleted because it outlived the queue's retention period, for the simulation's checks. */
export interface ExpiredMessageView {
  readonly messageId: string;
  readonly body: string;
  readonly messageGroupId: string;
  readonly receiveCount: number;
  readonly sentAt: number;
  /** When its retention began: its sending, or its move into this (FIFO dead-letter) queue. */
  readonly enqueuedAt: number;
  /** When the model found it past retention and deleted it: at or after `enqueuedAt` + the retention period. */
  readonly expiredAt: number;
}

/** A message a redrive policy moved out of a queue. */
export interface MovedMessageView {
  readonly messageId: string;
  readonly body: string;
  readonly messageGroupId: string;
  readonly receiveCount: number;
  /** When it entered the source queue. */
  readonly enqueuedAt: number;
  readonly movedAt: number;
  readonly deadLetterQueueUrl: string;
}

interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly md5OfBody: string;
  readonly messageAttributes: Readonly<Record<string, MessageAttributeValue>>;
  readonly md5OfMessageAttributes: string | undefined;
  readonly traceHeader: string | undefined;
  readonly groupId: string;
  readonly deduplicationId: string;
  readonly sequenceNumber: string;
  readonly sentAt: number;
  /** When it entered this queue: its send, or its move from the source queue, which restarts its retention in a FIFO dead-letter queue (and counts, see `CounterLag`). */
  readonly enqueuedAt: number;
  readonly deadLetterQueueSourceArn: string | undefined;
  visibleAt: number;
  receiveCount: number;
  firstReceivedAt: number | undefined;
  /** The latest receive: the 12-hour visibility maximum counts from it. */
  receivedAt: number | undefined;
  latestHandle: string | undefined;
  deletedAt: number | undefined;
  movedAt: number | undefined;
  /** Set when SQS deleted it past the queue's retention. */
  expiredAt?: number;
}

interface Queue {
  readonly settings: QueueSettings;
  /**
   * Live messages per group, each group in sequence order. Map order is the order groups are
   * offered to a receive: a group that gave messages moves to the back (see `receiveMessage`).
   */
  readonly groups: Map<string, StoredMessage[]>;
  readonly deduplication: Map<string, { readonly messageId: string; readonly sequenceNumber: string; readonly expiresAt: number }>;
  readonly deleted: DeletedMessageView[];
  readonly moved: MovedMessageView[];
  readonly expired: ExpiredMessageView[];
  /** No message expires before this (the earliest enqueueing plus the retention): a cheap check before a scan. */
  nextExpiryAt: number;
}

interface IssuedHandle {
  readonly queue: Queue;
  readonly message: StoredMessage;
}

type HandleStatus =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'otherQueue' }
  | { readonly kind: 'current'; readonly message: StoredMessage }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'expired' };

/** One message to enqueue: a SendMessage input or a SendMessageBatch entry. */
type SendEntry = Omit<SendMessageRequest, 'QueueUrl'>;

interface Accepted {
  readonly messageId: string;
  readonly sequenceNumber: string;
  readonly md5OfBody: string;
  readonly md5OfMessageAttributes: string | undefined;
}

const md5 = (data: string | Uint8Array): string => createHash('md5').update(data).digest('hex');
const sha256 = (data: string): string => createHash('sha256').update(data).digest('hex');
const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * MD5OfMessageAttributes as SQS computes it: attributes sorted by name, each as length-prefixed
 * name, data type, a transport byte (1 string, 2 binary) and length-prefixed value.
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html (calculating the MD5 message digest)
 */
function md5OfAttributes(attributes: Readonly<Record<string, MessageAttributeValue>>): string | undefined {
  const names = Object.keys(attributes).sort();
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  const lengthPrefixed = (bytes: Buffer): void => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, bytes);
  };
  for (const name of names) {
    const value = attributes[name];
    if (value === undefined) continue;
    lengthPrefixed(Buffer.from(name, 'utf8'));
    lengthPrefixed(Buffer.from(value.DataType ?? '', 'utf8'));
    if (value.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      lengthPrefixed(Buffer.from(value.BinaryValue));
    } else {
      parts.push(Buffer.from([1]));
      lengthPrefixed(Buffer.from(value.StringValue ?? '', 'utf8'));
    }
  }
  return md5(Buffer.concat(parts));
}

/** [Message quotas]: a message's size counts its body and its attributes' names, types and values. */
function messageBytes(entry: SendEntry): number {
  let bytes = utf8Bytes(entry.MessageBody ?? '');
  for (const [name, value] of Object.entries(entry.MessageAttributes ?? {})) {
    bytes += utf8Bytes(name) + utf8Bytes(value.DataType ?? '');
    bytes += value.BinaryValue === undefined ? utf8Bytes(value.StringValue ?? '') : value.BinaryValue.length;
  }
  return bytes;
}

function copyAttributes(attributes: Record<string, MessageAttributeValue> | undefined): Readonly<Record<string, MessageAttributeValue>> {
  const copy: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    copy[name] = {
      DataType: value.DataType,
      ...(value.StringValue === undefined ? {} : { StringValue: value.StringValue }),
      ...(value.BinaryValue === undefined ? {} : { BinaryValue: Uint8Array.from(value.BinaryValue) }),
    };
  }
  return copy;
}

function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** The SDK command input, checked to be an object: the adapters pass typed SDK inputs. */
function asRequest<T extends object>(input: unknown): T {
  if (typeof input !== 'object' || input === null) throw new SqsModelError('an SQS request must be an object');
  // The SDK's own input types describe it; the model validates every value it relies on as SQS does.
  return input as T;
}

/** [API reference] ReceiveMessage MessageAttributeNames: `All`, `.*`, a name, or a prefix `name.*`. */
function selectsAttribute(patterns: readonly string[], name: string): boolean {
  return patterns.some((pattern) => pattern === 'All' || pattern === '.*' || pattern === name || (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))));
}

/**
 * The in-memory SQS FIFO service. Construct one per simulated world, create its queues, then hand
 * `createModelSqsClient(model)` to the code under test.
 */
export class SqsFifoModel {
  private readonly queuesByUrl = new Map<string, Queue>();
  private readonly queuesByName = new Map<string, Queue>();
  private readonly handles = new Map<string, IssuedHandle>();
  private readonly groupLock: GroupLock;
  private readonly counterLag: CounterLag | undefined;
  private readonly shortReceives: ShortReceives | undefined;
  private messageSerial = 0;
  private handleSerial = 0;

  constructor(
    private readonly clock: { now(): number },
    options: SqsFifoModelOptions = {},
  ) {
    this.groupLock = options.groupLock ?? GroupLock.inFlightPrefix;
    this.counterLag = options.counterLag;
    this.shortReceives = options.shortReceives;
  }

  /**
   * Creates a FIFO queue and returns its URL. A dead-letter queue must exist first, and be FIFO
   * like its source ([Dead-letter queues]: "a FIFO queue can only use a FIFO DLQ").
   * @throws SqsModelError for a setting SQS would refuse; the simulation's setup is wrong
   */
  createQueue(input: CreateQueueInput): string {
    if (!FIFO_QUEUE_NAME_PATTERN.test(input.name)) throw new SqsModelError(`not a FIFO queue name: ${input.name}`);
    if (this.queuesByName.has(input.name)) throw new SqsModelError(`queue ${input.name} exists already`);
    if (!isInteger(input.visibilityTimeoutSeconds, 0, MAX_VISIBILITY_TIMEOUT_SECONDS)) throw new SqsModelError('visibilityTimeoutSeconds must be 0–43200');
    const delaySeconds = input.delaySeconds ?? 0;
    if (!isInteger(delaySeconds, 0, 900)) throw new SqsModelError('delaySeconds must be 0–900');
    const maximumMessageBytes = input.maximumMessageBytes ?? MAX_MESSAGE_BYTES;
    if (!isInteger(maximumMessageBytes, 1024, MAX_MESSAGE_BYTES)) throw new SqsModelError('maximumMessageBytes must be 1024–1048576');
    const messageRetentionSeconds = input.messageRetentionSeconds ?? DEFAULT_RETENTION_SECONDS;
    if (!isInteger(messageRetentionSeconds, MIN_RETENTION_SECONDS, MAX_RETENTION_SECONDS)) throw new SqsModelError('messageRetentionSeconds must be 60–1209600');
    let redrive: QueueSettings['redrive'];
    if (input.redrive !== undefined) {
      const deadLetterQueue = this.queuesByName.get(input.redrive.deadLetterQueueName);
      if (deadLetterQueue === undefined) throw new SqsModelError(`dead-letter queue ${input.redrive.deadLetterQueueName} must be created first`);
      if (!isInteger(input.redrive.maxReceiveCount, 1, MAX_RECEIVE_COUNT_LIMIT)) throw new SqsModelError('maxReceiveCount must be 1–1000');
      redrive = { deadLetterQueueUrl: deadLetterQueue.settings.url, maxReceiveCount: input.redrive.maxReceiveCount };
    }
    const url = `https://sqs.${SIMULATED_REGION}.amazonaws.com/${SIMULATED_ACCOUNT_ID}/${input.name}`;
    const queue: Queue = {
      settings: {
        name: input.name,
        url,
        arn: `arn:aws:sqs:${SIMULATED_REGION}:${SIMULATED_ACCOUNT_ID}:${input.name}`,
        visibilityTimeoutSeconds: input.visibilityTimeoutSeconds,
        delaySeconds,
        maximumMessageBytes,
        messageRetentionSeconds,
        deduplicationScope: input.deduplicationScope ?? DeduplicationScope.queue,
        contentBasedDeduplication: input.contentBasedDeduplication ?? false,
        redrive,
      },
      groups: new Map(),
      deduplication: new Map(),
      deleted: [],
      moved: [],
      expired: [],
      nextExpiryAt: Infinity,
    };
    this.queuesByUrl.set(url, queue);
    this.queuesByName.set(input.name, queue);
    return url;
  }

  /**
   * Runs one SQS operation by its SDK command name (`SendMessage` for `SendMessageCommand`) with
   * the command's input, and returns the command's output.
   * @throws the SDK error SQS answers with; SqsModelError for an operation the model lacks
   */
  execute(operation: string, input: unknown): unknown {
    switch (operation) {
      case 'SendMessage':
        return this.sendMessage(asRequest<SendMessageRequest>(input));
      case 'SendMessageBatch':
        return this.sendMessageBatch(asRequest<SendMessageBatchRequest>(input));
      case 'ReceiveMessage':
        return this.receiveMessage(asRequest<ReceiveMessageRequest>(input));
      case 'DeleteMessage':
        return this.deleteMessage(asRequest<DeleteMessageRequest>(input));
      case 'DeleteMessageBatch':
        return this.deleteMessageBatch(asRequest<DeleteMessageBatchRequest>(input));
      case 'ChangeMessageVisibility':
        return this.changeMessageVisibility(asRequest<ChangeMessageVisibilityRequest>(input));
      case 'ChangeMessageVisibilityBatch':
        return this.changeMessageVisibilityBatch(asRequest<ChangeMessageVisibilityBatchRequest>(input));
      case 'GetQueueAttributes':
        return this.getQueueAttributes(asRequest<GetQueueAttributesRequest>(input));
      default:
        throw new SqsModelError(`SQS operation ${operation} is not modelled`);
    }
  }

  // ---- Send ----------------------------------------------------------------------------------

  /**
   * SendMessage. [FIFO key terms]: a deduplication ID seen in the last 5 minutes (in the queue,
   * or in the group with `DeduplicationScope=messageGroup`) is accepted, answered with the first
   * message's id, and not enqueued again, even if that message was received and deleted meanwhile.
   */
  sendMessage(input: SendMessageRequest): SendMessageCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const requestProblem = this.requestProblem(queue, input, 'SendMessage');
    if (requestProblem !== undefined) throw toSdkError(requestProblem);
    const entryProblem = this.entryProblem(queue, input, 'SendMessage');
    if (entryProblem !== undefined) throw toSdkError(entryProblem);
    const accepted = this.accept(queue, input);
    return {
      MessageId: accepted.messageId,
      MD5OfMessageBody: accepted.md5OfBody,
      ...(accepted.md5OfMessageAttributes === undefined ? {} : { MD5OfMessageAttributes: accepted.md5OfMessageAttributes }),
      SequenceNumber: accepted.sequenceNumber,
      $metadata: { ...OK_METADATA },
    };
  }

  /**
   * SendMessageBatch: whole-request rules first (entry count, entry ids, total size, the FIFO
   * parameters, [Recorded] test_send_batch_missing_*), then each entry on its own, in order,
   * answered in `Successful` or `Failed` ([Recorded] test_send_batch_message_size,
   * test_batch_send_with_invalid_char_should_succeed).
   */
  sendMessageBatch(input: SendMessageBatchRequest): SendMessageBatchCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const entries = input.Entries ?? [];
    this.checkBatchEntries(entries, 'SendMessageBatchRequestEntry');
    const totalBytes = entries.reduce((sum, entry) => sum + messageBytes(entry), 0);
    // [Message quotas] / [Recorded] test_send_message_batch_with_oversized_contents: 1 MiB per request.
    if (totalBytes > MAX_MESSAGE_BYTES) fail(SqsErrorCode.batchRequestTooLong, SqsMessage.batchTooLong(MAX_MESSAGE_BYTES, totalBytes));
    for (const entry of entries) {
      const requestProblem = this.requestProblem(queue, entry, 'SendMessageBatch');
      if (requestProblem !== undefined) throw toSdkError(requestProblem);
    }
    const successful: SendMessageBatchResultEntry[] = [];
    const failed: BatchResultErrorEntry[] = [];
    for (const entry of entries) {
      const entryProblem = this.entryProblem(queue, entry, 'SendMessageBatch');
      if (entryProblem !== undefined) {
        failed.push(failedEntry(entry.Id, entryProblem));
        continue;
      }
      const accepted = this.accept(queue, entry);
      successful.push({
        Id: entry.Id,
        MessageId: accepted.messageId,
        MD5OfMessageBody: accepted.md5OfBody,
        ...(accepted.md5OfMessageAttributes === undefined ? {} : { MD5OfMessageAttributes: accepted.md5OfMessageAttributes }),
        SequenceNumber: accepted.sequenceNumber,
      });
    }
    return { Successful: successful, Failed: failed, $metadata: { ...OK_METADATA } };
  }

  /** Rules whose breach fails the whole request, batch or not. */
  private requestProblem(queue: Queue, entry: SendEntry, operation: 'SendMessage' | 'SendMessageBatch'): SqsProblem | undefined {
    if (entry.MessageGroupId === undefined) {
      // [Message quotas]: MessageGroupId is required on a FIFO queue. [Recorded]: MissingParameter on
      // SendMessage, InvalidParameterValue on SendMessageBatch.
      return problem(operation === 'SendMessage' ? SqsErrorCode.missingParameter : SqsErrorCode.invalidParameterValue, SqsMessage.missingGroupId);
    }
    if (entry.MessageDeduplicationId === undefined && !queue.settings.contentBasedDeduplication) {
      // [API reference] SendMessage: no deduplication ID and no ContentBasedDeduplication fails the action.
      return problem(SqsErrorCode.invalidParameterValue, SqsMessage.missingDeduplicationId);
    }
    if (entry.DelaySeconds !== undefined && entry.DelaySeconds !== 0) {
      // [API reference] SendMessage: "When you set FifoQueue, you can't set DelaySeconds per message";
      // [Recorded] test_fifo_queue_send_message_with_zero_delay_defaults_to_queue_delay: 0 is accepted.
      return problem(SqsErrorCode.invalidParameterValue, SqsMessage.delayOnFifo(entry.DelaySeconds));
    }
    return undefined;
  }

  /** Rules whose breach fails one message: the request of SendMessage, one entry of a batch. */
  private entryProblem(queue: Queue, entry: SendEntry, operation: 'SendMessage' | 'SendMessageBatch'): SqsProblem | undefined {
    const body = entry.MessageBody;
    if (body === undefined || body === '') return problem(SqsErrorCode.missingParameter, SqsMessage.missingBody);
    if (FORBIDDEN_BODY_CHARACTER.test(body)) return problem(SqsErrorCode.invalidMessageContents, SqsMessage.invalidCharacters);
    const groupId = entry.MessageGroupId ?? '';
    if (!FIFO_ID_PATTERN.test(groupId)) return problem(SqsErrorCode.invalidParameterValue, SqsMessage.badFifoId('MessageGroupId', groupId));
    if (entry.MessageDeduplicationId !== undefined && !FIFO_ID_PATTERN.test(entry.MessageDeduplicationId)) {
      return problem(SqsErrorCode.invalidParameterValue, SqsMessage.badFifoId('MessageDeduplicationId', entry.MessageDeduplicationId));
    }
    const attributes = Object.entries(entry.MessageAttributes ?? {});
    if (attributes.length > MAX_MESSAGE_ATTRIBUTES) return problem(SqsErrorCode.invalidParameterValue, SqsMessage.tooManyAttributes(attributes.length));
    for (const [name, value] of attributes) {
      const dataType = value.DataType ?? '';
      const isBinary = dataType.startsWith('Binary');
      if (isBinary ? (value.BinaryValue?.length ?? 0) === 0 : (value.StringValue ?? '') === '') {
        return problem(SqsErrorCode.invalidParameterValue, SqsMessage.emptyAttribute(name, dataType));
      }
    }
    const bytes = messageBytes(entry);
    if (bytes > queue.settings.maximumMessageBytes) {
      const max = queue.settings.maximumMessageBytes;
      return problem(SqsErrorCode.invalidParameterValue, operation === 'SendMessage' ? SqsMessage.tooLarge(max) : SqsMessage.tooLargeEntry(max));
    }
    return undefined;
  }

  private accept(queue: Queue, entry: SendEntry): Accepted {
    const now = this.clock.now();
    const body = entry.MessageBody ?? '';
    const groupId = entry.MessageGroupId ?? '';
    const md5OfBody = md5(body);
    const messageAttributes = copyAttributes(entry.MessageAttributes);
    const md5OfMessageAttributes = md5OfAttributes(messageAttributes);
    // [API reference] SendMessage: an explicit deduplication ID overrides the content-based one.
    const deduplicationId = entry.MessageDeduplicationId ?? sha256(body);
    const key = queue.settings.deduplicationScope === DeduplicationScope.messageGroup ? `${groupId}\u0000${deduplicationId}` : deduplicationId;
    const seen = queue.deduplication.get(key);
    if (seen !== undefined && seen.expiresAt > now) {
      return { messageId: seen.messageId, sequenceNumber: seen.sequenceNumber, md5OfBody, md5OfMessageAttributes };
    }
    this.messageSerial += 1;
    const message: StoredMessage = {
      messageId: `00000000-0000-4000-8000-${this.messageSerial.toString(16).padStart(12, '0')}`,
      body,
      md5OfBody,
      messageAttributes,
      md5OfMessageAttributes,
      traceHeader: entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue,
      groupId,
      deduplicationId,
      sequenceNumber: this.nextSequenceNumber(),
      sentAt: now,
      enqueuedAt: now,
      deadLetterQueueSourceArn: undefined,
      // [Message quotas] message timer: FIFO queues delay by the queue's DelaySeconds only.
      visibleAt: now + queue.settings.delaySeconds * 1000,
      receiveCount: 0,
      firstReceivedAt: undefined,
      receivedAt: undefined,
      latestHandle: undefined,
      deletedAt: undefined,
      movedAt: undefined,
    };
    // The window runs from the first accepted send; duplicates inside it do not extend it.
    queue.deduplication.set(key, { messageId: message.messageId, sequenceNumber: message.sequenceNumber, expiresAt: now + DEDUPLICATION_INTERVAL_MS });
    this.append(queue, message);
    return { messageId: message.messageId, sequenceNumber: message.sequenceNumber, md5OfBody, md5OfMessageAttributes };
  }

  /** [API reference] SendMessage: "the large, non-consecutive number" (128 bits), increasing within a group. */
  private nextSequenceNumber(): string {
    return (18_000_000_000_000_000_000n + BigInt(this.messageSerial) * 65_536n).toString();
  }

  private append(queue: Queue, message: StoredMessage): void {
    queue.nextExpiryAt = Math.min(queue.nextExpiryAt, message.enqueuedAt + queue.settings.messageRetentionSeconds * 1000);
    const group = queue.groups.get(message.groupId);
    if (group === undefined) queue.groups.set(message.groupId, [message]);
    else group.push(message);
  }

  // ---- Retention -----------------------------------------------------------------------------

  /**
   * [Retention] SQS deletes a message once it has been in the queue for the retention period,
   * whatever its state (visible, held behind its group, in flight). AWS names no moment for the
   * deletion; the model deletes it at the first call that looks at the queue at or after its end,
   * which no caller can tell apart. Its receipt handles expire with it.
   */
  private expire(queue: Queue, now: number): void {
    if (now < queue.nextExpiryAt) return;
    const retentionMs = queue.settings.messageRetentionSeconds * 1000;
    let nextExpiryAt = Infinity;
    for (const [groupId, group] of queue.groups) {
      const kept = group.filter((message) => {
        if (now < message.enqueuedAt + retentionMs) {
          nextExpiryAt = Math.min(nextExpiryAt, message.enqueuedAt + retentionMs);
          return true;
        }
        message.expiredAt = now;
        queue.expired.push({ messageId: message.messageId, body: message.body, messageGroupId: message.groupId, receiveCount: message.receiveCount, sentAt: message.sentAt, enqueuedAt: message.enqueuedAt, expiredAt: now });
        return false;
      });
      if (kept.length === 0) queue.groups.delete(groupId);
      else if (kept.length < group.length) queue.groups.set(groupId, kept);
    }
    queue.nextExpiryAt = nextExpiryAt;
  }

  // ---- Receive -------------------------------------------------------------------------------

  /**
   * ReceiveMessage, returning what is available now (no long-poll wait: the caller models the
   * wait). [FIFO delivery logic]: SQS returns as many messages of one group as it can, in order,
   * then fills the batch from other groups, each group in order; the order of groups is not
   * guaranteed. The model offers groups least recently served first ([Recorded]
   * test_fifo_receive_message_with_zero_visibility_timeout shows AWS serving the group it had not
   * served yet first). A message received more than maxReceiveCount times is moved to the
   * dead-letter queue by the receive that would exceed it, instead of being returned.
   */
  receiveMessage(input: ReceiveMessageRequest): ReceiveMessageCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const maxMessages = input.MaxNumberOfMessages ?? 1;
    if (!isInteger(maxMessages, 1, MAX_BATCH_ENTRIES)) fail(SqsErrorCode.invalidParameterValue, SqsMessage.maxNumberOfMessages(input.MaxNumberOfMessages));
    const visibilityTimeoutSeconds = input.VisibilityTimeout ?? queue.settings.visibilityTimeoutSeconds;
    if (!isInteger(visibilityTimeoutSeconds, 0, MAX_VISIBILITY_TIMEOUT_SECONDS)) fail(SqsErrorCode.invalidParameterValue, SqsMessage.visibilityOutOfRange(input.VisibilityTimeout));
    if (input.WaitTimeSeconds !== undefined && !isInteger(input.WaitTimeSeconds, 0, MAX_WAIT_TIME_SECONDS)) {
      fail(SqsErrorCode.invalidParameterValue, SqsMessage.waitTimeSeconds(input.WaitTimeSeconds));
    }
    const now = this.clock.now();
    this.expire(queue, now);
    const taken: StoredMessage[] = [];
    const servedGroups: string[] = [];
    for (const [groupId, group] of queue.groups) {
      if (taken.length >= maxMessages) break;
      this.takeFromGroup(queue, group, maxMessages, taken, now);
      if (group.length === 0) queue.groups.delete(groupId);
    }
    // [ReceiveMessage]: "fewer messages might be returned"; a prefix keeps every group in order.
    const short = this.shortReceives;
    if (short !== undefined && taken.length >= 2 && short.random() < short.chance) taken.length = 1 + Math.floor(short.random() * (taken.length - 1));
    for (const message of taken) if (!servedGroups.includes(message.groupId)) servedGroups.push(message.groupId);
    for (const groupId of servedGroups) {
      const group = queue.groups.get(groupId);
      if (group === undefined) continue;
      queue.groups.delete(groupId);
      queue.groups.set(groupId, group);
    }
    const systemNames = [...(input.MessageSystemAttributeNames ?? []), ...(input.AttributeNames ?? [])];
    const messages = taken.map((message) => this.deliver(queue, message, now, visibilityTimeoutSeconds, systemNames, input.MessageAttributeNames ?? []));
    return { ...(messages.length === 0 ? {} : { Messages: messages }), $metadata: { ...OK_METADATA } };
  }

  /** Takes a group's available messages in order, moving those past maxReceiveCount to the dead-letter queue. */
  private takeFromGroup(queue: Queue, group: StoredMessage[], maxMessages: number, taken: StoredMessage[], now: number): void {
    if (this.groupLock === GroupLock.anyInFlight && group.some((message) => this.stateOf(message, now) === MessageState.inFlight)) return;
    let index = 0;
    while (index < group.length && taken.length < maxMessages) {
      const message = group[index];
      if (message === undefined || this.stateOf(message, now) !== MessageState.visible) return;
      const redrive = queue.settings.redrive;
      if (redrive !== undefined && message.receiveCount >= redrive.maxReceiveCount) {
        group.splice(index, 1);
        this.moveToDeadLetterQueue(queue, message, redrive.deadLetterQueueUrl, now);
        continue;
      }
      taken.push(message);
      index += 1;
    }
  }

  /**
   * [Dead-letter queues]: the message keeps its id, body, attributes and group, and its receive
   * count ([Recorded] test_dead_letter_queue_message_attributes: received once, moved, then
   * received from the dead-letter queue with ApproximateReceiveCount 2, the same MessageId and a
   * `DeadLetterQueueSourceArn`). For FIFO queues the enqueue timestamp is reset on the move
   * (setting-up-dead-letter-queue-retention: "For FIFO queues, the enqueue timestamp resets when the
   * message is moved to a dead-letter queue"), so its retention there starts at the move; its
   * SentTimestamp stays. It takes the next sequence number of its new queue.
   */
  private moveToDeadLetterQueue(source: Queue, message: StoredMessage, deadLetterQueueUrl: string, now: number): void {
    const target = this.queueFor(deadLetterQueueUrl);
    message.movedAt = now;
    source.moved.push({
      messageId: message.messageId,
      body: message.body,
      messageGroupId: message.groupId,
      receiveCount: message.receiveCount,
      enqueuedAt: message.enqueuedAt,
      movedAt: now,
      deadLetterQueueUrl,
    });
    this.messageSerial += 1;
    this.append(target, {
      ...message,
      sequenceNumber: this.nextSequenceNumber(),
      enqueuedAt: now,
      deadLetterQueueSourceArn: source.settings.arn,
      visibleAt: now,
      receivedAt: undefined,
      latestHandle: undefined,
      deletedAt: undefined,
      movedAt: undefined,
    });
  }

  private deliver(
    queue: Queue,
    message: StoredMessage,
    now: number,
    visibilityTimeoutSeconds: number,
    systemNames: readonly string[],
    attributeNames: readonly string[],
  ): Message {
    this.handleSerial += 1;
    const handle = `rh-${this.handleSerial.toString(36)}-${message.messageId}`;
    message.receiveCount += 1;
    message.firstReceivedAt ??= now;
    message.receivedAt = now;
    message.latestHandle = handle;
    // [API reference] ChangeMessageVisibility: a changed timeout is not saved with the message;
    // each receive starts from the queue's (or the request's) timeout.
    message.visibleAt = now + visibilityTimeoutSeconds * 1000;
    this.handles.set(handle, { queue, message });

    const isAll = systemNames.includes('All');
    const attributes: Partial<Record<MessageSystemAttributeName, string>> = {};
    const add = (name: MessageSystemAttributeName, value: string | undefined): void => {
      if (value !== undefined && (isAll || systemNames.includes(name))) attributes[name] = value;
    };
    add('SenderId', SENDER_ID);
    add('SentTimestamp', String(message.sentAt));
    add('ApproximateReceiveCount', String(message.receiveCount));
    add('ApproximateFirstReceiveTimestamp', String(message.firstReceivedAt));
    add('SequenceNumber', message.sequenceNumber);
    add('MessageDeduplicationId', message.deduplicationId);
    add('MessageGroupId', message.groupId);
    add('AWSTraceHeader', message.traceHeader);
    add('DeadLetterQueueSourceArn', message.deadLetterQueueSourceArn);

    const selected = Object.entries(message.messageAttributes).filter(([name]) => selectsAttribute(attributeNames, name));
    return {
      MessageId: message.messageId,
      ReceiptHandle: handle,
      MD5OfBody: message.md5OfBody,
      Body: message.body,
      ...(Object.keys(attributes).length === 0 ? {} : { Attributes: attributes }),
      ...(selected.length === 0 || message.md5OfMessageAttributes === undefined
        ? {}
        : { MD5OfMessageAttributes: message.md5OfMessageAttributes, MessageAttributes: copyAttributes(Object.fromEntries(selected)) }),
    };
  }

  // ---- Receipt handles -----------------------------------------------------------------------

  /**
   * A receipt handle belongs to one receive ([API reference] DeleteMessage: "you must provide the
   * most recently received ReceiptHandle"). On a FIFO queue a handle expires with its receive's
   * visibility timeout: a message can only be received again once visible, so an older handle is
   * always an expired one.
   */
  private handleStatus(queue: Queue, handle: string | undefined, now: number): HandleStatus {
    const issued = handle === undefined ? undefined : this.handles.get(handle);
    if (issued === undefined) return { kind: 'unknown' };
    if (issued.queue !== queue) return { kind: 'otherQueue' };
    const { message } = issued;
    if (message.latestHandle !== handle) return { kind: 'expired' };
    if (message.deletedAt !== undefined) return { kind: 'deleted' };
    this.expire(queue, now);
    // A message SQS deleted past retention: undocumented for a handle; the model refuses it as expired.
    if (message.movedAt !== undefined || message.expiredAt !== undefined || now >= message.visibleAt) return { kind: 'expired' };
    return { kind: 'current', message };
  }

  private removeMessage(queue: Queue, message: StoredMessage, now: number): void {
    const group = queue.groups.get(message.groupId);
    if (group !== undefined) {
      const index = group.indexOf(message);
      if (index >= 0) group.splice(index, 1);
      if (group.length === 0) queue.groups.delete(message.groupId);
    }
    message.deletedAt = now;
    queue.deleted.push({
      messageId: message.messageId,
      body: message.body,
      messageGroupId: message.groupId,
      sequenceNumber: message.sequenceNumber,
      receiveCount: message.receiveCount,
      sentAt: message.sentAt,
      enqueuedAt: message.enqueuedAt,
      firstReceivedAt: message.firstReceivedAt,
      deletedAt: now,
    });
  }

  /**
   * The outcome of deleting by one handle:
   * - the current handle deletes the message, even while another reader holds it ([API reference]);
   * - deleting again with the handle that deleted it succeeds ([Recorded] test_delete_message_with_deleted_receipt_handle);
   * - an expired handle is refused on a FIFO queue: InvalidParameterValue "The receipt handle has
   *   expired" ([Recorded] test_fifo_delete_after_visibility_timeout; aws/aws-sdk-js#1750, an SDK
   *   maintainer: "FIFO queues will reject DeleteMessage requests when the receipt handle is
   *   expired"), in a batch an entry `ReceiptHandleIsInvalid` (smaskalik/sqsmover#54);
   * - a handle SQS never issued (for this queue) is ReceiptHandleIsInvalid ([Recorded] test_delete_message_with_illegal_receipt_handle).
   */
  private deleteProblem(queue: Queue, handle: string | undefined, inBatch: boolean): SqsProblem | undefined {
    const now = this.clock.now();
    const status = this.handleStatus(queue, handle, now);
    const shown = handle ?? '';
    switch (status.kind) {
      case 'current':
        this.removeMessage(queue, status.message, now);
        return undefined;
      case 'deleted':
        return undefined;
      default:
        return staleHandleProblem(status.kind, shown, inBatch);
    }
  }

  /** DeleteMessage; see `deleteProblem`. */
  deleteMessage(input: DeleteMessageRequest): DeleteMessageCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const deleteProblem = this.deleteProblem(queue, input.ReceiptHandle, false);
    if (deleteProblem !== undefined) throw toSdkError(deleteProblem);
    return { $metadata: { ...OK_METADATA } };
  }

  /** DeleteMessageBatch: batch rules, then each entry as DeleteMessage, answered per entry. */
  deleteMessageBatch(input: DeleteMessageBatchRequest): DeleteMessageBatchCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const entries = input.Entries ?? [];
    this.checkBatchEntries(entries, 'DeleteMessageBatchRequestEntry');
    const successful: { Id: string | undefined }[] = [];
    const failed: BatchResultErrorEntry[] = [];
    for (const entry of entries) {
      const deleteProblem = this.deleteProblem(queue, entry.ReceiptHandle, true);
      if (deleteProblem === undefined) successful.push({ Id: entry.Id });
      else failed.push(failedEntry(entry.Id, deleteProblem));
    }
    return { Successful: successful, Failed: failed, $metadata: { ...OK_METADATA } };
  }

  /**
   * The outcome of a visibility change by one handle. [API reference] ChangeMessageVisibility: the
   * new timeout counts from the call; 0 makes the message visible at once. [Visibility timeout]:
   * "The maximum visibility timeout is 12 hours from the time that Amazon SQS receives the
   * ReceiveMessage request. Extending the visibility timeout does not reset the 12-hour maximum"
   * (awsdocs/amazon-sqs-developer-guide#40); beyond it SQS answers InvalidParameterValue "Total
   * VisibilityTimeout for the message is beyond the limit [43200 seconds]" and changes nothing
   * (localstack/localstack#3956, aws/aws-sdk-net#794: "The visibility timeout begins when you call
   * the ReceiveMessage API"). An expired handle is InvalidParameterValue "The receipt handle has
   * expired" (aws/aws-sdk-java#1628, the SDK team: an expired receipt handle gets
   * InvalidParameterValue, a random value ReceiptHandleIsInvalid); a deleted message "does not exist
   * or is not available for visibility timeout change" ([Recorded]
   * test_change_visibility_on_deleted_message_raises_invalid_parameter_value).
   */
  private visibilityProblem(queue: Queue, handle: string | undefined, timeoutSeconds: unknown, inBatch: boolean): SqsProblem | undefined {
    const now = this.clock.now();
    const shown = handle ?? '';
    if (!isInteger(timeoutSeconds, 0, MAX_VISIBILITY_TIMEOUT_SECONDS)) return problem(SqsErrorCode.invalidParameterValue, SqsMessage.visibilityOutOfRange(timeoutSeconds));
    const status = this.handleStatus(queue, handle, now);
    switch (status.kind) {
      case 'current': {
        const receivedAt = status.message.receivedAt ?? now;
        const deadline = now + timeoutSeconds * 1000;
        if (deadline - receivedAt > MAX_VISIBILITY_TIMEOUT_SECONDS * 1000) return problem(SqsErrorCode.invalidParameterValue, SqsMessage.visibilityBeyondLimit(timeoutSeconds));
        status.message.visibleAt = deadline;
        return undefined;
      }
      case 'deleted':
        return problem(SqsErrorCode.invalidParameterValue, SqsMessage.notAvailableForVisibilityChange(shown));
      default:
        // An expired handle in a batch answers as DeleteMessageBatch's entry does, by analogy.
        return staleHandleProblem(status.kind, shown, inBatch);
    }
  }

  /** ChangeMessageVisibility; see `visibilityProblem`. */
  changeMessageVisibility(input: ChangeMessageVisibilityRequest): ChangeMessageVisibilityCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const visibilityProblem = this.visibilityProblem(queue, input.ReceiptHandle, input.VisibilityTimeout, false);
    if (visibilityProblem !== undefined) throw toSdkError(visibilityProblem);
    return { $metadata: { ...OK_METADATA } };
  }

  /** ChangeMessageVisibilityBatch: batch rules, then each entry as ChangeMessageVisibility, answered per entry. */
  changeMessageVisibilityBatch(input: ChangeMessageVisibilityBatchRequest): ChangeMessageVisibilityBatchCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const entries = input.Entries ?? [];
    this.checkBatchEntries(entries, 'ChangeMessageVisibilityBatchRequestEntry');
    const successful: { Id: string | undefined }[] = [];
    const failed: BatchResultErrorEntry[] = [];
    for (const entry of entries) {
      const visibilityProblem = this.visibilityProblem(queue, entry.ReceiptHandle, entry.VisibilityTimeout, true);
      if (visibilityProblem === undefined) successful.push({ Id: entry.Id });
      else failed.push(failedEntry(entry.Id, visibilityProblem));
    }
    return { Successful: successful, Failed: failed, $metadata: { ...OK_METADATA } };
  }

  /**
   * [Message quotas] and the SQS batch actions: 1–10 entries, ids of up to 80 letters, digits,
   * hyphens and underscores, distinct within the request; a breach fails the whole request.
   */
  private checkBatchEntries(entries: readonly { readonly Id?: string | undefined }[], entryType: string): void {
    if (entries.length === 0) fail(SqsErrorCode.emptyBatchRequest, SqsMessage.emptyBatch(entryType));
    if (entries.length > MAX_BATCH_ENTRIES) fail(SqsErrorCode.tooManyEntriesInBatchRequest, SqsMessage.tooManyEntries(entries.length));
    const seen = new Set<string>();
    for (const { Id: id } of entries) {
      if (id === undefined || !BATCH_ENTRY_ID_PATTERN.test(id)) fail(SqsErrorCode.invalidBatchEntryId, SqsMessage.invalidBatchEntryId);
      if (seen.has(id)) fail(SqsErrorCode.batchEntryIdsNotDistinct, SqsMessage.entryIdsNotDistinct(id));
      seen.add(id);
    }
  }

  // ---- Attributes ----------------------------------------------------------------------------

  /**
   * GetQueueAttributes. [Recorded] test_fifo_approximate_number_of_messages_not_visible: on a FIFO
   * queue ApproximateNumberOfMessages counts every message not in flight, including those held
   * back behind an in-flight message of their group; ...NotVisible counts the in-flight ones.
   * Exact unless the model has a `CounterLag`: then as of a moment up to its `maxMs` ago ([GetQueueAttributes]).
   */
  getQueueAttributes(input: GetQueueAttributesRequest): GetQueueAttributesCommandOutput {
    const queue = this.queueFor(input.QueueUrl);
    const requested = input.AttributeNames ?? [];
    const isAll = requested.includes('All');
    const counts = this.counts(queue);
    const { settings } = queue;
    const available: Partial<Record<QueueAttributeName, string>> = {
      ApproximateNumberOfMessages: String(counts.visible),
      ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
      ApproximateNumberOfMessagesDelayed: String(counts.delayed),
      QueueArn: settings.arn,
      VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
      DelaySeconds: String(settings.delaySeconds),
      MaximumMessageSize: String(settings.maximumMessageBytes),
      MessageRetentionPeriod: String(settings.messageRetentionSeconds),
      FifoQueue: 'true',
      ContentBasedDeduplication: String(settings.contentBasedDeduplication),
      DeduplicationScope: settings.deduplicationScope,
      FifoThroughputLimit: settings.deduplicationScope === DeduplicationScope.messageGroup ? 'perMessageGroupId' : 'perQueue',
      ...(settings.redrive === undefined
        ? {}
        : {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: this.queueFor(settings.redrive.deadLetterQueueUrl).settings.arn,
              maxReceiveCount: settings.redrive.maxReceiveCount,
            }),
          }),
    };
    const attributes: Partial<Record<QueueAttributeName, string>> = {};
    for (const name of requested) {
      if (name === 'All') continue;
      if (!(name in QUEUE_ATTRIBUTE_NAMES)) fail(SqsErrorCode.invalidAttributeName, SqsMessage.unknownAttribute(name));
    }
    for (const [name, value] of Object.entries(available) as [QueueAttributeName, string][]) {
      if (isAll || requested.includes(name)) attributes[name] = value;
    }
    return { ...(Object.keys(attributes).length === 0 ? {} : { Attributes: attributes }), $metadata: { ...OK_METADATA } };
  }

  /** The counters, exact or lagging (see `CounterLag`). */
  private counts(queue: Queue): { visible: number; inFlight: number; delayed: number } {
    const now = this.clock.now();
    this.expire(queue, now);
    const lag = this.counterLag;
    const asOf = lag === undefined ? now : now - Math.floor(lag.random() * (lag.maxMs + 1));
    const counts = { visible: 0, inFlight: 0, delayed: 0 };
    for (const group of queue.groups.values()) {
      for (const message of group) if (message.enqueuedAt <= asOf) counts[this.stateOf(message, now)] += 1;
    }
    // Gone since `asOf`, still counted then: both lists are in the order of their removal.
    for (let index = queue.deleted.length - 1; index >= 0; index -= 1) {
      const gone = queue.deleted[index];
      if (gone === undefined || gone.deletedAt <= asOf) break;
      if (gone.enqueuedAt <= asOf) counts[gone.firstReceivedAt !== undefined && gone.firstReceivedAt <= asOf ? 'inFlight' : 'visible'] += 1;
    }
    for (let index = queue.moved.length - 1; index >= 0; index -= 1) {
      const gone = queue.moved[index];
      if (gone === undefined || gone.movedAt <= asOf) break;
      if (gone.enqueuedAt <= asOf) counts.visible += 1;
    }
    return counts;
  }

  private stateOf(message: StoredMessage, now: number): MessageState {
    if (now >= message.visibleAt) return MessageState.visible;
    return message.receiveCount === 0 ? MessageState.delayed : MessageState.inFlight;
  }

  private queueFor(url: string | undefined): Queue {
    const queue = url === undefined ? undefined : this.queuesByUrl.get(url);
    if (queue === undefined) return fail(SqsErrorCode.queueDoesNotExist, SqsMessage.queueDoesNotExist);
    return queue;
  }

  // ---- Inspection, for the simulation's checks -----------------------------------------------

  /** The URL of a queue by name. @throws SqsModelError if there is none */
  queueUrl(name: string): string {
    const queue = this.queuesByName.get(name);
    if (queue === undefined) throw new SqsModelError(`no queue ${name}`);
    return queue.settings.url;
  }

  /** A queue's settings. @throws QueueDoesNotExist */
  queueSettings(url: string): QueueSettings {
    return this.queueFor(url).settings;
  }

  /** Every message in the queue now (not deleted, not moved), in send order, with its state. */
  messages(url: string): QueuedMessageView[] {
    const queue = this.queueFor(url);
    const now = this.clock.now();
    this.expire(queue, now);
    const views: QueuedMessageView[] = [];
    for (const group of queue.groups.values()) {
      for (const message of group) {
        views.push({
          messageId: message.messageId,
          body: message.body,
          messageGroupId: message.groupId,
          deduplicationId: message.deduplicationId,
          sequenceNumber: message.sequenceNumber,
          state: this.stateOf(message, now),
          receiveCount: message.receiveCount,
          sentAt: message.sentAt,
          visibleAt: message.visibleAt,
          messageAttributes: copyAttributes({ ...message.messageAttributes }),
          deadLetterQueueSourceArn: message.deadLetterQueueSourceArn,
        });
      }
    }
    return views.sort((a, b) => (BigInt(a.sequenceNumber) < BigInt(b.sequenceNumber) ? -1 : 1));
  }

  /** Each message in the queue now, by group, without copies: for checks that run on every send. */
  *liveMessages(url: string): Generator<{ readonly messageId: string; readonly messageGroupId: string; readonly body: string }> {
    for (const group of this.queueFor(url).groups.values()) {
      for (const message of group) yield { messageId: message.messageId, messageGroupId: message.groupId, body: message.body };
    }
  }

  /** Every message deleted from the queue, in the order of deletion. */
  deletedMessages(url: string): readonly DeletedMessageView[] {
    return [...this.queueFor(url).deleted];
  }

  /** Every message SQS deleted from the queue past its retention period, in order (as of now). */
  expiredMessages(url: string): readonly ExpiredMessageView[] {
    const queue = this.queueFor(url);
    this.expire(queue, this.clock.now());
    return [...queue.expired];
  }

  /** Every message the queue's redrive policy moved to its dead-letter queue, in order. */
  movedMessages(url: string): readonly MovedMessageView[] {
    return [...this.queueFor(url).moved];
  }
}

/**
 * What SQS answers to a receipt handle that is not the message's latest one, alike for delete and
 * visibility changes: expired (InvalidParameterValue alone, ReceiptHandleIsInvalid as a batch
 * entry), of another queue, or never issued.
 */
function staleHandleProblem(kind: 'expired' | 'otherQueue' | 'unknown', shown: string, inBatch: boolean): SqsProblem {
  switch (kind) {
    case 'expired':
      return inBatch ? problem(SqsErrorCode.receiptHandleIsInvalid, SqsMessage.handleExpiredEntry) : problem(SqsErrorCode.invalidParameterValue, SqsMessage.handleExpired(shown));
    case 'otherQueue':
      return problem(SqsErrorCode.receiptHandleIsInvalid, SqsMessage.handleOfAnotherQueue(shown));
    case 'unknown':
      return problem(SqsErrorCode.receiptHandleIsInvalid, SqsMessage.notAReceiptHandle(shown));
  }
}

/** The attribute names GetQueueAttributes knows ([API reference]); others are InvalidAttributeName. */
const QUEUE_ATTRIBUTE_NAMES: Readonly<Record<QueueAttributeName, true>> = {
  All: true,
  ApproximateNumberOfMessages: true,
  ApproximateNumberOfMessagesDelayed: true,
  ApproximateNumberOfMessagesNotVisible: true,
  ContentBasedDeduplication: true,
  CreatedTimestamp: true,
  DeduplicationScope: true,
  DelaySeconds: true,
  FifoQueue: true,
  FifoThroughputLimit: true,
  KmsDataKeyReusePeriodSeconds: true,
  KmsMasterKeyId: true,
  LastModifiedTimestamp: true,
  MaximumMessageSize: true,
  MessageRetentionPeriod: true,
  Policy: true,
  QueueArn: true,
  ReceiveMessageWaitTimeSeconds: true,
  RedriveAllowPolicy: true,
  RedrivePolicy: true,
  SqsManagedSseEnabled: true,
  VisibilityTimeout: true,
};

function failedEntry(id: string | undefined, entryProblem: SqsProblem): BatchResultErrorEntry {
  // Every per-entry rejection the model makes is the sender's fault ([Recorded] test_send_batch_message_size).
  return { Id: id, SenderFault: true, Code: entryProblem.code, Message: entryProblem.message };
}

/**
 * Where every SDK call of the code under test passes: the simulation's hook for latency, faults
 * and crashes. `apply` performs the call against the model; the gate decides when (after a
 * simulated latency), whether (a fault instead), and whether the caller ever sees the answer (a
 * crash after `apply`).
 */
export type CallGate = <T>(call: { readonly service: string; readonly operation: string; readonly input: unknown }, apply: () => T) => Promise<T>;

const immediateGate: CallGate = async (_call, apply) => apply();

/**
 * An SDK client of `service` whose `send` runs commands against `model`: the operation is the
 * command's class name without `Command`, the input is `command.input`, and the answer passes the
 * gate. The code under test only calls `send` (and `destroy`); the SDK's client types are far
 * wider, so the caller names the one it stands for.
 */
export function createModelClient<Client>(service: string, model: { execute(operation: string, input: unknown): unknown }, gate: CallGate = immediateGate): Client {
  const client = {
    send: (command: { readonly input: unknown }): Promise<unknown> => {
      const operation = command.constructor.name.replace(/Command$/, '');
      return gate({ service, operation, input: command.input }, () => model.execute(operation, command.input));
    },
    destroy: (): void => undefined,
  };
  return client as unknown as Client;
}

/** An `SQSClient` whose `send` runs SDK commands against the model (see {@link createModelClient}). */
export function createModelSqsClient(model: SqsFifoModel, gate: CallGate = immediateGate): SQSClient {
  return createModelClient<SQSClient>('sqs', model, gate);
}

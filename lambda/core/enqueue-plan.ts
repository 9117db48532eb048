/**
 * How a request's events become SendMessageBatch calls without ever breaking a key's order, even
 * when SQS refuses single entries of a batch (the partial-failure rule, docs/api.md#events).
 */
import { MAX_SQS_BATCH_ENTRIES, MAX_SQS_MESSAGE_BYTES } from './limits.js';

/** One event, ready for SQS. */
export interface OutgoingMessage {
  /** Position of the event in its request. */
  readonly index: number;
  readonly orderingKey: string;
  readonly messageGroupId: string;
  /**
   * What SQS drops a resend by within its 5-minute deduplication window: unique to this message
   * unless a repeat of the same send must be dropped (a redrive step repeated after a crash).
   */
  readonly deduplicationId: string;
  readonly body: string;
}

/** What became of one message. */
export const SendStatus = { sent: 'sent', failed: 'failed', notEnqueued: 'not_enqueued' } as const;
export type SendStatus = (typeof SendStatus)[keyof typeof SendStatus];

/**
 * Why SQS did not take a message, decided by one function of the queue's adapter
 * (`classifySqsError`). Only `transient` is worth a retry; the two permanent kinds say whose
 * fault it is, as the answer differs: the sender can fix an event, not our configuration.
 */
export const SendFailureKind = {
  /** Throttled, unavailable, no answer: the same message may be taken on a retry. */
  transient: 'transient',
  /** SQS refuses this message itself (`InvalidMessageContents`, `InvalidParameterValue`), on every retry. */
  messageRefused: 'message_refused',
  /** SQS refuses us (`AccessDenied`, `QueueDoesNotExist`, KMS): our configuration, until an operator fixes it. */
  configuration: 'configuration',
} as const;
export type SendFailureKind = (typeof SendFailureKind)[keyof typeof SendFailureKind];

/** One message SQS did not take: why, and SQS's error code (for logs and the sender's details). */
export interface SendFailure {
  readonly kind: SendFailureKind;
  readonly code: string;
}

/** SQS's answer to one SendMessageBatch, by `index`. */
export interface SendAnswer {
  /** The entries SQS did not take, each with why. */
  readonly refused: ReadonlyMap<number, SendFailure>;
  /**
   * The SequenceNumber SQS gave each entry it took, where the answer is known to name the message
   * that entry made: absent for every entry of a call the SDK had to repeat, since SQS answers a
   * repeat it deduplicated in a way AWS does not document.
   */
  readonly sequenceNumbers: ReadonlyMap<number, string>;
}

/** Sends one SendMessageBatch. */
export type SendBatch = (entries: readonly OutgoingMessage[]) => Promise<SendAnswer>;

/** What became of the messages of a send: every status, why each `failed` one failed, and the sequence numbers SQS gave. */
export interface SendReport {
  readonly statuses: ReadonlyMap<number, SendStatus>;
  readonly failures: ReadonlyMap<number, SendFailure>;
  readonly sequenceNumbers: ReadonlyMap<number, string>;
}

/**
 * Splits messages into waves of SendMessageBatch calls. Wave w holds the w-th message of each key,
 * so one call never carries two messages of one key: SQS reports each entry of a batch on its own,
 * and a key's later event must never be taken when an earlier one was refused. The calls of a wave
 * touch distinct keys and may run concurrently; wave w + 1 starts when wave w has answered.
 * Each call holds at most 10 entries and at most 1 MiB of bodies.
 */
export function planSendWaves(messages: readonly OutgoingMessage[]): OutgoingMessage[][][] {
  const rankByKey = new Map<string, number>();
  const waves: OutgoingMessage[][] = [];
  for (const message of messages) {
    const rank = rankByKey.get(message.orderingKey) ?? 0;
    rankByKey.set(message.orderingKey, rank + 1);
    (waves[rank] ??= []).push(message);
  }
  return waves.map(chunkIntoCalls);
}

function chunkIntoCalls(wave: readonly OutgoingMessage[]): OutgoingMessage[][] {
  const calls: OutgoingMessage[][] = [];
  let call: OutgoingMessage[] = [];
  let callBytes = 0;
  for (const message of wave) {
    const bytes = Buffer.byteLength(message.body, 'utf8');
    if (call.length === MAX_SQS_BATCH_ENTRIES || (call.length > 0 && callBytes + bytes > MAX_SQS_MESSAGE_BYTES)) {
      calls.push(call);
      call = [];
      callBytes = 0;
    }
    call.push(message);
    callBytes += bytes;
  }
  if (call.length > 0) calls.push(call);
  return calls;
}

/**
 * Sends the waves in order and applies the partial-failure rule: once an event of a key failed,
 * for whatever reason, no later event of that key is sent (`not_enqueued`); other keys go on.
 */
export async function sendInKeyOrder(messages: readonly OutgoingMessage[], sendBatch: SendBatch): Promise<SendReport> {
  const statuses = new Map<number, SendStatus>();
  const failures = new Map<number, SendFailure>();
  const sequenceNumbers = new Map<number, string>();
  const failedKeys = new Set<string>();
  for (const wave of planSendWaves(messages)) {
    await Promise.all(
      wave.map(async (call) => {
        const entries = call.filter((message) => {
          const isBlocked = failedKeys.has(message.orderingKey);
          if (isBlocked) statuses.set(message.index, SendStatus.notEnqueued);
          return !isBlocked;
        });
        if (entries.length === 0) return;
        const answer = await sendBatch(entries);
        for (const message of entries) {
          const sequenceNumber = answer.sequenceNumbers.get(message.index);
          if (sequenceNumber !== undefined) sequenceNumbers.set(message.index, sequenceNumber);
          const failure = answer.refused.get(message.index);
          statuses.set(message.index, failure === undefined ? SendStatus.sent : SendStatus.failed);
          if (failure === undefined) continue;
          failures.set(message.index, failure);
          failedKeys.add(message.orderingKey);
        }
      }),
    );
  }
  return { statuses, failures, sequenceNumbers };
}

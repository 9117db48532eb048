/**
 * How a request's events become SendMessageBatch calls without ever breaking a key's order, even
 * when SQS refuses single entries of a batch (CONTRACT §2, partial failure rule).
 */
import { MAX_SQS_BATCH_ENTRIES, MAX_SQS_MESSAGE_BYTES } from './limits.js';

/** One event, ready for SQS. */
export interface OutgoingMessage {
  /** Position of the event in its request. */
  readonly index: number;
  readonly orderingKey: string;
  readonly messageGroupId: string;
  /** The event_id: SQS drops a resend within its 5-minute deduplication window. */
  readonly deduplicationId: string;
  readonly body: string;
}

/** What became of one message. */
export const SendStatus = { sent: 'sent', failed: 'failed', notEnqueued: 'not_enqueued' } as const;
export type SendStatus = (typeof SendStatus)[keyof typeof SendStatus];

/** Sends one SendMessageBatch; resolves to the `index`es of the entries SQS did not take. */
export type SendBatch = (entries: readonly OutgoingMessage[]) => Promise<ReadonlySet<number>>;

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
 * no later event of that key is sent (`not_enqueued`); other keys go on.
 * @returns the status of every message, by `index`
 */
export async function sendInKeyOrder(
  messages: readonly OutgoingMessage[],
  sendBatch: SendBatch,
): Promise<Map<number, SendStatus>> {
  const statuses = new Map<number, SendStatus>();
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
        const refused = await sendBatch(entries);
        for (const message of entries) {
          const hasFailed = refused.has(message.index);
          statuses.set(message.index, hasFailed ? SendStatus.failed : SendStatus.sent);
          if (hasFailed) failedKeys.add(message.orderingKey);
        }
      }),
    );
  }
  return statuses;
}

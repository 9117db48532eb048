/**
 * Redrive of one subscription's dead letters (issue 4): back into the delivery queue in their
 * original order, keeping their event ids and sequence numbers, marked as late redeliveries.
 * One call does a bounded step (API Gateway allows 30 s); the caller repeats until done.
 */
import { queuedEventSchema, type QueuedEvent } from './event.js';
import type { OutgoingMessage } from './enqueue-plan.js';

/** A message received from the dead-letter queue. */
export interface DeadLetterMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly messageGroupId: string;
  readonly body: string;
  /** The `sequence` attribute the consumer gave it; absent on SQS's backstop redrive. */
  readonly sequence: number | undefined;
  /** Its message attributes (reason, attempts…), kept when it is moved to the back of the queue. */
  readonly attributes: Readonly<Record<string, { readonly dataType: string; readonly value: string }>>;
}

/** A dead letter as listed by the dead-letters index. */
export interface ListedDeadLetter {
  readonly event_id: string;
  readonly message_group_id: string;
  readonly sequence: number;
}

export interface RedrivePorts {
  readonly listDeadLetters: (subscriptionId: string) => Promise<readonly ListedDeadLetter[]>;
  /** Receives up to 10 dead letters, invisible to others until released or removed. */
  readonly receive: () => Promise<readonly DeadLetterMessage[]>;
  readonly release: (messages: readonly DeadLetterMessage[]) => Promise<void>;
  readonly remove: (message: DeadLetterMessage) => Promise<void>;
  /** Sends a dead letter of another key to the back of the dead-letter queue, then removes it. */
  readonly moveToBack: (message: DeadLetterMessage) => Promise<void>;
  /** Enqueues into the delivery queue; false when SQS refused it. */
  readonly enqueue: (message: OutgoingMessage) => Promise<boolean>;
  /**
   * Makes the event pending again before it is enqueued: the consumer skips an event it finds
   * settled, so a dead-lettered status would swallow the redelivery.
   */
  readonly markPending: (input: { readonly queued: QueuedEvent; readonly at: string }) => Promise<void>;
  /** Once it is out of the dead-letter queue: out of the dead-letters list, and moved in its groups' lag. */
  readonly markRedriven: (input: { readonly queued: QueuedEvent; readonly fromGroup: string; readonly at: string }) => Promise<void>;
  /** The message group the key routes to now (the routing may have changed since). */
  readonly groupOf: (orderingKey: string) => Promise<string>;
  /** A deduplication id for this redrive of this event: unique, at most 128 characters. */
  readonly deduplicationIdOf: (eventId: string, at: string) => string;
  readonly now: () => Date;
  /** Whether the step may go on (time left before the API's deadline). */
  readonly hasTime: () => boolean;
}

export interface RedriveStep {
  readonly redriven: readonly { readonly event_id: string; readonly sequence: number | null }[];
  readonly remaining: number;
  readonly isDone: boolean;
}

function readQueued(body: string): QueuedEvent | undefined {
  try {
    const parsed = queuedEventSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One step: the dead-letter queue hands out a message group's messages in order and holds the rest
 * of the group while one is out, so each of this subscription's dead letters is enqueued and then
 * removed before the next; dead letters of other groups are held and released at the end; another
 * key's dead letters in the same group (partition mode) go to the back of the queue, their own
 * order kept.
 */
export async function redriveStep(subscriptionId: string, ports: RedrivePorts): Promise<RedriveStep> {
  const listed = await ports.listDeadLetters(subscriptionId);
  if (listed.length === 0) return { redriven: [], remaining: 0, isDone: true };
  const groups = new Set(listed.map((letter) => letter.message_group_id));
  const sequenceOf = new Map(listed.map((letter) => [letter.event_id, letter.sequence]));
  const held: DeadLetterMessage[] = [];
  const redriven: { event_id: string; sequence: number | null }[] = [];
  try {
    while (ports.hasTime() && redriven.length < listed.length) {
      const batch = await ports.receive();
      if (batch.length === 0) break;
      for (const message of batch) {
        const queued = groups.has(message.messageGroupId) ? readQueued(message.body) : undefined;
        if (queued === undefined) {
          held.push(message);
          continue;
        }
        if (queued.event.subscription_id !== subscriptionId) {
          await ports.moveToBack(message);
          continue;
        }
        const at = ports.now().toISOString();
        const sequence = message.sequence ?? sequenceOf.get(queued.event.event_id);
        const group = await ports.groupOf(queued.ordering_key);
        const body: QueuedEvent = {
          ...queued,
          message_group_id: group,
          redrive: { ...(sequence === undefined ? {} : { sequence }), redriven_at: at },
        };
        await ports.markPending({ queued: body, at });
        const isEnqueued = await ports.enqueue({
          index: 0,
          orderingKey: queued.ordering_key,
          messageGroupId: group,
          deduplicationId: ports.deduplicationIdOf(queued.event.event_id, at),
          body: JSON.stringify(body),
        });
        if (!isEnqueued) {
          // Stop here, in order: the next call starts again from this dead letter, still listed.
          held.push(message);
          return { redriven, remaining: listed.length - redriven.length, isDone: false };
        }
        await ports.remove(message);
        await ports.markRedriven({ queued: body, fromGroup: message.messageGroupId, at });
        redriven.push({ event_id: queued.event.event_id, sequence: sequence ?? null });
      }
    }
  } finally {
    await ports.release(held);
  }
  const remaining = Math.max(0, listed.length - redriven.length);
  return { redriven, remaining, isDone: remaining === 0 };
}

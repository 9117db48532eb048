/**
 * Redrive of one subscription's dead letters (issue 4): back into the delivery queue in their
 * original order, keeping their event ids and sequence numbers, marked as late redeliveries.
 * One call does a bounded step (API Gateway allows 30 s); the caller repeats until done.
 */
import { readQueuedEvent, type QueuedEvent } from './event.js';
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
  /** The subscription's listed dead letters (those not redriven yet). */
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
   * Takes the event off the dead-letters list and moves it in its groups' lag, once: false when a
   * crashed earlier step did it already.
   */
  readonly markRedriven: (input: { readonly queued: QueuedEvent; readonly fromGroup: string; readonly at: string }) => Promise<boolean>;
  /** Whether an earlier step redrove this event (it is in the queue again, or delivered). */
  readonly wasRedriven: (eventId: string) => Promise<boolean>;
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
  const read = readQueuedEvent(body);
  return 'queued' in read ? read.queued : undefined;
}

/**
 * One step. The dead-letter queue hands out a group's messages in order and holds the rest of the
 * group while one is out, so each dead letter of the subscription is enqueued, taken off the list
 * and removed before the next; they go in sequence order even when they sit in two groups (dead
 * letters from before and after a repartition). Dead letters of other groups are held and released
 * at the end; another key's dead letters in the same group (partition mode) go to the back of the
 * queue, their own order kept.
 *
 * Crash safety: enqueue, then list/lag, then remove. A step repeated after a crash enqueues a dead
 * letter again (the consumer delivers it once: a redriven copy counts as settled once delivered),
 * counts it once (the listing is the condition), and removes what is left in the queue.
 */
export async function redriveStep(subscriptionId: string, ports: RedrivePorts): Promise<RedriveStep> {
  const listed = [...(await ports.listDeadLetters(subscriptionId))].sort((a, b) => a.sequence - b.sequence);
  const waiting = new Map(listed.map((letter) => [letter.event_id, letter.sequence]));
  const held: DeadLetterMessage[] = [];
  /** This subscription's dead letters received before their turn. */
  let deferred: { message: DeadLetterMessage; queued: QueuedEvent }[] = [];
  const redriven: { event_id: string; sequence: number | null }[] = [];
  const lowestWaiting = (): number => Math.min(...waiting.values());
  const sequenceOf = (message: DeadLetterMessage, queued: QueuedEvent): number | undefined => message.sequence ?? waiting.get(queued.event.event_id);

  /** Redrives one dead letter of the subscription; false when SQS refused it (stop, in order). */
  const redriveOne = async (message: DeadLetterMessage, queued: QueuedEvent): Promise<boolean> => {
    const eventId = queued.event.event_id;
    const sequence = sequenceOf(message, queued);
    const at = ports.now().toISOString();
    const group = await ports.groupOf(queued.ordering_key);
    const body: QueuedEvent = { ...queued, message_group_id: group, redrive: { ...(sequence === undefined ? {} : { sequence }), redriven_at: at } };
    const isEnqueued = await ports.enqueue({
      index: 0,
      orderingKey: queued.ordering_key,
      messageGroupId: group,
      deduplicationId: ports.deduplicationIdOf(eventId, at),
      body: JSON.stringify(body),
    });
    if (!isEnqueued) return false;
    await ports.markRedriven({ queued: body, fromGroup: message.messageGroupId, at });
    await ports.remove(message);
    waiting.delete(eventId);
    redriven.push({ event_id: eventId, sequence: sequence ?? null });
    return true;
  };

  /** Redrives the deferred dead letters whose turn has come; false when SQS refused one. */
  const redriveDeferred = async (): Promise<boolean> => {
    for (;;) {
      const next = deferred.find(({ message, queued }) => waiting.size === 0 || (sequenceOf(message, queued) ?? 0) <= lowestWaiting());
      if (next === undefined) return true;
      deferred = deferred.filter((entry) => entry !== next);
      if (!(await redriveOne(next.message, next.queued))) {
        held.push(next.message);
        return false;
      }
    }
  };

  try {
    receiving: while (ports.hasTime() && waiting.size > 0) {
      const batch = await ports.receive();
      if (batch.length === 0) break;
      for (const message of batch) {
        const queued = readQueued(message.body);
        if (queued === undefined) {
          held.push(message);
          continue;
        }
        if (queued.event.subscription_id !== subscriptionId) {
          // Another key in a group of this one's dead letters would block them: to the back.
          const isBlocking = listed.some((letter) => letter.message_group_id === message.messageGroupId);
          if (isBlocking) await ports.moveToBack(message);
          else held.push(message);
          continue;
        }
        if (!waiting.has(queued.event.event_id)) {
          // An earlier step enqueued it and took it off the list, then crashed before removing it;
          // anything else unlisted (SQS's backstop moved it, without a record) is left alone.
          if (await ports.wasRedriven(queued.event.event_id)) await ports.remove(message);
          else held.push(message);
          continue;
        }
        deferred.push({ message, queued });
        if (!(await redriveDeferred())) break receiving;
      }
    }
  } finally {
    await ports.release([...held, ...deferred.map((entry) => entry.message)]);
  }
  return { redriven, remaining: waiting.size, isDone: waiting.size === 0 };
}

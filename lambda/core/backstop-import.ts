/**
 * Import of what SQS's backstop moved to the FIFO dead-letter queue (a message received more than
 * `maxReceiveCount` times: a crash loop) into the store of dead letters, so that nothing in that
 * queue is unlisted or unredrivable. One call is a bounded step; the caller repeats until done.
 */
import { placeOf, type DeadLetterPlace, type DeadLetterStore } from './dead-letter.js';
import { settledQueryOf, type DeliveryStore, type SettledQuery } from './delivery.js';
import { publicEventIdOf, readQueuedMessage, type QueuedEvent } from './event.js';
import { HeadState, type GroupProgress } from './lag.js';

/** A message of the backstop queue, received and held invisible while it is imported. */
export interface BackstopMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly messageGroupId: string;
  readonly body: string;
  /** SQS's receive count when it moved the message: how often it was handed out. */
  readonly receiveCount: number;
}

/** An ordering key's head as the consumer last began it. */
export interface KeyHead {
  readonly eventId: string;
  readonly sequence: number;
  readonly attempts: number;
  /** The head before it, whose number the consumer may not have written on its record yet. */
  readonly previous?: { readonly eventId: string; readonly sequence: number };
  /** The head before that one (see `AttemptTicket.earlier`). */
  readonly earlier?: { readonly eventId: string; readonly sequence: number };
  /** Events numbered with a batch of the key, not yet begun alone (see `AttemptTicket.ahead`). */
  readonly numberedAhead?: readonly { readonly eventId: string; readonly sequence: number }[];
}

export interface BackstopImportPorts {
  /** Receives up to 10 messages, held invisible until released or removed. */
  readonly receive: () => Promise<readonly BackstopMessage[]>;
  readonly release: (messages: readonly BackstopMessage[]) => Promise<void>;
  readonly remove: (message: BackstopMessage) => Promise<void>;
  readonly findHead: (orderingKey: string) => Promise<KeyHead | undefined>;
  readonly deadLetters: Pick<DeadLetterStore, 'put'>;
  /** Counts a dead letter in its group's lag, once per place in the store (see `GroupStore`). */
  readonly countDeadLetter: (place: DeadLetterPlace) => Promise<void>;
  readonly events: Pick<DeliveryStore, 'markDeadLettered'> & {
    /** Whether the event was delivered, or dead-lettered (after its redrive, for a redriven one; after it was sent, for a replay's copy). */
    readonly isSettled: (query: SettledQuery) => Promise<boolean>;
    /** The sequence the consumer recorded for the event, when it gave one. */
    readonly findSequence: (eventId: string) => Promise<number | undefined>;
  };
  readonly recordProgress: (progress: GroupProgress) => Promise<void>;
  readonly now: () => Date;
  readonly hasTime: () => boolean;
}

export interface BackstopImportStep {
  readonly imported: readonly { readonly event_id: string; readonly subscription_id: string; readonly sequence: number | null }[];
  /** Messages that are, or hold, something other than a queued event: left in the queue, for a person to look at. */
  readonly unreadable: number;
  readonly isDone: boolean;
}

/**
 * One step. Each event a message holds (one, or a pack's, in order) is written to the store (with
 * the sequence the consumer gave it, when the event was its key's head), recorded as dead-lettered,
 * counted in its group's lag; only then is the message removed from the queue: a crash in between
 * imports it again, to the same place. An event that was settled after all (delivered, or
 * dead-lettered by the consumer) is not imported. Records that are, or hold, no event stay in the queue, released at once so that the events
 * behind them in their group are reached; the step is done when a receive brings nothing new.
 */
export async function importBackstopStep(ports: BackstopImportPorts): Promise<BackstopImportStep> {
  const imported: { event_id: string; subscription_id: string; sequence: number | null }[] = [];
  /** Records that are no event, by message id: seen once, they are released at once and not counted again. */
  const unreadable = new Set<string>();
  let isDone = false;
  let isOutOfTime = false;
  while (ports.hasTime()) {
    const batch = await ports.receive();
    const held: BackstopMessage[] = [];
    let hasNews = false;
    try {
      for (const message of batch) {
        // A receive may hold ten packs of many events: time is asked before each event, and what
        // is left goes back at once, its imported events found settled when it comes back.
        if (isOutOfTime || !ports.hasTime()) {
          isOutOfTime = true;
          held.push(message);
          continue;
        }
        const read = readQueuedMessage(message.body);
        const items = 'reason' in read ? [] : read.items;
        const events = items.flatMap((item) => ('queued' in item ? [item.queued] : []));
        // Each event of a pack is imported on its own, in order; the message goes once all are in.
        for (const [index, queued] of events.entries()) {
          if (index > 0 && !ports.hasTime()) {
            isOutOfTime = true;
            break;
          }
          imported.push(...(await importOne(ports, message, queued)));
        }
        if (isOutOfTime) {
          held.push(message);
          continue;
        }
        if (events.length > 0 && events.length === items.length) {
          await ports.remove(message);
          hasNews = true;
          continue;
        }
        // What is no event stays: a pack's events are in the store already, and found settled
        // when it comes back.
        held.push(message);
        hasNews ||= !unreadable.has(message.messageId);
        unreadable.add(message.messageId);
      }
    } finally {
      // Released at once: a held message locks its whole FIFO group, and the events behind it
      // must be reached by the next receive.
      if (held.length > 0) await ports.release(held);
    }
    if (isOutOfTime) break;
    // Done when nothing is left but records already seen (they come back at their group's head).
    if (!hasNews) {
      isDone = true;
      break;
    }
  }
  return { imported, unreadable: unreadable.size, isDone };
}

/** Imports one event of a message; what was imported (nothing, for an event settled after all). */
async function importOne(ports: BackstopImportPorts, message: BackstopMessage, queued: QueuedEvent): Promise<BackstopImportStep['imported']> {
  const eventId = queued.event.event_id;
  if (await ports.events.isSettled(settledQueryOf(queued))) return [];
  const head = await ports.findHead(queued.ordering_key);
  const isHead = head?.eventId === eventId;
  // Its key may have moved on since (the backstop let its successors through): the number it was
  // given is kept on the key as the previous head until the consumer has written it on the
  // event's own record, before the key moves on again.
  const previous = [head?.previous, head?.earlier, ...(head?.numberedAhead ?? [])].find((kept) => kept?.eventId === eventId)?.sequence;
  const sequence = isHead ? head.sequence : (previous ?? queued.redrive?.sequence ?? (await ports.events.findSequence(eventId)));
  const attempts = isHead ? head.attempts : 0;
  const at = ports.now().toISOString();
  const reason = `moved to the dead-letter queue by SQS after ${message.receiveCount} receives (a crash loop); ${attempts} attempt${attempts === 1 ? '' : 's'} made`;
  // Listed first, then counted: unlike the consumer (see `giveUp`), the import may meet its message
  // again after a redrive took its dead letter (a crash before the message's removal), and a count
  // made then, with nothing to list, would never be taken back. Listing first, a redrive taking the
  // dead letter before it is counted leaves the count one too high (see docs/api.md, *The lag view*).
  await ports.deadLetters.put({ queued, sequence, attempts, reason, deadLetteredAt: at });
  await ports.countDeadLetter(placeOf({ queued, sequence }));
  const { wasAccepted } = await ports.events.markDeadLettered({ queued, sequence, attempts, at, reason });
  if (wasAccepted) {
    await ports.recordProgress({
      messageGroupId: queued.message_group_id,
      settled: 1,
      lastSettledAcceptedAt: undefined,
      head: { state: HeadState.unknown },
    });
  }
  return [{ event_id: publicEventIdOf(queued), subscription_id: queued.event.subscription_id, sequence: sequence ?? null }];
}

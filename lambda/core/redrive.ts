/**
 * Redrive of one subscription's dead letters: from the store back into the delivery queue, in
 * sequence order per ordering key, keeping their event ids and sequence numbers, marked as late
 * redeliveries. One call is a bounded step (API Gateway allows 30 s); the caller repeats until done.
 */
import { ErrorCode, type Refusal } from './api-error.js';
import { giveUpNumberOf, redriveDeduplicationId, RemoveOutcome, type DeadLetterPlace, type DeadLetterStore, type StoredDeadLetter } from './dead-letter.js';
import { SendFailureKind, sendInKeyOrder, SendStatus, type OutgoingMessage, type SendBatch } from './enqueue-plan.js';
import { encodeQueuedEvent, publicEventIdOf, type QueuedEvent } from './event.js';

/** Dead letters read from the store at a time: a few SendMessageBatch calls' worth. */
export const REDRIVE_PAGE_SIZE = 50;

/** Most dead letters one step redrives, so that its answer stays small whatever the time left. */
export const MAX_REDRIVEN_PER_STEP = 1000;

export interface RedrivePorts {
  readonly store: Pick<DeadLetterStore, 'readPage' | 'remove' | 'count'>;
  /** Sends one SendMessageBatch to the delivery queue; resolves to the entries SQS refused. */
  readonly enqueue: SendBatch;
  /** Counts a redriven dead letter as pending again in the group it goes to. */
  readonly recordRedriven: (input: { readonly letter: StoredDeadLetter; readonly toGroup: string; readonly at: string }) => Promise<void>;
  /** Counts and uncounts a dead letter in the lag of the group it died in, once per place (see `GroupStore`). */
  readonly countDeadLetter: (place: DeadLetterPlace) => Promise<void>;
  readonly uncountDeadLetter: (place: DeadLetterPlace) => Promise<void>;
  /** The message group a key routes to now (the routing may have changed since it died). */
  readonly groupOf: (orderingKey: string) => string;
  readonly now: () => Date;
  /** Whether the step may go on (time left before the API's deadline). */
  readonly hasTime: () => boolean;
}

export interface RedriveStep {
  readonly redriven: readonly { readonly event_id: string; readonly sequence: number | null }[];
  /** Dead letters the subscription still has: exact when the step is done, else the store's count. */
  readonly remaining: number;
  readonly isDone: boolean;
  /**
   * Dead letters SQS refused permanently in this step (see `SendFailureKind`): repeating the step
   * cannot redrive them or anything after them of their keys, so the step is answered as a fault
   * for an operator to look at, never as work left to repeat.
   */
  readonly refused: readonly { readonly event_id: string; readonly code: string }[];
}

/**
 * Whether a redrive step may run now; the refusal otherwise. A redrive routes by the routing in
 * force, so it is refused (`ingest_paused`) while ingest is paused: the routing may be switching.
 */
export function checkRedrive(routing: { readonly isPaused: boolean }): Refusal | undefined {
  return routing.isPaused ? { code: ErrorCode.ingestPaused, message: 'Ingest is paused for a routing switch; redrive after it resumes.' } : undefined;
}

/**
 * The queued event a dead letter becomes again: routed anew, its sequence kept, marked as a
 * redrive with the number of the give-up it comes from (what the consumer orders its outcomes by). A dead letter given up as a parked event's copy loses that mark: it is a redrive now,
 * parked behind a park like any event, never taken for one of the park's copies.
 */
export function toRedrivenEvent(letter: StoredDeadLetter, group: string, at: string): QueuedEvent {
  const { parked: _copyOf, ...queued } = letter.queued;
  const giveUp = giveUpNumberOf(letter.queued);
  return {
    ...queued,
    message_group_id: group,
    redrive: { ...(letter.sequence === undefined ? {} : { sequence: letter.sequence }), redriven_at: at, ...(giveUp === undefined ? {} : { give_up: giveUp }) },
  };
}

/**
 * One step. Reads the store page by page in position order (each key's dead letters contiguous, in
 * sequence order) and sends each page with the ingest rule: one SendMessageBatch never carries two
 * events of one key, and once SQS refuses an event no later one of its key is sent in this step.
 * Nothing is received from a queue, so no message group can lock the step, whatever the number of
 * dead letters.
 *
 * Crash safety: uncount from the group it died in, enqueue, remove from the store (or count
 * again what was not sent), then count it pending where it goes. A step repeated after a crash
 * sends a dead letter again with the same deduplication id (SQS drops it within 5 minutes; later
 * the consumer finds the first copy settled), uncounts it at most once (per place), and removes it
 * once (the removal is conditional on the dead-lettering that was read, so a redriven event given
 * up again meanwhile, and written back, stays, and is counted again). Uncounting before removing
 * means a crash in between leaves the count short while the dead letters stay listed for the step
 * to repeat, never a count of a dead letter nobody lists any more.
 */
export async function redriveStep(subscriptionId: string, ports: RedrivePorts): Promise<RedriveStep> {
  const redriven: { event_id: string; sequence: number | null }[] = [];
  const refused: { event_id: string; code: string }[] = [];
  /** Keys with a dead letter SQS refused in this step: their later ones wait for the next step. */
  const blockedKeys = new Set<string>();
  let held = 0;
  let after: string | undefined;
  let isExhausted = false;
  while (ports.hasTime() && redriven.length < MAX_REDRIVEN_PER_STEP) {
    const page = await ports.store.readPage({ subscriptionId, after, limit: Math.min(REDRIVE_PAGE_SIZE, MAX_REDRIVEN_PER_STEP - redriven.length) });
    const at = ports.now().toISOString();
    const waiting = page.letters.filter((letter) => !blockedKeys.has(letter.orderingKey));
    held += page.letters.length - waiting.length;
    const messages: OutgoingMessage[] = waiting.map((letter, index) => {
      const group = ports.groupOf(letter.orderingKey);
      return {
        index,
        orderingKey: letter.orderingKey,
        messageGroupId: group,
        deduplicationId: redriveDeduplicationId(letter),
        body: encodeQueuedEvent(toRedrivenEvent(letter, group, at)),
      };
    });
    // Uncounted before they are sent, not between the send and the removal: the consumer may give a
    // redriven event up again within milliseconds, and the removal must come as soon as it can.
    await Promise.all(waiting.map((letter) => ports.uncountDeadLetter(letter)));
    const { statuses, failures } = await sendInKeyOrder(messages, ports.enqueue);
    for (const [index, letter] of waiting.entries()) {
      const message = messages[index];
      if (message === undefined) continue;
      const failure = failures.get(index);
      if (failure !== undefined && failure.kind !== SendFailureKind.transient) refused.push({ event_id: publicEventIdOf(letter.queued), code: failure.code });
      if (statuses.get(index) !== SendStatus.sent) {
        // Not sent, so still listed: counted again.
        await ports.countDeadLetter(letter);
        blockedKeys.add(letter.orderingKey);
        held += 1;
        continue;
      }
      const removal = await ports.store.remove(letter);
      // Given up again after it was sent, and written back in its place: it is listed, so counted.
      if (removal === RemoveOutcome.replaced) await ports.countDeadLetter(letter);
      if (removal !== RemoveOutcome.removed) continue;
      await ports.recordRedriven({ letter, toGroup: message.messageGroupId, at });
      redriven.push({ event_id: publicEventIdOf(letter.queued), sequence: letter.sequence ?? null });
    }
    // A permanent refusal ends the step: the operator is told at once, not after every page failed alike.
    if (refused.length > 0) break;
    after = page.nextAfter;
    if (after === undefined) {
      isExhausted = true;
      break;
    }
  }
  const isDone = isExhausted && held === 0;
  return { redriven, remaining: isExhausted ? held : Math.max(held, await ports.store.count(subscriptionId)), isDone, refused };
}

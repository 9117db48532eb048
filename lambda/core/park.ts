/**
 * Parking a paused subscription's backlog (`PAUSE_EVACUATION=store`): SQS keeps a message
 * 14 days, so a group held for a pause that long would lose its events. The consumer, receiving a
 * held group whose oldest event has waited `HELD_AGE_ALARM_SECONDS`, writes its events into the
 * store of dead letters, in their order, and deletes them from the queue: they are parked. Resume
 * sends them back into their group, in order, and the consumer delivers them as any event (its
 * key's next number; never a redelivery: they were never delivered).
 *
 * The one hard part is a key's live events, which keep coming, during the pause and after the
 * resume. The rule, per subscription and group, with places in the group (`messagePositionOf`,
 * which grow with every message of a group):
 *
 * - while the group has a parked event whose copy sent back has not yet been settled by the
 *   consumer (`isParkOpen`), every live event of the subscription the consumer receives in the
 *   group is parked too, behind the others: it is ahead, in the group, of a parked event's copy
 *   not yet received, or that copy was not yet sent;
 * - once every parked event's copy was settled, the live events after are delivered: the group is
 *   FIFO, so whatever the consumer receives after the last copy was behind every copy;
 * - a live event at or before the last place parked was handled before (parked, or delivered
 *   before the park began) and is a copy SQS handed out again: it is dropped.
 *
 * The consumer is the only writer of a group's park state (it holds the group, one receive at a
 * time), and resume only sends what is parked and removes it; so the state needs no lock. A copy
 * sent twice (a resume step repeated after a crash, past SQS's 5-minute deduplication) is settled
 * as a duplicate. Which groups of a subscription have a park is on the subscription
 * (`parked_groups`), which the consumer reads with every batch anyway: only those groups' states are
 * read. The mark is made before the state and removed after it (each only while it names the same
 * park), so that a subscription never lacks the mark of an open park.
 */
import { encodeQueuedEvent, type QueuedEvent } from './event.js';
import { sendInKeyOrder, SendStatus, type OutgoingMessage, type SendBatch } from './enqueue-plan.js';
import { createHash } from 'node:crypto';
import type { GroupLag } from './lag.js';

/** Where a subscription's parked events of one group stand; places are `messagePositionOf` strings. */
export interface ParkState {
  /**
   * The place of the last event parked in the group: written, and the write confirmed here. Resume
   * sends nothing beyond it: an event written past it (a park cut short by a crash) may still have
   * its message in the queue, ahead of anything sent back.
   */
  readonly lastParked: string;
  /**
   * The place of the last event a park began to write ('' before any), noted before it writes:
   * past `lastParked` only while a park was cut short, whose messages come back and are parked
   * again, never delivered (see {@link decidePark}).
   */
  readonly parkingThrough: string;
  /**
   * The greatest place among the parked events whose copies the consumer has settled; '' before
   * any. Copies are sent back one at a time in place order (see `stepUnpark`), so the group holds
   * them in that order, and a copy settled means every one before it was.
   */
  readonly returnedThrough: string;
  /** Which park this is: a group parked again after its park ended is another (see the adapter's marks). */
  readonly parkId: string;
}

/** Whether a group's park still holds live events back: a parked event's copy is not yet settled. */
export function isParkOpen(state: ParkState | undefined): boolean {
  return state !== undefined && (state.lastParked > state.returnedThrough || state.parkingThrough > state.returnedThrough);
}

/** What the consumer does with a live event of a subscription that parks (see the file's comment). */
export const ParkDecision = {
  /** Into the store, behind what is parked. */
  park: 'park',
  /** A copy of one handled before (parked, or delivered before the park): deleted, nothing else. */
  drop: 'drop',
  /** As any event: delivered, or held for a pause. */
  deliver: 'deliver',
} as const;
export type ParkDecision = (typeof ParkDecision)[keyof typeof ParkDecision];

/**
 * The decision for a live event at `place` (never for a parked event's copy, which is delivered):
 * `isDue` when its subscription is paused and it has waited the time to park a held group.
 */
export function decidePark(state: ParkState | undefined, place: string, isDue: boolean): ParkDecision {
  if (state !== undefined && place <= state.lastParked) return ParkDecision.drop;
  return isParkOpen(state) || isDue ? ParkDecision.park : ParkDecision.deliver;
}

/** The state after parking events through `place`: written and confirmed. */
export function parkedThrough(state: ParkState | undefined, place: string): ParkState {
  const parkingThrough = state !== undefined && state.parkingThrough > place ? state.parkingThrough : place;
  return { lastParked: place, parkingThrough, returnedThrough: state?.returnedThrough ?? '', parkId: state?.parkId ?? '' };
}

/**
 * Whether a held group's event that has waited since `waitingSince` is due to be parked:
 * `parkAfterSeconds` is the age (`HELD_AGE_ALARM_SECONDS` under `PAUSE_EVACUATION=store`).
 */
export function isDueToPark(waitingSince: string, now: Date, parkAfterSeconds: number | undefined): boolean {
  return parkAfterSeconds !== undefined && now.getTime() - Date.parse(waitingSince) >= parkAfterSeconds * 1000;
}

/**
 * How long to hold a group for a pause: the longest SQS allows (`ceilingSeconds`), but no longer
 * than until its head is due to be parked, so that a held group is parked within a minute of that
 * age rather than up to 12 hours after it.
 */
export function holdSecondsFor(waitingSince: string, now: Date, ceilingSeconds: number, parkAfterSeconds: number | undefined): number {
  if (parkAfterSeconds === undefined) return ceilingSeconds;
  const dueInSeconds = Math.ceil((Date.parse(waitingSince) + parkAfterSeconds * 1000 - now.getTime()) / 1000);
  return Math.max(1, Math.min(ceilingSeconds, dueInSeconds));
}

/** A parked event: where its message stood in its group, and the event as it was queued. */
export interface ParkedEvent {
  readonly place: string;
  readonly queued: QueuedEvent;
  /** Where the payload bucket keeps it, for one too large for an item. */
  readonly payloadKey?: string;
}

/** The store of parked events and of each group's {@link ParkState} (the DeadLetters table). */
export interface ParkStore {
  /** A group's state for the subscription, read strongly; undefined when it has no park. */
  readonly readState: (input: { readonly subscriptionId: string; readonly messageGroupId: string }) => Promise<ParkState | undefined>;
  /**
   * Parks events of one group (in place order, each after `state.lastParked`): marks the group (a
   * new park), notes the last place it is about to write (`parkingThrough`), writes them, then
   * confirms that place (`lastParked`). Repeated after a crash, it writes the same items again.
   * Returns the new state.
   */
  readonly park: (input: {
    readonly subscriptionId: string;
    readonly messageGroupId: string;
    readonly events: readonly [ParkedEvent, ...ParkedEvent[]];
    readonly state: ParkState | undefined;
    readonly parkedAt: string;
  }) => Promise<ParkState>;
  /**
   * Notes that the consumer settled the copies of parked events through `place` (never lowers it):
   * the state it leaves, or undefined when it raised nothing (a copy noted before, or no park).
   */
  readonly noteReturned: (input: { readonly subscriptionId: string; readonly messageGroupId: string; readonly place: string }) => Promise<ParkState | undefined>;
  /** Up to `limit` parked events of a group not yet sent back (still in the store), in place order, none past `through`. */
  readonly readParked: (input: { readonly subscriptionId: string; readonly messageGroupId: string; readonly through: string; readonly limit: number }) => Promise<readonly ParkedEvent[]>;
  /** Removes parked events sent back. */
  readonly removeParked: (input: { readonly subscriptionId: string; readonly messageGroupId: string; readonly events: readonly ParkedEvent[] }) => Promise<void>;
  /**
   * Ends a group's park whose every copy was settled: the state goes, only if it is still `state`
   * (no event parked since), then the park's marks, only if they still name it.
   * @returns whether it ended
   */
  readonly end: (input: { readonly subscriptionId: string; readonly messageGroupId: string; readonly state: ParkState }) => Promise<boolean>;
  /** Removes the marks of a park whose state is gone (a crash between the two), if they still name it. */
  readonly unmark: (input: { readonly subscriptionId: string; readonly messageGroupId: string; readonly parkId: string }) => Promise<void>;
}

/** How long a park's making may take, between its marks: a group's mark older than this whose subscription has none was abandoned. */
export const ABANDONED_MARK_SECONDS = 900;

/** The id of a new park: its time first, so that an abandoned mark can be told by its age (see {@link isAbandonedMark}). */
export function newParkId(parkedAt: string, unique: string): string {
  return `${parkedAt}/${unique}`;
}

/** Whether a park's mark was made more than {@link ABANDONED_MARK_SECONDS} ago (an id of another shape: yes). */
export function isAbandonedMark(parkId: string, now: Date): boolean {
  const madeAt = Date.parse(parkId.slice(0, parkId.indexOf('/')));
  return Number.isNaN(madeAt) || now.getTime() - madeAt > ABANDONED_MARK_SECONDS * 1000;
}

/** Parked events read and sent back at a time. */
export const PARK_PAGE_SIZE = 10;

/** Most parked events one step sends back: its answer stays small, and SQS gets them in steady chunks. */
export const MAX_UNPARKED_PER_STEP = 1000;

/** The queued event a parked one becomes when it is sent back: marked with its place, otherwise as it was. */
export function toUnparkedEvent(parked: ParkedEvent): QueuedEvent {
  return { ...parked.queued, parked: { place: parked.place } };
}

/**
 * The SQS deduplication id of a parked event sent back: the same for the same parked place, so that
 * a step repeated within 5 minutes is dropped by SQS (a later copy is settled as a duplicate).
 */
export function unparkDeduplicationId(subscriptionId: string, parked: ParkedEvent): string {
  return `unpark-${createHash('sha256').update(`${subscriptionId}\n${parked.queued.message_group_id}\n${parked.place}`).digest('hex')}`;
}

export interface UnparkPorts {
  readonly store: Pick<ParkStore, 'readState' | 'readParked' | 'removeParked' | 'end' | 'unmark'>;
  /** Sends one SendMessageBatch to the delivery queue. */
  readonly enqueue: SendBatch;
  /** Whether the step may go on (time left). */
  readonly hasTime: () => boolean;
  readonly now: () => Date;
}

export interface UnparkStep {
  /** Parked events sent back in this step. */
  readonly sent: number;
  /** Groups whose park ended in this step (every copy settled, nothing left). */
  readonly ended: number;
  /** Whether every group is sent back whole: nothing parked is left in the store. */
  readonly isSent: boolean;
}

/**
 * Ends a group's park when nothing of it is left in the store and every copy sent back was settled
 * (the consumer calls it when it settles the last copy, and each step of a resume). Whether it ended.
 */
export async function endIfSettled(subscriptionId: string, messageGroupId: string, store: Pick<ParkStore, 'readState' | 'readParked' | 'end'>): Promise<boolean> {
  const state = await store.readState({ subscriptionId, messageGroupId });
  if (state === undefined || isParkOpen(state)) return false;
  const left = await store.readParked({ subscriptionId, messageGroupId, through: state.lastParked, limit: 1 });
  return left.length === 0 && (await store.end({ subscriptionId, messageGroupId, state }));
}

/**
 * One step of a resume's sending back (called by resume, then by the lag job every minute until
 * done): for each of the subscription's parked groups, reads the parked events in place order and
 * sends them into their group with the ingest rule (`sendInKeyOrder`: once SQS refuses one, no
 * later one of its key is sent), then removes what SQS took. A group with nothing left and every
 * copy settled is ended. `marks` are the subscription's parked groups, each with its park's id.
 * Never while the subscription is paused: the caller checks.
 */
export async function stepUnpark(subscriptionId: string, marks: ReadonlyMap<string, string>, ports: UnparkPorts): Promise<UnparkStep> {
  let sent = 0;
  let ended = 0;
  let isSent = true;
  for (const [messageGroupId, parkId] of marks) {
    const state = await ports.store.readState({ subscriptionId, messageGroupId });
    if (state === undefined) {
      // A mark whose state is gone: its park ended and a crash came before the mark went, or a
      // park is being made (its marks come first). Only an old one is taken for the first.
      if (isAbandonedMark(parkId, ports.now())) await ports.store.unmark({ subscriptionId, messageGroupId, parkId });
      continue;
    }
    let isGroupSent = false;
    while (ports.hasTime() && sent < MAX_UNPARKED_PER_STEP) {
      // Never past the last place confirmed (see `ParkState.lastParked`).
      const parked = await ports.store.readParked({ subscriptionId, messageGroupId, through: state.lastParked, limit: Math.min(PARK_PAGE_SIZE, MAX_UNPARKED_PER_STEP - sent) });
      if (parked.length === 0) {
        isGroupSent = true;
        break;
      }
      const messages: OutgoingMessage[] = parked.map((event, index) => ({
        index,
        // One at a time, in place order, whatever the key: the consumer takes a copy's place as
        // settling every place before it, so none may overtake another (see `ParkState`).
        orderingKey: messageGroupId,
        messageGroupId: event.queued.message_group_id,
        deduplicationId: unparkDeduplicationId(subscriptionId, event),
        body: encodeQueuedEvent(toUnparkedEvent(event)),
      }));
      const { statuses } = await sendInKeyOrder(messages, ports.enqueue);
      const taken = parked.filter((_, index) => statuses.get(index) === SendStatus.sent);
      if (taken.length > 0) await ports.store.removeParked({ subscriptionId, messageGroupId, events: taken });
      sent += taken.length;
      // A refusal: what is left of its key waits for the next step, in order.
      if (taken.length < parked.length) break;
    }
    if (!isGroupSent) {
      isSent = false;
      continue;
    }
    if (await endIfSettled(subscriptionId, messageGroupId, ports.store)) ended += 1;
  }
  return { sent, ended, isSent };
}

/** A subscription as the lag job's step of parks needs it: paused or not, and its marks (group → park id). */
export interface MarkedSubscription {
  readonly isPaused: boolean;
  readonly marks: ReadonlyMap<string, string>;
}

export interface MarkedParksPorts extends UnparkPorts {
  /** The subscription, read strongly; undefined when it is gone. */
  readonly readSubscription: (subscriptionId: string) => Promise<MarkedSubscription | undefined>;
}

/**
 * The lag job's step of parks (every minute): for each subscription marked on an active group
 * (`GroupLag.parkedSubscriptions`), when it is not paused, one step of {@link stepUnpark} over its
 * own marks, while time is left. A group's mark that its subscription lacks was left by a park that
 * failed between its two marks, or by a subscription gone: removed once old (see
 * {@link isAbandonedMark}), since a park being made now has its group's mark first.
 */
export async function stepMarkedParks(active: readonly GroupLag[], ports: MarkedParksPorts): Promise<{ readonly subscriptions: number; readonly sent: number; readonly ended: number }> {
  const marked = new Map<string, { readonly messageGroupId: string; readonly parkId: string }[]>();
  for (const group of active) {
    for (const [subscriptionId, parkId] of Object.entries(group.parkedSubscriptions ?? {})) {
      marked.set(subscriptionId, [...(marked.get(subscriptionId) ?? []), { messageGroupId: group.messageGroupId, parkId }]);
    }
  }
  let stepped = 0;
  let sent = 0;
  let ended = 0;
  for (const [subscriptionId, groups] of marked) {
    if (!ports.hasTime()) break;
    const subscription = await ports.readSubscription(subscriptionId);
    // Sent back once resumed, never while paused.
    if (subscription?.isPaused === true) continue;
    const marks = subscription?.marks ?? new Map<string, string>();
    for (const { messageGroupId, parkId } of groups) {
      if (!marks.has(messageGroupId) && isAbandonedMark(parkId, ports.now())) await ports.store.unmark({ subscriptionId, messageGroupId, parkId });
    }
    if (marks.size === 0) continue;
    const step = await stepUnpark(subscriptionId, marks, ports);
    stepped += 1;
    sent += step.sent;
    ended += step.ended;
  }
  return { subscriptions: stepped, sent, ended };
}

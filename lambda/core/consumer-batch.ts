/**
 * One invocation of the consumer: a batch of up to 10 SQS records, possibly several groups and
 * several records of one group. Groups run concurrently; the records of a group strictly one after
 * another. What must happen to SQS afterwards is returned as a value.
 */
import { gatherBatch, startBatch, startRun, type BatchMember } from './batch-delivery.js';
import { isDeliveredBefore, isQueueCopy, messagePlaceOf, messagePositionOf, NOTHING_DELIVERED, NOTHING_SETTLED, OutcomeKind, readRecord, settledCopyOf, settledQueryOf, startRecord, waitingSince, type ConsumerRecord, type DeliveredLookup, type DeliveryOutcome, type DeliveryPorts, type DeliveryTarget, type SettledLookup } from './delivery.js';
import { HeadState, type GroupHead, type GroupProgress } from './lag.js';
import type { QueuedEvent } from './event.js';
import type { SubscriptionPause } from './subscription.js';
import { faultBackoffSeconds, type RetryPolicy } from './retry-policy.js';
import { decidePark, endIfSettled, holdSecondsFor, isDueToPark, isParkOpen, ParkDecision, parkedThrough, type ParkedEvent, type ParkState } from './park.js';

/** A visibility change to make before the invocation returns. */
export interface VisibilityChange {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly timeoutSeconds: number;
}

/** What the handler does with SQS once the batch is processed. */
export interface BatchPlan {
  /** Reported in `batchItemFailures`: SQS keeps them; the others are deleted by Lambda. */
  readonly failedMessageIds: readonly string[];
  readonly visibilityChanges: readonly VisibilityChange[];
  /** One entry per record that was processed, for logs and tests. */
  readonly outcomes: ReadonlyMap<string, DeliveryOutcome>;
  /**
   * Records not started for lack of time, each group's from the first one not started on: they are
   * among the failures, with visibility 0.
   */
  readonly unstartedMessageIds: readonly string[];
  /** What the batch did to each group, for its lag. */
  readonly groups: readonly GroupProgress[];
}

/** Splits a batch by message group, each group in the order SQS gave it, groups in order of first appearance. */
export function groupByMessageGroup(records: readonly ConsumerRecord[]): ConsumerRecord[][] {
  const groups = new Map<string, ConsumerRecord[]>();
  for (const record of records) {
    const group = groups.get(record.messageGroupId);
    if (group === undefined) groups.set(record.messageGroupId, [record]);
    else group.push(record);
  }
  return [...groups.values()];
}

/**
 * Which groups SQS most likely handed out whole in this batch, as a hint for the lag's write (see
 * `GroupProgress.isLikelyDrained`): SQS returns as many messages of one group as it can, so a group
 * with fewer than `batchSize` had no more visible, unless the batch was full and the group of its
 * last record was cut short by the limit.
 */
export function likelyDrainedGroups(records: readonly ConsumerRecord[], batchSize: number): (messageGroupId: string) => boolean {
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.messageGroupId, (counts.get(record.messageGroupId) ?? 0) + 1);
  const cutShort = records.length >= batchSize ? records.at(-1)?.messageGroupId : undefined;
  return (messageGroupId) => messageGroupId !== cutShort && (counts.get(messageGroupId) ?? batchSize) < batchSize;
}

/**
 * The successor-visibility rule. When the head of a group must wait, it and every later record of
 * its group are reported failed (otherwise Lambda would delete the successors, or a successor
 * would overtake its head). The head gets its backoff as visibility timeout; the successors get
 * 0, because SQS keeps a group locked while any of its messages is in flight, and successors left
 * invisible for the queue's timeout would hold the head back long after its backoff.
 */
export function planGroupRetry(group: readonly ConsumerRecord[], headIndex: number, delaySeconds: number): {
  failedMessageIds: string[];
  visibilityChanges: VisibilityChange[];
} {
  const waiting = group.slice(headIndex);
  return {
    failedMessageIds: waiting.map((record) => record.messageId),
    visibilityChanges: waiting.map((record, position) => ({
      messageId: record.messageId,
      receiptHandle: record.receiptHandle,
      timeoutSeconds: position === 0 ? delaySeconds : 0,
    })),
  };
}

/** Records of one key that go out together: one batch, or one run (see `processGroup`). */
interface Together {
  readonly members: BatchMember[];
  readonly target: DeliveryTarget;
  /** A batch (one POST) for a subscription with `batch_size` above 1; a run (one POST each) otherwise. */
  readonly isBatch: boolean;
}

/** Called when processing a record throws: a fault, not an outcome. */
export type FaultListener = (error: unknown, record: ConsumerRecord) => void;

/**
 * The time the invocation has left, asked before each record. Lambda stops a function at its
 * timeout, mid-attempt if need be: the receiver may get the event with nothing recorded, and the
 * records the batch still held stay invisible for the queue's visibility timeout (6 × the
 * consumer's) instead of coming back at once.
 */
export interface TimeBudget {
  /** Whether the invocation still has `ms` milliseconds before its timeout. */
  readonly hasTimeFor: (ms: number) => boolean;
  /** The longest one record can take: an attempt's timeout, the calls around it and the batch's closing calls. */
  readonly recordMs: number;
}

interface GroupPlan {
  readonly failedMessageIds: string[];
  readonly visibilityChanges: VisibilityChange[];
  readonly unstartedMessageIds: string[];
  readonly progress: GroupProgress;
}

/** Sums up a group's outcomes in this batch for its lag. */
export function summarizeGroup(messageGroupId: string, outcomes: readonly DeliveryOutcome[], head: GroupHead): GroupProgress {
  let settled = 0;
  let lastSettledAcceptedAt: string | undefined;
  let hasDelivered = false;
  for (const outcome of outcomes) {
    if (outcome.kind === OutcomeKind.delivered) hasDelivered = true;
    // A duplicate that recorded a delivery late (isCounted set) leaves the depth as that delivery would have.
    const isSettling = outcome.kind === OutcomeKind.delivered || outcome.kind === OutcomeKind.deadLettered || (outcome.kind === OutcomeKind.duplicate && outcome.isCounted !== undefined);
    if (!isSettling) continue;
    lastSettledAcceptedAt = outcome.acceptedAt ?? lastSettledAcceptedAt;
    // Only what ingest counted is uncounted; an unreadable record was never an accepted event.
    if (!outcome.isCounted) continue;
    settled += 1;
  }
  return { messageGroupId, settled, lastSettledAcceptedAt, head, ...(hasDelivered ? { hasDelivered } : {}) };
}

/** The ordering key of a record, or undefined for one that is no queued event. */
function orderingKeyOf(record: ConsumerRecord): string | undefined {
  const read = readRecord(record);
  return 'reason' in read ? undefined : read.queued.ordering_key;
}

/** The event id of a record, or undefined for one that is no queued event. */
function eventIdOf(record: ConsumerRecord): string | undefined {
  const read = readRecord(record);
  return 'reason' in read ? undefined : read.queued.event.event_id;
}

/** What a record settles for the rest of its run ({@link settledCopyOf}): none for one that is no queued event. */
function settledCopiesOf(record: ConsumerRecord, kind: DeliveryOutcome['kind']): string[] {
  const read = readRecord(record);
  if ('reason' in read) return [];
  const copy = settledCopyOf(read.queued);
  // A replay's copy delivered settles every other copy of its event but another replay's, as its record does.
  return copy !== read.queued.event.event_id && kind === OutcomeKind.delivered ? [copy, read.queued.event.event_id] : [copy];
}

async function processGroup(
  group: readonly ConsumerRecord[],
  ports: DeliveryPorts,
  policy: RetryPolicy,
  onFault: FaultListener,
  budget: TimeBudget,
  outcomes: Map<string, DeliveryOutcome>,
  { wasSettled, wasDelivered }: BatchReads,
): Promise<GroupPlan> {
  const messageGroupId = group[0]?.messageGroupId ?? '';
  const seen: DeliveryOutcome[] = [];
  /** Per subscription, the greatest place of a parked event whose copy this batch settled (see `core/park.ts`). */
  const returnedInBatch = new Map<string, string>();
  /** Events delivered or dead-lettered earlier in this run of the group: any later copy is a duplicate. */
  const settled = new Set<string>();
  /** Events found settled before (duplicates): only their numbers are known to be on their records. */
  const numbered = new Set<string>();
  /** The last delivery, still being recorded. */
  let pending: { readonly index: number; readonly record: ConsumerRecord; readonly recording: Promise<DeliveryOutcome> } | undefined;

  const keep = (record: ConsumerRecord, outcome: DeliveryOutcome): void => {
    outcomes.set(record.messageId, outcome);
    seen.push(outcome);
    const place = returnedPlaceOf(record, outcome);
    if (place !== undefined) {
      const [subscriptionId, returned] = place;
      if (returned > (returnedInBatch.get(subscriptionId) ?? '')) returnedInBatch.set(subscriptionId, returned);
    }
    const eventId = eventIdOf(record);
    if (eventId === undefined) return;
    // A duplicate settles no other copy: a redriven copy is settled only by what came after its redrive.
    if (outcome.kind === OutcomeKind.duplicate && outcome.isCounted === undefined) numbered.add(eventId);
    else if (outcome.kind !== OutcomeKind.retryLater && outcome.kind !== OutcomeKind.paused && outcome.kind !== OutcomeKind.parked) {
      for (const copy of settledCopiesOf(record, outcome.kind)) settled.add(copy);
      numbered.add(eventId);
    }
  };
  /**
   * A fault at record `index` (a dependency down, a crash before the outcome was recorded): the
   * record waits, backing off by how often SQS has handed it out, so that a passing fault costs
   * seconds and a lasting one reaches SQS's backstop redrive only after days. The successors are
   * received with it every time, so the highest receive count among them sets the pace: the first
   * of them to pass maxReceiveCount would be moved. Other groups are not held back.
   */
  const faultAt = (index: number, error: unknown): GroupPlan => {
    const record = group[index];
    if (record !== undefined) onFault(error, record);
    const receiveCount = Math.max(...group.slice(index).map((waiting) => waiting.receiveCount));
    const delaySeconds = faultBackoffSeconds(receiveCount, policy, ports.random);
    return { ...planGroupRetry(group, index, delaySeconds), unstartedMessageIds: [], progress: summarizeGroup(messageGroupId, seen, { state: HeadState.unknown }) };
  };
  /** Waits for the last delivery to be recorded. If it cannot be, its record is sent back with its successors (a fault). */
  const finishPending = async (): Promise<GroupPlan | undefined> => {
    if (pending === undefined) return undefined;
    const { index, record, recording } = pending;
    pending = undefined;
    try {
      keep(record, await recording);
      return undefined;
    } catch (error) {
      return faultAt(index, error);
    }
  };

  /**
   * The events that start at `index` and go out together: a batch for a subscription that takes
   * batches (docs/api.md#batches), one POST; a run for one that does not, one POST each with no state
   * round trip between them (see `startRun`). None when fewer than two records can go together.
   */
  const togetherAt = async (index: number): Promise<Together | undefined> => {
    const record = group[index];
    const read = record === undefined ? undefined : readRecord(record);
    if (read === undefined || 'reason' in read) return undefined;
    const target = await ports.findTarget(read.queued.event.subscription_id);
    // A subscription with a park in this group goes one record at a time: each is judged alone (`parkAt`).
    if (target === undefined || target.parkedGroups?.has(messageGroupId) === true || parkStates.has(read.queued.event.subscription_id)) return undefined;
    const settling = pending === undefined ? undefined : eventIdOf(pending.record);
    // A copy goes alone too: `startRecord` skips it.
    const isSkipped = ({ record: member, queued }: BatchMember): boolean =>
      settled.has(settledCopyOf(queued)) ||
      queued.event.event_id === settling ||
      isQueueCopy(member, queued, wasSettled) ||
      isDeliveredBefore(member, queued, wasDelivered) ||
      wasSettled(settledQueryOf(queued));
    const isBatch = target.batchSize > 1;
    const members = gatherBatch(group, index, isBatch ? target.batchSize : group.length - index, isSkipped);
    return members.length < 2 ? undefined : { members, target, isBatch };
  };
  /** Where the group goes on after a batch or a run: the next record, or the plan that ends the group's run here. */
  const sendTogether = async (index: number, together: Together): Promise<{ readonly next: number } | { readonly plan: GroupPlan } | undefined> => {
    // Both begin the key's next head: the delivery still being recorded is awaited first.
    const failed = await finishPending();
    if (failed !== undefined) return { plan: failed };
    const context = { settledEarlier: settled, numberedEarlier: numbered, wasSettled, wasDelivered };
    let result: Awaited<ReturnType<typeof startBatch>> | Awaited<ReturnType<typeof startRun>>;
    try {
      result = together.isBatch
        ? await startBatch(together.members, together.target, ports, policy, context)
        : await startRun(together.members, together.target, ports, policy, context, () => budget.hasTimeFor(budget.recordMs));
    } catch (error) {
      return { plan: faultAt(index, error) };
    }
    if (result === undefined) return undefined;
    if ('kind' in result && result.kind === 'failed') {
      const { outcome } = result;
      const first = together.members[0];
      if (first !== undefined) keep(first.record, outcome);
      return { plan: waitAt(index, outcome) };
    }
    // Every recorded delivery counts, even past one whose recording failed: that one and all after
    // it go back (its successors must not be deleted before it), and come back as duplicates.
    let firstFault: { readonly offset: number; readonly error: unknown } | undefined;
    for (const [offset, entry] of result.settled.entries()) {
      const member = together.members[offset];
      if (member === undefined) continue;
      if ('error' in entry) firstFault ??= { offset, error: entry.error };
      else keep(member.record, entry.outcome);
    }
    if (firstFault !== undefined) return { plan: faultAt(index + firstFault.offset, firstFault.error) };
    const waitingAt = 'waitingAt' in result ? result.waitingAt : undefined;
    const waiting = waitingAt === undefined ? undefined : result.settled[waitingAt];
    if (waitingAt !== undefined && waiting !== undefined && 'outcome' in waiting && waiting.outcome.kind === OutcomeKind.retryLater) {
      return { plan: waitAt(index + waitingAt, waiting.outcome) };
    }
    if (waitingAt !== undefined && waiting !== undefined && 'outcome' in waiting && waiting.outcome.kind === OutcomeKind.paused) {
      return { plan: heldAt(index + waitingAt, waiting.outcome.subscriptionId, waiting.outcome.pause, waiting.outcome.acceptedAt) };
    }
    if (result.settled.length === 0) {
      // Nothing sent (no time left): the run's records go back untouched, visible at once.
      return { plan: { ...planGroupRetry(group, index, 0), unstartedMessageIds: group.slice(index).map((waiting) => waiting.messageId), progress: summarizeGroup(messageGroupId, seen, { state: HeadState.unknown }) } };
    }
    return { next: index + result.settled.length };
  };
  /** Whether a record's event was settled before, as `startRecord` would find it: a duplicate. */
  const isSettledAlready = (record: ConsumerRecord, queued: QueuedEvent): boolean =>
    settled.has(settledCopyOf(queued)) || isQueueCopy(record, queued, wasSettled) || isDeliveredBefore(record, queued, wasDelivered) || wasSettled(settledQueryOf(queued));
  /** Each subscription's park state in this group, once read (undefined: none), kept up to date as records are parked. */
  const parkStates = new Map<string, ParkState | undefined>();
  const parkStateOf = async (subscriptionId: string, isMarked: boolean): Promise<ParkState | undefined> => {
    if (!parkStates.has(subscriptionId)) {
      // The mark is made before the state and removed after it: no mark, no state.
      parkStates.set(subscriptionId, isMarked && ports.parks !== undefined ? await ports.parks.readState({ subscriptionId, messageGroupId }) : undefined);
    }
    const state = parkStates.get(subscriptionId);
    // Copies settled earlier in this batch count: they are noted when the group is done.
    const returned = returnedInBatch.get(subscriptionId);
    return state === undefined || returned === undefined || returned <= state.returnedThrough ? state : { ...state, returnedThrough: returned };
  };
  /**
   * What to do with the live record at `index` of a subscription that parks (see `core/park.ts`):
   * undefined to go on with it as with any record; otherwise where the group goes on after it and
   * the records after it that are parked (or dropped) with it, in one write.
   */
  const parkAt = async (index: number): Promise<{ readonly next: number } | undefined> => {
    const parks = ports.parks;
    if (parks === undefined) return undefined;
    const judged: { readonly record: ConsumerRecord; readonly decision: ParkDecision; readonly parked?: ParkedEvent }[] = [];
    let subscriptionId: string | undefined;
    let state: ParkState | undefined;
    for (const record of group.slice(index)) {
      const read = readRecord(record);
      const { message } = messagePlaceOf(record);
      // A copy sent back is delivered (or held): never parked again. No place, no park: held instead.
      if ('reason' in read || read.queued.parked !== undefined || message === undefined) break;
      const { queued } = read;
      if (subscriptionId !== undefined && queued.event.subscription_id !== subscriptionId) break;
      // An event settled already (delivered in a run whose later member failed, say, and handed out
      // again with it) is a duplicate, never parked: its copy would be delivered again, renumbered.
      if (isSettledAlready(record, queued)) break;
      const target = await ports.findTarget(queued.event.subscription_id);
      if (target === undefined) break;
      const isMarked = target.parkedGroups?.has(messageGroupId) === true;
      const canStart = target.pause !== undefined && policy.parkAfterSeconds !== undefined;
      if (!isMarked && !canStart && !parkStates.has(queued.event.subscription_id)) break;
      if (subscriptionId === undefined) {
        subscriptionId = queued.event.subscription_id;
        state = await parkStateOf(subscriptionId, isMarked);
      }
      const place = messagePositionOf(message);
      const isDue = target.pause !== undefined && isDueToPark(waitingSince(queued), ports.now(), policy.parkAfterSeconds);
      const decision = decidePark(state, place, isDue);
      if (decision === ParkDecision.deliver) break;
      const parked = decision === ParkDecision.park ? { place, queued } : undefined;
      judged.push({ record, decision, ...(parked === undefined ? {} : { parked }) });
      // The records after it are judged as if it were parked already: behind it, in the same write.
      if (parked !== undefined) state = parkedThrough(state, place);
    }
    if (subscriptionId === undefined || judged.length === 0) return undefined;
    const toPark = judged.flatMap(({ parked }) => (parked === undefined ? [] : [parked]));
    const [first, ...rest] = toPark;
    if (first !== undefined) {
      const before = parkStates.get(subscriptionId);
      parkStates.set(subscriptionId, await parks.park({ subscriptionId, messageGroupId, events: [first, ...rest], state: before, parkedAt: ports.now().toISOString() }));
    }
    for (const { record } of judged) keep(record, { kind: OutcomeKind.parked });
    return { next: index + judged.length };
  };
  /**
   * The plan when the record at `index` belongs to a paused subscription, or undefined: the group
   * is held there (see `processBatch`). Nothing of the record is begun or attempted, so no attempt
   * is counted; it and its successors go back, it invisible for the longest SQS allows.
   */
  const holdAt = async (index: number): Promise<GroupPlan | undefined> => {
    const record = group[index];
    const read = record === undefined ? undefined : readRecord(record);
    if (record === undefined || read === undefined || 'reason' in read) return undefined;
    const { subscription_id: subscriptionId } = read.queued.event;
    const pause = (await ports.findTarget(subscriptionId))?.pause;
    if (pause === undefined) return undefined;
    // A delivery of another subscription's key still being recorded (partition mode) lands first.
    const failed = await finishPending();
    if (failed !== undefined) return failed;
    return heldAt(index, subscriptionId, pause, waitingSince(read.queued));
  };
  /**
   * The plan that holds the group at `index` for a paused subscription: the record and its
   * successors go back, it invisible for the longest SQS allows, its handle recorded for resume.
   */
  const heldAt = (index: number, subscriptionId: string, pause: SubscriptionPause, acceptedAt: string): GroupPlan => {
    const record = group[index];
    const now = ports.now();
    // Under PAUSE_EVACUATION=store, no longer than until the head is due to be parked; a parked
    // event's copy is never parked again (see `parkAt`), so it is held as long as SQS allows.
    const holdSeconds = record !== undefined && isCopy(record) ? policy.visibilityCeilingSeconds : holdSecondsFor(acceptedAt, now, policy.visibilityCeilingSeconds, policy.parkAfterSeconds);
    const until = new Date(now.getTime() + holdSeconds * 1000).toISOString();
    const head: GroupHead = {
      state: HeadState.held,
      acceptedAt,
      hold: { subscriptionId, receiptHandle: record?.receiptHandle ?? '', pausedAt: pause.pausedAt, reason: pause.reason, heldAt: now.toISOString(), until },
    };
    return { ...planGroupRetry(group, index, holdSeconds), unstartedMessageIds: [], progress: summarizeGroup(messageGroupId, seen, head) };
  };
  /** The plan when the record at `index` must wait: it and its successors go back, it after its delay. */
  const waitAt = (index: number, outcome: Extract<DeliveryOutcome, { kind: typeof OutcomeKind.retryLater }>): GroupPlan => {
    const head: GroupHead = { state: HeadState.waiting, eventId: outcome.eventId, orderingKey: outcome.orderingKey, attempts: outcome.attempts, lastError: outcome.reason, acceptedAt: outcome.acceptedAt };
    return { ...planGroupRetry(group, index, outcome.delaySeconds), unstartedMessageIds: [], progress: summarizeGroup(messageGroupId, seen, head) };
  };

  /**
   * The numbers of the later records of the same key in this group (not redriven copies) that were
   * settled when the batch started, while this one was not: see `RecordContext.laterSettledNumbers`.
   */
  let queuedOfGroup: (QueuedEvent | undefined)[] | undefined;
  const laterSettledNumbers = (index: number): number[] => {
    queuedOfGroup ??= group.map((record) => {
      const read = readRecord(record);
      return 'reason' in read ? undefined : read.queued;
    });
    const queued = queuedOfGroup[index];
    if (queued === undefined || queued.redrive !== undefined) return [];
    return queuedOfGroup.slice(index + 1).flatMap((later) => {
      if (later === undefined || later.redrive !== undefined || later.ordering_key !== queued.ordering_key || later.event.event_id === queued.event.event_id) return [];
      if (!wasSettled({ eventId: later.event.event_id, redrivenAt: undefined })) return [];
      const sequence = wasSettled.sequenceOf(later.event.event_id);
      return sequence === undefined ? [] : [sequence];
    });
  };

  let resumeAt = 0;
  for (const [index, record] of group.entries()) {
    if (index < resumeAt) continue;
    if (!budget.hasTimeFor(budget.recordMs)) {
      // Too little time to finish this record: it and its successors (which must not overtake it)
      // go back untouched and visible at once, for the next invocation.
      const failed = await finishPending();
      if (failed !== undefined) return failed;
      return {
        ...planGroupRetry(group, index, 0),
        unstartedMessageIds: group.slice(index).map((waiting) => waiting.messageId),
        progress: summarizeGroup(messageGroupId, seen, { state: HeadState.unknown }),
      };
    }
    // A copy still being recorded is settled first: the records after it are judged by it.
    if (pending !== undefined && isCopy(pending.record)) {
      const failed = await finishPending();
      if (failed !== undefined) return failed;
    }
    let together: Together | undefined;
    try {
      // Parked, then the delivery still being recorded awaited: if its recording fails, it and
      // everything after it come back, and the parked ones are dropped then (parked already).
      const parking = await parkAt(index);
      if (parking !== undefined) {
        const failed = await finishPending();
        if (failed !== undefined) return failed;
        resumeAt = parking.next;
        continue;
      }
      const held = await holdAt(index);
      if (held !== undefined) return held;
      together = await togetherAt(index);
    } catch (error) {
      const failed = await finishPending();
      return failed ?? faultAt(index, error);
    }
    if (together !== undefined) {
      const after = await sendTogether(index, together);
      if (after !== undefined && 'plan' in after) return after.plan;
      if (after !== undefined) {
        resumeAt = after.next;
        continue;
      }
      // The batch or run could not begin (its first event was begun before): this record goes alone.
    }
    // The last delivery is recorded while the next record begins and is sent, and before the one
    // after: the next begin moves the key on, keeping the delivered event as the key's previous
    // head with its number, and a head replaced twice must have its number on its record (the
    // backstop's import reads it there once the key no longer holds it). A crash before the
    // recording lands leaves the message to come back, older than the key's head: the key has
    // moved past it, and its delivery is recorded then (`superseded`), with the number the key
    // keeps. Its copy counts as settled for this record: a copy of it is not attempted again.
    const recordedBefore = pending;
    pending = undefined;
    const settledOrSettling = recordedBefore === undefined ? settled : new Set([...settled, ...settledCopiesOf(recordedBefore.record, OutcomeKind.delivered)]);
    let step: Awaited<ReturnType<typeof startRecord>> | undefined;
    let startError: { readonly error: unknown } | undefined;
    try {
      step = await startRecord(record, ports, policy, {
        settledEarlier: settledOrSettling,
        numberedEarlier: numbered,
        wasSettled,
        wasDelivered,
        laterSettledNumbers: laterSettledNumbers(index),
        // Only a delivery of the same key ends its streak: in partition mode a group holds many keys.
        isAfterDelivery: recordedBefore !== undefined && orderingKeyOf(recordedBefore.record) === orderingKeyOf(record),
      });
      // Awaited below or by the next record; marked handled now, since it may fail meanwhile.
      if ('recording' in step) step.recording.catch(() => undefined);
    } catch (error) {
      startError = { error };
    }
    // The previous delivery's recording, which ran meanwhile. If it failed, that record and all
    // after it go back, this one included; what this one did is counted all the same (a delivery
    // recorded, a dead letter written: its copy is a duplicate when it comes back, which settles
    // nothing in the lag).
    let failedBefore: { readonly index: number; readonly error: unknown } | undefined;
    if (recordedBefore !== undefined) {
      try {
        keep(recordedBefore.record, await recordedBefore.recording);
      } catch (error) {
        failedBefore = { index: recordedBefore.index, error };
      }
    }
    if (failedBefore !== undefined) {
      if (step !== undefined && 'outcome' in step) keep(record, step.outcome);
      if (step !== undefined && 'recording' in step) {
        const recorded = await step.recording.then((outcome) => outcome, () => undefined);
        if (recorded !== undefined) keep(record, recorded);
      }
      return faultAt(failedBefore.index, failedBefore.error);
    }
    if (startError !== undefined || step === undefined) return faultAt(index, startError?.error);
    if ('recording' in step) {
      // Awaited while the next record begins, or at the end of the run.
      pending = { index, record, recording: step.recording };
      continue;
    }
    const { outcome } = step;
    keep(record, outcome);
    if (outcome.kind === OutcomeKind.retryLater) {
      const head: GroupHead = {
        state: HeadState.waiting,
        eventId: outcome.eventId,
        orderingKey: outcome.orderingKey,
        attempts: outcome.attempts,
        lastError: outcome.reason,
        acceptedAt: outcome.acceptedAt,
      };
      return { ...planGroupRetry(group, index, outcome.delaySeconds), unstartedMessageIds: [], progress: summarizeGroup(messageGroupId, seen, head) };
    }
    if (outcome.kind === OutcomeKind.paused) return heldAt(index, outcome.subscriptionId, outcome.pause, outcome.acceptedAt);
  }
  const failed = await finishPending();
  if (failed !== undefined) return failed;
  return { failedMessageIds: [], visibilityChanges: [], unstartedMessageIds: [], progress: summarizeGroup(messageGroupId, seen, { state: HeadState.clear }) };
}

/**
 * After a group's records: notes, per subscription, the greatest place of a parked event whose copy
 * sent back this batch settled (see `core/park.ts`), and ends the park when that copy was its last.
 * Before the batch answers: a note that fails sends the copies back with every record after them (a
 * fault); they come back settled, and are noted then. An end that fails is left to the next step
 * of the resume. Then events parked by this batch for a subscription that is not paused (they were
 * ahead of copies still coming back) are sent back at once (`sendParkedBack`); a failure there is
 * left to the lag job's next minute.
 */
async function noteCopiesReturned(group: readonly ConsumerRecord[], plan: GroupPlan, outcomes: ReadonlyMap<string, DeliveryOutcome>, ports: DeliveryPorts, policy: RetryPolicy, onFault: FaultListener): Promise<GroupPlan> {
  const parks = ports.parks;
  if (parks === undefined) return plan;
  const messageGroupId = group[0]?.messageGroupId ?? '';
  const failed = new Set(plan.failedMessageIds);
  const returned = new Map<string, { readonly place: string; readonly index: number }>();
  for (const [index, record] of group.entries()) {
    if (failed.has(record.messageId)) break;
    const outcome = outcomes.get(record.messageId);
    const settles = outcome === undefined ? undefined : returnedPlaceOf(record, outcome);
    if (settles === undefined) continue;
    const [subscriptionId, place] = settles;
    const known = returned.get(subscriptionId);
    if (known === undefined || place > known.place) returned.set(subscriptionId, { place, index: known?.index ?? index });
  }
  // Parked in this batch while its subscription is not paused (a resume's backlog still coming
  // back): sent back at once, behind what is queued, rather than at the lag job's next minute.
  const parkedLive = new Set<string>();
  for (const record of group) {
    const read = readRecord(record);
    if (outcomes.get(record.messageId)?.kind !== OutcomeKind.parked || !('queued' in read)) continue;
    const target = await ports.findTarget(read.queued.event.subscription_id).catch(() => undefined);
    if (target !== undefined && target.pause === undefined) parkedLive.add(read.queued.event.subscription_id);
  }
  const sendBack = async (): Promise<void> => {
    await Promise.all([...parkedLive].map((subscriptionId) => ports.sendParkedBack?.(subscriptionId, messageGroupId).catch(() => undefined)));
  };
  if (returned.size === 0) {
    await sendBack();
    return plan;
  }
  const closed: string[] = [];
  try {
    for (const [subscriptionId, { place }] of returned) {
      const after = await parks.noteReturned({ subscriptionId, messageGroupId, place });
      if (after !== undefined && !isParkOpen(after)) closed.push(subscriptionId);
    }
  } catch (error) {
    const from = Math.min(...[...returned.values()].map(({ index }) => index));
    const record = group[from];
    if (record !== undefined) onFault(error, record);
    const receiveCount = Math.max(...group.slice(from).map((waiting) => waiting.receiveCount));
    return { ...planGroupRetry(group, from, faultBackoffSeconds(receiveCount, policy, ports.random)), unstartedMessageIds: [], progress: { ...plan.progress, head: { state: HeadState.unknown } } };
  }
  await Promise.all(closed.map((subscriptionId) => endIfSettled(subscriptionId, messageGroupId, parks).catch(() => false)));
  await sendBack();
  return plan;
}

/** Whether a record is a parked event's copy sent back (`queued.parked`). */
function isCopy(record: ConsumerRecord): boolean {
  const read = readRecord(record);
  return 'queued' in read && read.queued.parked !== undefined;
}

/** The subscription and the parked place a record's outcome settles: a copy delivered, dead-lettered or found settled before. */
function returnedPlaceOf(record: ConsumerRecord, outcome: DeliveryOutcome): readonly [string, string] | undefined {
  const read = readRecord(record);
  if (!('queued' in read) || read.queued.parked === undefined) return undefined;
  if (outcome.kind !== OutcomeKind.delivered && outcome.kind !== OutcomeKind.deadLettered && outcome.kind !== OutcomeKind.duplicate) return undefined;
  return [read.queued.event.subscription_id, read.queued.parked.place];
}

/** A group's plan when a fault stops it before its first record. */
function faultPlanOf(group: readonly ConsumerRecord[], error: unknown, ports: DeliveryPorts, policy: RetryPolicy, onFault: FaultListener): GroupPlan {
  const first = group[0];
  if (first !== undefined) onFault(error, first);
  const receiveCount = Math.max(...group.map((waiting) => waiting.receiveCount));
  return {
    ...planGroupRetry(group, 0, faultBackoffSeconds(receiveCount, policy, ports.random)),
    unstartedMessageIds: [],
    progress: summarizeGroup(first?.messageGroupId ?? '', [], { state: HeadState.unknown }),
  };
}

/** What a batch reads before it begins any record: its events' records and its keys' recorded deliveries, at once. */
interface BatchReads {
  /** Which of the batch's events were settled before it started. */
  readonly wasSettled: SettledLookup;
  /** How far its keys' deliveries recorded on their items reached. */
  readonly wasDelivered: DeliveredLookup;
}

/**
 * The batch's {@link BatchReads}: one read of the events' records and, side by side, one of the
 * items of the keys whose messages SQS handed out before. A message received for the first time
 * was never taken (`isDeliveredBefore` asks about messages received again), so a batch of first
 * receives, nearly every batch, reads no key's recorded deliveries.
 */
async function readBatchState(records: readonly ConsumerRecord[], ports: DeliveryPorts): Promise<BatchReads> {
  const read = records.flatMap((record) => {
    const answer = readRecord(record);
    return 'reason' in answer ? [] : [{ record, queued: answer.queued }];
  });
  if (read.length === 0) return { wasSettled: NOTHING_SETTLED, wasDelivered: NOTHING_DELIVERED };
  const receivedBefore = new Set(read.filter(({ record, queued }) => record.receiveCount > 1 && queued.redrive === undefined).map(({ queued }) => queued.ordering_key));
  const [wasSettled, wasDelivered] = await Promise.all([
    ports.store.findSettled(read.map(({ queued }) => settledQueryOf(queued))),
    receivedBefore.size === 0 ? NOTHING_DELIVERED : ports.store.findDelivered([...receivedBefore]),
  ]);
  return { wasSettled, wasDelivered };
}

/**
 * Processes a batch and plans what SQS must be told. A record is started only while the
 * invocation has `budget.recordMs` left; the rest of its group goes back with visibility 0.
 *
 * A record of a paused subscription holds its group: nothing of it is begun or attempted, and it
 * goes back with its successors, invisible for the longest SQS allows (`HeadState.held`, recorded
 * with the head's receipt handle for the resume to let it go at once). A batch reads each
 * subscription once, at its start: one already under way when a pause is answered delivers the
 * records it holds (at most one receive of each group), nothing after.
 */
export async function processBatch(
  records: readonly ConsumerRecord[],
  ports: DeliveryPorts,
  policy: RetryPolicy,
  onFault: FaultListener,
  budget: TimeBudget,
): Promise<BatchPlan> {
  const outcomes = new Map<string, DeliveryOutcome>();
  const groups = groupByMessageGroup(records);
  // Each subscription is read once, while the batch's settled states are: whether it takes
  // batches decides how its group starts, and must not cost a round trip of its own. The read is
  // strongly consistent (the port's), so that a batch that starts after a pause was answered sees it.
  const targets = new Map<string, ReturnType<DeliveryPorts['findTarget']>>();
  const findTarget: DeliveryPorts['findTarget'] = (subscriptionId) => {
    const target = targets.get(subscriptionId) ?? ports.findTarget(subscriptionId);
    targets.set(subscriptionId, target);
    return target;
  };
  for (const record of records) {
    const read = readRecord(record);
    // Awaited where it is used; a failed read is a fault there.
    if (!('reason' in read)) findTarget(read.queued.event.subscription_id).catch(() => undefined);
  }
  const portsReading = { ...ports, findTarget };
  let reads: BatchReads;
  try {
    reads = await readBatchState(records, portsReading);
  } catch (error) {
    // Nothing was begun: every group waits, as after a fault on its first record.
    const plans = groups.map((group) => faultPlanOf(group, error, portsReading, policy, onFault));
    return {
      failedMessageIds: plans.flatMap((plan) => plan.failedMessageIds),
      visibilityChanges: plans.flatMap((plan) => plan.visibilityChanges),
      outcomes,
      unstartedMessageIds: [],
      groups: plans.map((plan) => plan.progress),
    };
  }
  const plans = await Promise.all(
    groups.map(async (group) => noteCopiesReturned(group, await processGroup(group, portsReading, policy, onFault, budget, outcomes, reads), outcomes, portsReading, policy, onFault)),
  );
  return {
    failedMessageIds: plans.flatMap((plan) => plan.failedMessageIds),
    visibilityChanges: plans.flatMap((plan) => plan.visibilityChanges),
    outcomes,
    unstartedMessageIds: plans.flatMap((plan) => plan.unstartedMessageIds),
    groups: plans.map((plan) => plan.progress),
  };
}

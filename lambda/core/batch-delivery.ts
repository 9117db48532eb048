/**
 * Ordered batches (docs/api.md#batches): consecutive events of one ordering key, from what one receive
 * holds, numbered together and sent in one POST. A batch is delivered whole or not at all; after
 * one fails (or its invocation crashes), its events go one at a time through `startRecord`, each
 * with its own attempts, so a poison event never takes its batch-mates to the dead letters.
 */
import {
  AttemptTicketKind,
  describeAttempt,
  giveUpOrPause,
  previousDeliveredBefore,
  isRecordedMessage,
  isSuccess,
  NOTHING_SETTLED,
  OutcomeKind,
  readRecord,
  messagePlaceOf,
  queuePositionOf,
  recordPreviousNumber,
  noteFailure,
  recordRecovery,
  roundAttempts,
  waitingSince,
  AttemptResultKind,
  type ConsumerRecord,
  type DeliveryOutcome,
  type DeliveryPorts,
  type DeliveryTarget,
  type RecordContext,
  type SettledLookup,
  type BatchTicket,
  isMessageOfItsOwn,
} from './delivery.js';
import type { QueuedEvent } from './event.js';
import { attemptLimit, decideAfterFailure, delayAfterFailedBatch, FailureDecisionKind, parseRetryAfter, type RetryPolicy } from './retry-policy.js';
import { signingSecrets } from './secret.js';
import { batchBodyBytes, MAX_BATCH_BODY_BYTES, signBatch, signWebhook, type BatchItem } from './webhook.js';

/** A record that may go in a batch, read. */
export interface BatchMember {
  readonly record: ConsumerRecord;
  readonly queued: QueuedEvent;
}

/**
 * How many of a run's deliveries the key records in one write, while the run goes on: a
 * crash before that write sends them again (with their numbers), so fewer means fewer sent twice
 * after a crash, more fewer writes.
 */
const RECORDED_ON_KEY_EVERY = 10;

/** A number no sequence reaches, to size a body before its numbers are known. */
const WIDEST_SEQUENCE = Number.MAX_SAFE_INTEGER;

/**
 * The records from `start` on that go in one batch with it: consecutive records of the group, of
 * the same ordering key, never settled nor a copy (`isSkipped`), never redriven (a redriven dead letter keeps its own
 * number and attempt series: it goes alone), no event twice, at most `batchSize`, and a body under
 * {@link MAX_BATCH_BODY_BYTES}. Fewer than two means no batch.
 */
export function gatherBatch(group: readonly ConsumerRecord[], start: number, batchSize: number, isSkipped: (member: BatchMember) => boolean): BatchMember[] {
  const members: BatchMember[] = [];
  for (const record of group.slice(start, start + batchSize)) {
    const read = readRecord(record);
    if ('reason' in read) break;
    const { queued } = read;
    const first = members[0]?.queued;
    if (first !== undefined && (queued.ordering_key !== first.ordering_key || queued.event.subscription_id !== first.event.subscription_id)) break;
    if (queued.redrive !== undefined || isSkipped({ record, queued })) break;
    if (members.some((member) => member.queued.event.event_id === queued.event.event_id)) break;
    const items = [...members, { record, queued }].map((member): BatchItem => ({ queued: member.queued, sequence: WIDEST_SEQUENCE, previousSequence: WIDEST_SEQUENCE }));
    if (members.length > 0 && batchBodyBytes(items) > MAX_BATCH_BODY_BYTES) break;
    members.push({ record, queued });
  }
  return members;
}

/**
 * Keeps the numbers a run or batch was just given, for a replay (`DeliveryPorts.keepNumbers`): its
 * deliveries are recorded on the key alone, which forgets them two heads later. Part of the
 * numbering its first POST awaits, so every delivery the key records has its number kept; a run
 * whose numbers could not be kept is not recorded delivered (a fault: its members come back and
 * are delivered one at a time, each one's number then written on its record). A first member
 * without a place in its group (no SQS number) keeps none: a replay finds no number for them.
 */
function keepRunNumbers(members: readonly BatchMember[], sequences: readonly number[], ports: DeliveryPorts): Promise<void> {
  const [first] = members;
  const [firstSequence] = sequences;
  const place = first === undefined ? undefined : messagePlaceOf(first.record).message;
  if (ports.keepNumbers === undefined || first === undefined || firstSequence === undefined || place === undefined) return Promise.resolve();
  return ports.keepNumbers({
    subscriptionId: first.queued.event.subscription_id,
    orderingKey: first.queued.ordering_key,
    firstPosition: queuePositionOf(place),
    firstSequence,
    eventIds: members.map(({ queued }) => queued.event.event_id),
    at: ports.now().toISOString(),
  });
}

/**
 * Numbers a batch's or a run's events in one conditional write (`beginBatch`) and starts writing
 * the numbers the key moves aside on their records (see `recordPreviousNumber`), to be awaited
 * before the group goes on. Undefined when they cannot begin together (the first was begun before).
 */
async function numberTogether(
  members: readonly BatchMember[],
  ports: DeliveryPorts,
  context: RecordContext,
): Promise<{ readonly sequences: readonly number[]; readonly numbering: Promise<void>; readonly ticket: BatchTicket } | undefined> {
  const [first] = members;
  if (first === undefined || members.length < 2) throw new Error('a batch or a run holds at least two events');
  const ticket = await ports.store.beginBatch({
    orderingKey: first.queued.ordering_key,
    events: members.map(({ record, queued }) => ({
      eventId: queued.event.event_id,
      ...messagePlaceOf(record),
    })),
  });
  if (ticket === undefined) return undefined;
  const together = new Set(members.map((member) => member.queued.event.event_id));
  const isSeenSettled = (eventId: string): boolean => context.settledEarlier.has(eventId) || context.numberedEarlier.has(eventId);
  return {
    sequences: ticket.sequences,
    numbering: Promise.all([recordPreviousNumber(ports, first.queued.ordering_key, ticket, (eventId) => together.has(eventId), isSeenSettled), keepRunNumbers(members, ticket.sequences, ports)]).then(() => undefined),
    ticket,
  };
}

/** A delivered member's outcome: its event was accepted, and counted in its group's lag, or not. */
function deliveredOutcome(item: BatchItem, isCounted: boolean): DeliveryOutcome {
  return { kind: OutcomeKind.delivered, sequence: item.sequence, attempts: 1, acceptedAt: waitingSince(item.queued), isCounted };
}

/** Tells whether a member is the message ingest recorded for its event (see `isRecordedMessage`). */
type RecordedMessages = (member: BatchMember) => Promise<boolean>;

/**
 * Which members of a run or batch are their event's recorded message. Ingest records an event
 * right after SQS took its message, and the consumer may receive the message before that record
 * lands: a member whose record the batch's read did not find is read again, once for all of them,
 * started now, while the run's first POST is under way (strongly consistent, one read unit each,
 * where recording its delivery on its own record would cost a write unit). A read that fails
 * leaves them to their own records.
 */
function recordedMessages(members: readonly BatchMember[], ports: DeliveryPorts, wasSettled: SettledLookup): RecordedMessages {
  const isUnread = ({ record, queued }: BatchMember): boolean =>
    !isMessageOfItsOwn(queued) && messagePlaceOf(record).message !== undefined && wasSettled.positionOf(queued.event.event_id) === undefined;
  const unread = members.filter(isUnread);
  const readAgain: Promise<SettledLookup> =
    unread.length === 0 ? Promise.resolve(NOTHING_SETTLED) : ports.store.findSettled(unread.map(({ queued }) => ({ eventId: queued.event.event_id, redrivenAt: undefined }))).catch(() => NOTHING_SETTLED);
  return async ({ record, queued }) => isRecordedMessage(record, queued, wasSettled) || isRecordedMessage(record, queued, await readAgain);
}

/**
 * Records a delivered member, unless its key will: a member that is the message ingest
 * recorded for its event (`isRecorded`) is recorded by the next `recordDelivered` of its run or
 * batch (its outcome is then decided there); any other member on its event's record. Undefined
 * for a member the key records.
 */
function recordOnEvent(item: BatchItem, ports: DeliveryPorts, isRecorded: boolean): Promise<DeliveryOutcome> | undefined {
  if (isRecorded) return undefined;
  return ports.store.markDelivered({ queued: item.queued, sequence: item.sequence, attempts: 1, at: ports.now().toISOString() }).then(({ wasAccepted }) => deliveredOutcome(item, wasAccepted));
}

/**
 * Records on the key (its recorded deliveries) that a run's or a batch's members up to `last` were
 * delivered (see `DeliveryStore.recordDelivered`): each member recorded there is settled by this
 * write, counted in its group's lag since ingest recorded it.
 */
async function recordOnKey(last: { readonly member: BatchMember; readonly item: BatchItem }, ports: DeliveryPorts): Promise<void> {
  const { message } = messagePlaceOf(last.member.record);
  if (message === undefined) throw new Error(`event ${last.item.queued.event.event_id} has no place in its group to record`);
  await ports.store.recordDelivered({ orderingKey: last.item.queued.ordering_key, message, sequence: last.item.sequence });
}

/** What one batch came to: each member's outcome, or the fault that stopped its recording. */
export type BatchResult =
  | {
      readonly kind: 'delivered';
      /** In the batch's order; a fault leaves that member (and, for the group, every later one) to come back. */
      readonly settled: readonly ({ readonly outcome: DeliveryOutcome } | { readonly error: unknown })[];
    }
  | {
      /** The batch failed: its first event is the key's head, waiting `delaySeconds`, then attempted alone. */
      readonly kind: 'failed';
      readonly outcome: Extract<DeliveryOutcome, { kind: typeof OutcomeKind.retryLater }>;
    };

/**
 * Delivers a batch: one conditional write numbers it (`beginBatch`), one POST sends it. Undefined
 * when the batch cannot begin (its first event was begun before: a failed or crashed batch, or a
 * fall-back under way): the caller then processes the first record alone.
 *
 * After a 2xx each event's delivery is recorded, all at once, and awaited before the group goes
 * on, so a later head never begins while a batch's delivery is only on the key. After any other
 * answer nothing is counted: the first event waits for the backoff the receiver asked for
 * (`Retry-After`), or none, and is then attempted alone; the receiver's refusal of one event is
 * found by those single attempts, each counted and backed off as always.
 */
export async function startBatch(
  members: readonly BatchMember[],
  target: DeliveryTarget,
  ports: DeliveryPorts,
  policy: RetryPolicy,
  context: RecordContext,
): Promise<BatchResult | undefined> {
  const [first] = members;
  const numbered = await numberTogether(members, ports, context);
  if (first === undefined || numbered === undefined) return undefined;
  const { sequences, numbering, ticket } = numbered;
  const isRecorded = recordedMessages(members, ports, context.wasSettled);
  // A batch is delivered whole or not at all: each item's previous is the item before it (the
  // key's last give-up is before the batch), the first's the key's last delivered.
  const items = members.map((member, index): BatchItem => {
    const sequence = sequences[index] ?? 0;
    return { queued: member.queued, sequence, previousSequence: previousDeliveredBefore(sequence, ticket.givenUp) };
  });
  const attemptedAt = ports.now();
  const [head, ...rest] = items;
  if (head === undefined) throw new Error('a batch holds at least two events');
  const request = signBatch({ items: [head, ...rest], secrets: signingSecrets(target, attemptedAt), attemptedAt });
  const [result] = await Promise.all([ports.send(target.url, request), numbering]);

  if (isSuccess(result)) {
    // Recorded at once: on the key, in one write, for the members that are their event's
    // recorded message, and on their records for the others.
    const recovering = recordRecovery(ports, first.queued.ordering_key, ticket.failingSince);
    const recorded = await Promise.all(members.map(isRecorded));
    const onKeyMembers = members.flatMap((member, index) => (recorded[index] === true ? [{ member, item: items[index] }] : []));
    const last = onKeyMembers.at(-1);
    const onKey = last?.item === undefined ? Promise.resolve() : recordOnKey({ member: last.member, item: last.item }, ports);
    onKey.catch(() => undefined);
    const settled = await Promise.all(
      items.map(async (item, index) => {
        try {
          const onEvent = recordOnEvent(item, ports, recorded[index] === true);
          if (onEvent !== undefined) return { outcome: await onEvent };
          await onKey;
          return { outcome: deliveredOutcome(item, true) };
        } catch (error) {
          return { error };
        }
      }),
    );
    await recovering;
    return { kind: 'delivered', settled };
  }

  const reason = `batch of ${members.length} events: ${describeAttempt(result)}; delivering them one at a time`;
  await noteFailure(ports, policy, { orderingKey: first.queued.ordering_key, eventId: first.queued.event.event_id, reason, ticket });
  const retryAfter = parseRetryAfter(result.kind === AttemptResultKind.response ? result.retryAfter : undefined, ports.now());
  return {
    kind: 'failed',
    outcome: {
      kind: OutcomeKind.retryLater,
      delaySeconds: delayAfterFailedBatch(retryAfter, policy),
      reason,
      attempts: 0,
      acceptedAt: waitingSince(first.queued),
      eventId: first.queued.event.event_id,
      orderingKey: first.queued.ordering_key,
      isHeld: false,
    },
  };
}

/** What a run came to (see {@link startRun}): each member it reached, in order, and where it stopped. */
export interface RunResult {
  /** The members the run reached, in its order: an outcome, or the fault that stopped its recording. */
  readonly settled: readonly ({ readonly outcome: DeliveryOutcome } | { readonly error: unknown })[];
  /**
   * Set when the run stopped at a member that failed and must wait (its index in the run): its
   * outcome, `retryLater`, is the last of `settled`; the members after it were not sent.
   */
  readonly waitingAt?: number;
}

/**
 * Delivers a run (a subscription with `batch_size` 1): the consecutive events of one key that one
 * receive holds, numbered together by one conditional write (`beginBatch`, as a batch), then sent
 * one POST each, in order, with no state round trip between two POSTs: each delivery is recorded
 * while the next event is sent, and awaited before the one after it (as `processGroup` does for
 * single events). Undefined when the run cannot begin (its first event was begun before): the
 * caller then processes the first record alone.
 *
 * A run's attempts are counted after they are made, not before: the first failure of a member
 * counts its attempt 1 at once (the member becomes the key's head, with the number the run gave
 * it) and then waits its backoff, or is given up, exactly as a single event's first failure. A
 * crash between a member's POST and that count leaves the attempt uncounted, at most once per
 * event: its message comes back and is attempted one at a time from then on, each attempt
 * counted before it is made (see docs/guarantees.md, *Dead-lettering breaks order*).
 */
export async function startRun(
  members: readonly BatchMember[],
  target: DeliveryTarget,
  ports: DeliveryPorts,
  policy: RetryPolicy,
  context: RecordContext,
  hasTime: () => boolean,
): Promise<RunResult | undefined> {
  const numbered = await numberTogether(members, ports, context);
  if (numbered === undefined) return undefined;
  const { sequences, numbering } = numbered;
  let { failingSince, givenUp } = numbered.ticket;
  const isRecorded = recordedMessages(members, ports, context.wasSettled);
  /** The end of the key's failure streak, written at the run's first delivery, and again at the first after a give-up that began one. */
  let recovering: Promise<void> | undefined;
  /** Each member's entry by its place in the run: filled as its record lands or its failure is decided. */
  const entries: (RunResult['settled'][number] | undefined)[] = members.map(() => undefined);
  /** The entries of the members the run reached, in its order. */
  const reached = (): RunResult['settled'] => entries.filter((entry): entry is RunResult['settled'][number] => entry !== undefined);
  /** The records of the last two deliveries on their events' records, still being written: the newer while the next member is sent. */
  let older: Promise<void> | undefined;
  let newer: Promise<void> | undefined;
  /** Delivered members the key will record, not written yet, and the write of those before them, under way. */
  let onKeyWaiting: { readonly index: number; readonly member: BatchMember; readonly item: BatchItem }[] = [];
  let onKeyWriting: Promise<void> | undefined;
  /** Starts the key's write of the members waiting for it, once the one before it landed. */
  const recordWaitingOnKey = async (): Promise<void> => {
    await onKeyWriting;
    const written = onKeyWaiting;
    onKeyWaiting = [];
    const last = written.at(-1);
    if (last === undefined) return;
    onKeyWriting = recordOnKey(last, ports).then(
      () => {
        for (const { index, item } of written) entries[index] = { outcome: deliveredOutcome(item, true) };
      },
      (error: unknown) => {
        for (const { index } of written) entries[index] = { error };
      },
    );
  };
  const awaitRecords = async (): Promise<void> => {
    await recordWaitingOnKey();
    // The streak's end too: a member that fails after it must not count the streak a delivery ended.
    await Promise.all([older, newer, onKeyWriting, recovering]);
    older = undefined;
    newer = undefined;
    onKeyWriting = undefined;
  };
  const record = (index: number, item: BatchItem, isOnKey: boolean): Promise<void> | undefined =>
    recordOnEvent(item, ports, isOnKey)?.then(
      (outcome) => {
        entries[index] = { outcome };
      },
      (error: unknown) => {
        entries[index] = { error };
      },
    );
  try {
    for (const [index, member] of members.entries()) {
      // The delivery before the last must be recorded before this POST when it is recorded on its
      // event's record; those the key records are written every few, while the run goes
      // on. A failed record ends the run there. The first member needs no time check: the caller
      // made it for the run.
      if (older !== undefined) await older;
      older = newer;
      newer = undefined;
      if (entries.some((entry) => entry !== undefined && 'error' in entry) || (index > 0 && !hasTime())) break;
      // Each member's previous as its key will tell it if it begins alone: the one before it, unless given up here.
      const sequence = sequences[index] ?? 0;
      const item: BatchItem = { queued: member.queued, sequence, previousSequence: previousDeliveredBefore(sequence, givenUp) };
      const attemptedAt = ports.now();
      const request = signWebhook({ ...item, secrets: signingSecrets(target, attemptedAt), attemptedAt });
      const [result] = await Promise.all([ports.send(target.url, request), index === 0 ? numbering : undefined]);
      if (isSuccess(result)) {
        recovering ??= recordRecovery(ports, item.queued.ordering_key, failingSince);
        newer = record(index, item, await isRecorded(member));
        if (newer === undefined) {
          onKeyWaiting.push({ index, member, item });
          if (onKeyWaiting.length >= RECORDED_ON_KEY_EVERY) await recordWaitingOnKey();
        }
        continue;
      }
      // The failed attempt is counted (and decided) even when a record before it failed: the
      // caller then sends everything from that record back, this outcome kept. The deliveries
      // before it are recorded first, so that the key never records one after its head.
      await awaitRecords();
      let outcome: DeliveryOutcome;
      try {
        outcome = await failMember(member, item, result, ports, policy);
      } catch (error) {
        entries[index] = { error };
        break;
      }
      entries[index] = { outcome };
      if (entries.some((entry) => entry !== undefined && 'error' in entry)) break;
      if (outcome.kind === OutcomeKind.retryLater || outcome.kind === OutcomeKind.paused) return { settled: reached(), waitingAt: index };
      // Given up: the key moves on to the run's next member, numbered already, whose previous is
      // this one's. A streak the give-up recorded is ended by the run's next delivery.
      if (outcome.kind === OutcomeKind.deadLettered) givenUp = { sequence: item.sequence, previousDelivered: item.previousSequence };
      if (outcome.kind === OutcomeKind.deadLettered && outcome.failingSince !== undefined) {
        failingSince = outcome.failingSince;
        recovering = undefined;
      }
    }
  } finally {
    await awaitRecords();
    await numbering;
  }
  return { settled: reached() };
}

/**
 * A run's member that failed: its attempt is counted now (it becomes the key's head, with its
 * number), then it waits its backoff or is given up, as a single event's failed attempt.
 */
async function failMember(member: BatchMember, item: BatchItem, result: Awaited<ReturnType<DeliveryPorts['send']>>, ports: DeliveryPorts, policy: RetryPolicy): Promise<DeliveryOutcome> {
  const { queued, record } = member;
  const counted = await ports.store.beginAttempt({
    orderingKey: queued.ordering_key,
    eventId: queued.event.event_id,
    maxAttempts: attemptLimit(policy),
    ...messagePlaceOf(record),
  });
  if (counted.kind !== AttemptTicketKind.attempt || counted.sequence !== item.sequence || counted.previousDelivered !== item.previousSequence) {
    throw new Error(`run member ${queued.event.event_id} could not be counted: ${counted.kind} as ${counted.sequence} after ${counted.previousDelivered}, numbered ${item.sequence} after ${item.previousSequence}`);
  }
  const reason = describeAttempt(result);
  const retryAfter = result.kind === AttemptResultKind.response ? result.retryAfter : undefined;
  const decision = decideAfterFailure({ attempts: roundAttempts(counted), reason, retryAfterSeconds: parseRetryAfter(retryAfter, ports.now()) }, policy, ports.random);
  if (decision.kind === FailureDecisionKind.deadLetter) return giveUpOrPause(ports, policy, queued, counted, decision.reason);
  await noteFailure(ports, policy, { orderingKey: queued.ordering_key, eventId: queued.event.event_id, reason, ticket: counted });
  return {
    kind: OutcomeKind.retryLater,
    delaySeconds: decision.delaySeconds,
    reason,
    attempts: counted.attempts,
    acceptedAt: waitingSince(queued),
    eventId: queued.event.event_id,
    orderingKey: queued.ordering_key,
    isHeld: roundAttempts(counted) >= policy.maxDeliveryAttempts,
  };
}

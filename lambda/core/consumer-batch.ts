/**
 * One invocation of the consumer: a batch of up to 10 SQS records, possibly several groups and
 * several records of one group. Groups run concurrently; the records of a group strictly one after
 * another. What must happen to SQS afterwards is returned as a value.
 */
import { deliverRecord, OutcomeKind, readRecord, type ConsumerRecord, type DeliveryOutcome, type DeliveryPorts } from './delivery.js';
import { HeadState, type GroupHead, type GroupProgress } from './lag.js';
import { faultBackoffSeconds, type RetryPolicy } from './retry-policy.js';

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
  for (const outcome of outcomes) {
    if (outcome.kind !== OutcomeKind.delivered && outcome.kind !== OutcomeKind.deadLettered) continue;
    lastSettledAcceptedAt = outcome.acceptedAt ?? lastSettledAcceptedAt;
    // Only what ingest counted is uncounted; an unreadable record was never an accepted event.
    if (!outcome.isCounted) continue;
    settled += 1;
  }
  return { messageGroupId, settled, lastSettledAcceptedAt, head };
}

async function processGroup(
  group: readonly ConsumerRecord[],
  ports: DeliveryPorts,
  policy: RetryPolicy,
  onFault: FaultListener,
  budget: TimeBudget,
  outcomes: Map<string, DeliveryOutcome>,
): Promise<GroupPlan> {
  const messageGroupId = group[0]?.messageGroupId ?? '';
  const seen: DeliveryOutcome[] = [];
  /** Events settled earlier in this run of the group: their numbers are on their records already. */
  const settled = new Set<string>();
  for (const [index, record] of group.entries()) {
    if (!budget.hasTimeFor(budget.recordMs)) {
      // Too little time to finish this record: it and its successors (which must not overtake it)
      // go back untouched and visible at once, for the next invocation.
      return {
        ...planGroupRetry(group, index, 0),
        unstartedMessageIds: group.slice(index).map((waiting) => waiting.messageId),
        progress: summarizeGroup(messageGroupId, seen, { state: HeadState.unknown }),
      };
    }
    let outcome: DeliveryOutcome;
    try {
      outcome = await deliverRecord(record, ports, policy, settled);
    } catch (error) {
      // A fault (a dependency down, a crash before the outcome was recorded): the record waits,
      // backing off by how often SQS has handed it out, so that a passing fault costs seconds and
      // a lasting one reaches SQS's backstop redrive only after days. The successors are received
      // with it every time, so the highest receive count among them sets the pace: the first of
      // them to pass maxReceiveCount would be moved. Other groups are not held back.
      onFault(error, record);
      const receiveCount = Math.max(...group.slice(index).map((waiting) => waiting.receiveCount));
      const delaySeconds = faultBackoffSeconds(receiveCount, policy, ports.random);
      return {
        ...planGroupRetry(group, index, delaySeconds),
        unstartedMessageIds: [],
        progress: summarizeGroup(messageGroupId, seen, { state: HeadState.unknown }),
      };
    }
    outcomes.set(record.messageId, outcome);
    seen.push(outcome);
    const read = readRecord(record);
    if (outcome.kind !== OutcomeKind.retryLater && !('reason' in read)) settled.add(read.queued.event.event_id);
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
  }
  return { failedMessageIds: [], visibilityChanges: [], unstartedMessageIds: [], progress: summarizeGroup(messageGroupId, seen, { state: HeadState.clear }) };
}

/**
 * Processes a batch and plans what SQS must be told. A record is started only while the
 * invocation has `budget.recordMs` left; the rest of its group goes back with visibility 0.
 */
export async function processBatch(
  records: readonly ConsumerRecord[],
  ports: DeliveryPorts,
  policy: RetryPolicy,
  onFault: FaultListener,
  budget: TimeBudget,
): Promise<BatchPlan> {
  const outcomes = new Map<string, DeliveryOutcome>();
  const plans = await Promise.all(
    groupByMessageGroup(records).map((group) => processGroup(group, ports, policy, onFault, budget, outcomes)),
  );
  return {
    failedMessageIds: plans.flatMap((plan) => plan.failedMessageIds),
    visibilityChanges: plans.flatMap((plan) => plan.visibilityChanges),
    outcomes,
    unstartedMessageIds: plans.flatMap((plan) => plan.unstartedMessageIds),
    groups: plans.map((plan) => plan.progress),
  };
}

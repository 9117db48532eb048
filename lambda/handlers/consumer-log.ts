/**
 * The consumer's lines about records: each names the record's SQS message id (and, for an event of
 * a pack, its place in the message) and message group,
 * its event's `event_id` and `subscription_id`, and, once the store has given them, its
 * `sequence` (the receiver's `webhook-sequence`) and `attempt`. These are the fields of
 * `GET /v1/dead-letters` and the headers a receiver got, so that a line is found from either.
 * Never the body: it holds the payload.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { BatchPlan } from '../core/consumer-batch.js';
import { OutcomeKind, readRecord, type ConsumerRecord, type DeliveryPorts } from '../core/delivery.js';
import { messageIdOf } from '../core/message-packs.js';

/** The keys of a line about one record; `sequence` and `attempt` only once known. */
// A type, not an interface: Powertools takes a line's attributes as an index signature.
export type RecordLogKeys = {
  /** The SQS message id, as in `batchItemFailures`. */
  readonly message_id: string;
  /** For an event of a pack (several events of one key in one message): its place in the message, from 0. */
  readonly index_in_message?: number;
  readonly message_group_id: string;
  /** Absent for a record whose body is no queued event. */
  readonly event_id?: string;
  readonly subscription_id?: string;
  readonly sequence?: number;
  /** Real attempts made so far, the one the line is about included. */
  readonly attempt?: number;
};

/** What one invocation has learnt about its records, for its log lines. */
export interface RecordLog {
  /**
   * The same ports, behaving the same, that also note the sequence and attempt count the store
   * gives each event, and those its dead letter is written with.
   */
  readonly observe: (ports: DeliveryPorts) => DeliveryPorts;
  /** The keys of a line about the record with this SQS message id. */
  readonly keysOf: (messageId: string) => RecordLogKeys;
}

interface Numbering {
  readonly sequence: number | undefined;
  readonly attempt: number;
}

/**
 * Follows a batch's records for its log lines. The records are grouped and delivered by the core,
 * concurrently across groups: the keys of a record are passed on each of its lines rather than
 * kept on the shared logger (`appendKeys`), where one group's keys would land on another's lines.
 */
export function createRecordLog(records: readonly ConsumerRecord[]): RecordLog {
  const byMessageId = new Map(records.map((record) => [record.messageId, record]));
  const numberings = new Map<string, Numbering>();
  /** Only the two ids go on a line; the event (and its payload) goes no further. `readRecord` keeps its answer. */
  const idsOf = (record: ConsumerRecord): Pick<RecordLogKeys, 'event_id' | 'subscription_id'> => {
    const read = readRecord(record);
    return 'queued' in read ? { event_id: read.queued.event.event_id, subscription_id: read.queued.event.subscription_id } : {};
  };

  return {
    observe: (ports) => ({
      ...ports,
      store: {
        ...ports.store,
        beginAttempt: async (input) => {
          const ticket = await ports.store.beginAttempt(input);
          numberings.set(input.eventId, { sequence: ticket.sequence, attempt: ticket.attempts });
          return ticket;
        },
        beginBatch: async (input) => {
          const ticket = await ports.store.beginBatch(input);
          // A batch's POST is each of its events' first attempt, counted or not (see `startBatch`).
          input.events.forEach((event, index) => {
            const sequence = ticket?.sequences[index];
            if (sequence !== undefined) numberings.set(event.eventId, { sequence, attempt: 1 });
          });
          return ticket;
        },
      },
      deadLetters: {
        put: async (letter) => {
          await ports.deadLetters.put(letter);
          numberings.set(letter.queued.event.event_id, { sequence: letter.sequence, attempt: letter.attempts });
        },
      },
    }),
    keysOf: (messageId) => {
      const record = byMessageId.get(messageId);
      if (record === undefined) return { message_id: messageId, message_group_id: 'unknown' };
      const found = idsOf(record);
      const numbering = found.event_id === undefined ? undefined : numberings.get(found.event_id);
      return {
        message_id: messageIdOf(record),
        ...(record.pack === undefined ? {} : { index_in_message: record.pack.index }),
        message_group_id: record.messageGroupId,
        ...found,
        ...(numbering?.sequence === undefined ? {} : { sequence: numbering.sequence }),
        ...(numbering === undefined ? {} : { attempt: numbering.attempt }),
      };
    },
  };
}

/** What one group delivered, and skipped as settled, in one invocation: one line for all of it. */
interface GroupSummary {
  readonly event_ids: string[];
  readonly sequences: number[];
  duplicates: number;
  /** Events parked (see `core/park.ts`), or copies of parked ones dropped. */
  parked: number;
}

/**
 * Logs what the batch did to each record. A delivery, or a copy skipped as settled, is one line
 * per group at INFO (`events delivered`, with the group's `event_ids` and their `sequences` in
 * order, and how many copies were skipped) and one line per event at DEBUG: a receive brings up to
 * a hundred events of a group, and a line each would cost most of the logs' bill. Every other
 * outcome (a retry, a dead letter, a record not started) is a line of its own.
 */
export function logBatchPlan(logger: Logger, plan: BatchPlan, recordLog: RecordLog, remainingMs: number): void {
  for (const messageId of plan.unstartedMessageIds) {
    logger.warn('too little time left to start this record; it goes back to the queue at once', { ...recordLog.keysOf(messageId), remainingMs });
  }
  const groups = new Map<string, GroupSummary>();
  const summaryOf = (keys: RecordLogKeys): GroupSummary => {
    const known = groups.get(keys.message_group_id);
    if (known !== undefined) return known;
    const created: GroupSummary = { event_ids: [], sequences: [], duplicates: 0, parked: 0 };
    groups.set(keys.message_group_id, created);
    return created;
  };
  for (const [messageId, outcome] of plan.outcomes) {
    const keys = recordLog.keysOf(messageId);
    switch (outcome.kind) {
      case OutcomeKind.delivered: {
        logger.debug('event delivered', { ...keys, sequence: outcome.sequence, attempt: outcome.attempts });
        const summary = summaryOf(keys);
        summary.event_ids.push(keys.event_id ?? messageId);
        summary.sequences.push(outcome.sequence);
        break;
      }
      case OutcomeKind.duplicate:
        logger.debug('event already delivered or dead-lettered; not sent again', keys);
        summaryOf(keys).duplicates += 1;
        break;
      case OutcomeKind.deadLettered:
        logger.warn('event dead-lettered', { ...keys, reason: outcome.reason });
        break;
      case OutcomeKind.retryLater: {
        const details = { ...keys, attempt: outcome.attempts, reason: outcome.reason, delaySeconds: outcome.delaySeconds };
        if (outcome.isHeld) logger.warn('head exhausted its attempts; holding its key (ON_EXHAUSTED=stall)', details);
        else logger.info('delivery failed; retrying later', details);
        break;
      }
      case OutcomeKind.paused:
        logger.warn('head exhausted its attempts while its key kept failing; its subscription is paused instead of giving it up', {
          ...keys,
          attempt: outcome.attempts,
          reason: outcome.reason,
          failing_since: outcome.failingSince,
          paused_at: outcome.pause.pausedAt,
        });
        break;
      case OutcomeKind.parked:
        logger.debug('event parked behind its paused subscription\'s backlog; resume sends it back', keys);
        summaryOf(keys).parked += 1;
        break;
    }
  }
  for (const [messageGroupId, summary] of groups) {
    logger.info('events delivered', { message_group_id: messageGroupId, delivered: summary.event_ids.length, event_ids: summary.event_ids, sequences: summary.sequences, duplicates: summary.duplicates });
    if (summary.parked > 0) logger.info('events parked', { message_group_id: messageGroupId, parked: summary.parked });
  }
}

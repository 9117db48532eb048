/**
 * The OrderingKeys table: one item per ordering key, holding the last `webhook-sequence` given out
 * and the head event being attempted with its real attempt count. One item, so that giving a
 * sequence number and counting an attempt is a single conditional write. Beside it, a small item
 * of how far the key's deliveries recorded on the key reach ({@link deliveredItemKey}).
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { KeyHead } from '../core/backstop-import.js';
import { AttemptTicketKind, messagePositionOf, previousDeliveredBefore, type AttemptTicket, type GivenUpMark, type BatchTicket, type DeliveredThrough, type DeliveryStore, type MessagePlace, type NumberedEvent } from '../core/delivery.js';
import { blake2bDigest } from '../core/routing.js';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { updateIfCondition } from './aws-clients.js';
import { batchGetItems, ReadConsistency } from './batch-get.js';
import { parseItem } from './dynamo-item.js';

/**
 * How far a key's deliveries recorded on the key reach (see `DeliveredThrough`): all three or none.
 * They live on an item of their own beside the key's ({@link deliveredItemKey}), not on the key's
 * item: a key's item carries the numbers of its last two runs (`ahead`, `prev_ahead`), up to a
 * hundred event ids each, and DynamoDB bills a write by the whole item's size, so recording a
 * run's progress there, once per ten deliveries, would cost a unit per KB of numbers each time.
 */
const deliveredSchema = z.object({
  delivered_group: z.string().optional(),
  delivered_position: z.string().optional(),
  delivered_sequence: z.number().int().positive().optional(),
});

const headSchema = z.object({
  head_event_id: z.string(),
  head_sequence: z.number().int().positive(),
  head_attempts: z.number().int().nonnegative(),
  skip_event_id: z.string().optional(),
  /** The head before this one (see `beginAttempt`); '' and 0 for a key whose first head this is. */
  prev_event_id: z.string().optional(),
  prev_sequence: z.number().int().nonnegative().optional(),
  /** The head before that one, likewise (see `AttemptTicket.earlier`). */
  prev2_event_id: z.string().optional(),
  prev2_sequence: z.number().int().nonnegative().optional(),
  /** The message group and queue position (see `messagePositionOf`) of the head's message, when known. */
  head_group: z.string().optional(),
  head_position: z.string().optional(),
  /**
   * Events of the key's last batch after its first, numbered with it before it was sent (see
   * `beginBatch`): each one's offset from `ahead_base`, the first one's number. Kept until a head
   * from outside them begins, then kept one more such head as `prev_ahead`, so that a number once
   * given is found here until the consumer has written it on the event's record.
   */
  ahead: z.record(z.string(), z.number().int().positive()).optional(),
  ahead_base: z.number().int().nonnegative().optional(),
  prev_ahead: z.record(z.string(), z.number().int().positive()).optional(),
  prev_ahead_base: z.number().int().nonnegative().optional(),
  /**
   * When the key's endpoint began failing: the first failed attempt (or batch) since its last
   * delivery, across heads (see `DeliveryStore.recordFailure`); absent while it delivers.
   */
  failing_since: z.iso.datetime().optional(),
  /** When the key's last failure was recorded (see `liveStreak`). */
  failed_at: z.iso.datetime().optional(),
  /**
   * Set when an automatic pause took the head instead of giving it up (`grantAttempts`): the
   * attempts it had then, and the most it may have from there, so that a resume gets it a full
   * round of attempts. Both or neither; removed by the key's next head.
   */
  head_attempts_base: z.number().int().nonnegative().optional(),
  head_allowed_attempts: z.number().int().positive().optional(),
  /** The head whose give-up began (`recordFailure` with `isGivingUp`): it is finished as one. */
  head_giving_up: z.string().optional(),
  /** The last number the key gave. */
  last_sequence: z.number().int().nonnegative().optional(),
  /** The key's last give-up of a numbered event, both or neither (see `GivenUpMark`, `recordGivenUp`). */
  given_up_sequence: z.number().int().positive().optional(),
  given_up_previous: z.number().int().nonnegative().optional(),
});

/**
 * The key of the item that records how far `orderingKey`'s deliveries reach, in the same table.
 * It is no ordering key: 129 characters, longer than any subscription id (at most 128), and not a
 * resource key (a JSON array); the key's 16-byte BLAKE2b tells it apart from every other key's.
 */
export function deliveredItemKey(orderingKey: string): string {
  const digest = Buffer.from(blake2bDigest(orderingKey, 16)).toString('hex');
  return `${'delivered-through:'.padEnd(129 - digest.length, '-')}${digest}`;
}

/** The item's {@link DeliveredThrough}, when it records one. */
function deliveredOf(item: z.infer<typeof deliveredSchema>): DeliveredThrough | undefined {
  const { delivered_group: messageGroupId, delivered_position: position, delivered_sequence: sequence } = item;
  if (messageGroupId === undefined || position === undefined || sequence === undefined) return undefined;
  return { messageGroupId, position, sequence };
}

/** A head the item keeps from before, by its two attributes; undefined when there was none. */
function headOf(eventId: string | undefined, sequence: number | undefined): { eventId: string; sequence: number } | undefined {
  if (eventId === undefined || eventId === '' || sequence === undefined || sequence === 0) return undefined;
  return { eventId, sequence };
}

/** The numbers of a batch's later events as the item keeps them: base plus offset. */
function numbersOf(offsets: Readonly<Record<string, number>> | undefined, base: number | undefined): NumberedEvent[] {
  if (offsets === undefined || base === undefined) return [];
  return Object.entries(offsets).map(([eventId, offset]) => ({ eventId, sequence: base + offset }));
}

/**
 * The head before the current one, the one before that, and the events numbered ahead, as the
 * item keeps them.
 */
function previousOf(head: z.infer<typeof headSchema>): Pick<AttemptTicket, 'previous' | 'earlier' | 'ahead' | 'movedAhead'> {
  const previous = headOf(head.prev_event_id, head.prev_sequence);
  const earlier = headOf(head.prev2_event_id, head.prev2_sequence);
  const ahead = numbersOf(head.ahead, head.ahead_base);
  const movedAhead = numbersOf(head.prev_ahead, head.prev_ahead_base);
  return {
    ...(previous === undefined ? {} : { previous }),
    ...(earlier === undefined ? {} : { earlier }),
    ...(ahead.length === 0 ? {} : { ahead }),
    ...(movedAhead.length === 0 ? {} : { movedAhead }),
  };
}

/** The condition that the message is newer in its group than the key's head's (see `beginAttempt`). */
const NEWER_THAN_HEAD = '(attribute_not_exists(head_position) OR head_group <> :group OR head_position < :position)';

/**
 * The SET operands that keep what a head from outside the key's last batch replaces: the two
 * previous heads shift, and the batch's numbers move to `prev_ahead` (see `headSchema`). Every
 * operand reads the item as it was before the write.
 */
const SHIFT_PREVIOUS =
  ', prev2_event_id = if_not_exists(prev_event_id, :none), prev2_sequence = if_not_exists(prev_sequence, :nothing)' +
  ', prev_event_id = if_not_exists(head_event_id, :none), prev_sequence = if_not_exists(head_sequence, :nothing)';
const MOVE_AHEAD = ', prev_ahead = if_not_exists(ahead, :noNumbers), prev_ahead_base = if_not_exists(ahead_base, :nothing)';

/**
 * What a new head sets and removes of its message's place and its redrive mark: each set when
 * known, removed otherwise, so that nothing of the head before it stays. `setTail` goes after the
 * SET list, `removeTail` after the REMOVE list; `values` holds their operands.
 */
function headPlaceClauses(
  message: MessagePlace | undefined,
  redrivenAt: string | undefined,
): { readonly setTail: string; readonly removeTail: string; readonly values: Record<string, string> } {
  return {
    setTail: `${message === undefined ? '' : ', head_group = :group, head_position = :position'}${redrivenAt === undefined ? '' : ', head_redrive = :redrive'}`,
    removeTail: `${redrivenAt === undefined ? ', head_redrive' : ''}${message === undefined ? ', head_group, head_position' : ''}`,
    values: {
      ...(redrivenAt === undefined ? {} : { ':redrive': redrivenAt }),
      ...(message === undefined ? {} : { ':group': message.messageGroupId, ':position': messagePositionOf(message) }),
    },
  };
}

/**
 * The key's head is another event than the one being attempted, after both conditional writes of
 * `beginAttempt` were refused: only one consumer holds a message group at a time, so this is a
 * fault (a second consumer, or a write outside the consumer), never an outcome to act on.
 */
export class HeadChangedError extends Error {
  override readonly name = 'HeadChangedError';
  constructor(
    readonly orderingKey: string,
    readonly eventId: string,
    readonly headEventId: string,
  ) {
    super(`ordering key ${orderingKey} changed head to ${headEventId} while ${eventId} was being attempted`);
  }
}

export type OrderingKeyStore = Pick<DeliveryStore, 'beginAttempt' | 'beginBatch' | 'findNumber' | 'recordFailure' | 'recordGivenUp' | 'recordRecovered' | 'grantAttempts' | 'findDelivered' | 'recordDelivered'> & {
  /** The key's head as the consumer last began it, or undefined for a key never attempted. */
  readonly findHead: (orderingKey: string) => Promise<KeyHead | undefined>;
  /**
   * Asks the consumer to dead-letter the key's head at its next receive instead of attempting it.
   * @returns false when `eventId` is not the key's head (any more)
   */
  readonly requestSkip: (input: { readonly orderingKey: string; readonly eventId: string; readonly at: string }) => Promise<boolean>;
};

/** The IAM actions of each method of {@link OrderingKeyStore}, all on the OrderingKeys table. */
export const ORDERING_KEY_STORE_ACCESS = {
  // Conditional writes, and a read of the head when both are refused.
  beginAttempt: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'] }],
  beginBatch: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
  findNumber: [{ resource: 'orderingKeysTable', actions: ['dynamodb:GetItem'] }],
  findDelivered: [{ resource: 'orderingKeysTable', actions: ['dynamodb:BatchGetItem'] }],
  recordDelivered: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
  recordFailure: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
  recordGivenUp: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
  recordRecovered: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
  grantAttempts: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
  findHead: [{ resource: 'orderingKeysTable', actions: ['dynamodb:GetItem'] }],
  requestSkip: [{ resource: 'orderingKeysTable', actions: ['dynamodb:UpdateItem'] }],
} as const satisfies AccessMap<OrderingKeyStore>;

/** The key's failure streak as the item keeps it (see `DeliveryStore.recordFailure`). */
function streakOf(head: z.infer<typeof headSchema>): Pick<AttemptTicket, 'failingSince' | 'failedAt'> {
  return {
    ...(head.failing_since === undefined ? {} : { failingSince: head.failing_since }),
    ...(head.failed_at === undefined ? {} : { failedAt: head.failed_at }),
  };
}

/** The key's last give-up of a numbered event, as the item keeps it. */
function givenUpOf(head: z.infer<typeof headSchema>): GivenUpMark | undefined {
  const { given_up_sequence: sequence, given_up_previous: previousDelivered } = head;
  return sequence === undefined || previousDelivered === undefined ? undefined : { sequence, previousDelivered };
}

/**
 * The head's `previous_sequence` (see `previousDeliveredBefore`): asked with its own number, or,
 * for a redelivery that keeps its number (`isKeptNumber`), with the key's next one.
 */
function previousDeliveredOf(head: z.infer<typeof headSchema>, isKeptNumber: boolean): number {
  const sequence = isKeptNumber ? (head.last_sequence ?? head.head_sequence) + 1 : head.head_sequence;
  return previousDeliveredBefore(sequence, givenUpOf(head));
}

function ticketOf(kind: AttemptTicketKind, head: z.infer<typeof headSchema>, isKeptNumber: boolean): AttemptTicket {
  return {
    kind,
    sequence: head.head_sequence,
    attempts: head.head_attempts,
    previousDelivered: previousDeliveredOf(head, isKeptNumber),
    ...(head.head_attempts_base === undefined ? {} : { attemptsBefore: head.head_attempts_base }),
    ...streakOf(head),
    ...(head.head_giving_up === head.head_event_id ? { isGivingUp: true } : {}),
    ...previousOf(head),
  };
}

/** What a new head removes of the one before it: its error, its skip and the attempts an automatic pause granted it. */
const HEAD_REMOVALS = 'head_last_error, skip_event_id, skip_requested_at, head_attempts_base, head_allowed_attempts, head_giving_up';

export function createOrderingKeyStore(client: DynamoDBDocumentClient, tableName: string): OrderingKeyStore {
  const orderingKey = TABLES.orderingKeys.partitionKey;

  const readHead = async (key: string): Promise<z.infer<typeof headSchema>> => {
    const output = await client.send(new GetCommand({ TableName: tableName, Key: { [orderingKey]: key }, ConsistentRead: true }));
    return parseItem(headSchema, output.Item, tableName, key);
  };

  /**
   * Begins an event its batch numbered as the key's new head, with that number and attempt 1, and
   * takes it out of `ahead`; undefined when refused (the item changed since it was read).
   */
  const beginAhead = async (
    key: string,
    eventId: string,
    redrivenAt: string | undefined,
    message: MessagePlace | undefined,
  ): Promise<z.infer<typeof headSchema> | undefined> => {
    const place = headPlaceClauses(message, redrivenAt);
    const output = await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: { [orderingKey]: key },
        UpdateExpression: [
          'SET head_sequence = ahead_base + ahead.#event',
          SHIFT_PREVIOUS,
          ', head_event_id = :event, head_attempts = :one',
          place.setTail,
          // Taken out of the batch's numbers: from here the key keeps it as its head, then previous heads.
          ` REMOVE ahead.#event, ${HEAD_REMOVALS}`,
          place.removeTail,
        ].join(''),
        ConditionExpression: `attribute_exists(ahead.#event) AND head_event_id <> :event${message === undefined ? '' : ` AND ${NEWER_THAN_HEAD}`}`,
        ExpressionAttributeNames: { '#event': eventId },
        ExpressionAttributeValues: { ':one': 1, ':event': eventId, ':none': '', ':nothing': 0, ...place.values },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return output === undefined ? undefined : parseItem(headSchema, output.Attributes, tableName, key);
  };

  const store: OrderingKeyStore = {
    async beginAttempt({ orderingKey: key, eventId, maxAttempts, redrive, message }): Promise<AttemptTicket> {
      // A redrive is a new attempt series of the same event: it is told apart by its redrive time.
      const redriveValues = redrive === undefined ? {} : { ':redrive': redrive.redrivenAt };
      const isKeptSequence = redrive?.sequence !== undefined;
      const place = headPlaceClauses(message, redrive?.redrivenAt);
      // A new head: the key's next sequence number, attempt 1. Every SET operand reads the item as
      // it was before this write, so head_sequence equals the new last_sequence, and prev_* keep
      // the head this one replaces: its number stays findable here (the backstop's import reads
      // it) until the consumer has written it on that event's record, and prev2_* the head before
      // that, whose record may still be being written (see `AttemptTicket.earlier`). A redriven dead letter keeps
      // the number it was given and takes none. A message older in its group than the head's
      // (a stale copy: an invocation that ran late, or a record sent back after its successor was
      // begun) never becomes the head: the key has moved past it.
      const started = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: [
            isKeptSequence
              ? 'SET head_sequence = :kept'
              : 'SET last_sequence = if_not_exists(last_sequence, :zero) + :one, head_sequence = if_not_exists(last_sequence, :zero) + :one',
            SHIFT_PREVIOUS,
            MOVE_AHEAD,
            ', head_event_id = :event, head_attempts = :one',
            place.setTail,
            ` REMOVE ${HEAD_REMOVALS}, ahead, ahead_base`,
            place.removeTail,
          ].join(''),
          ConditionExpression: [
            redrive === undefined || !isKeptSequence
              ? '(attribute_not_exists(head_event_id) OR head_event_id <> :event)'
              : '(attribute_not_exists(head_event_id) OR head_event_id <> :event OR attribute_not_exists(head_redrive) OR head_redrive <> :redrive)',
            // An event numbered with its batch keeps that number (see `beginAhead` below).
            isKeptSequence ? '' : ' AND attribute_not_exists(ahead.#event)',
            message === undefined ? '' : ` AND ${NEWER_THAN_HEAD}`,
          ].join(''),
          ...(isKeptSequence ? {} : { ExpressionAttributeNames: { '#event': eventId } }),
          ExpressionAttributeValues: {
            ':one': 1,
            ':event': eventId,
            ':none': '',
            ':nothing': 0,
            ':noNumbers': {},
            ...(isKeptSequence ? { ':kept': redrive?.sequence } : { ':zero': 0 }),
            ...place.values,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      // A redriven dead letter without a number that is its key's head already (an earlier copy of
      // its redrive was numbered, and may have been sent, before it was given up unrecorded): a new
      // attempt series that keeps the number the key gave it, since a number once given stays.
      const renumbered =
        started ??
        (redrive === undefined || isKeptSequence
          ? undefined
          : await updateIfCondition(
              client,
              new UpdateCommand({
                TableName: tableName,
                Key: { [orderingKey]: key },
                UpdateExpression: `SET head_attempts = :one, head_redrive = :redrive REMOVE ${HEAD_REMOVALS}`,
                ConditionExpression: 'head_event_id = :event AND (attribute_not_exists(head_redrive) OR head_redrive <> :redrive)',
                ExpressionAttributeValues: { ':one': 1, ':event': eventId, ':redrive': redrive.redrivenAt },
                ReturnValues: 'ALL_NEW',
              }),
            ));
      // Otherwise the same head again (a retry): keep its number, count one more real attempt, within
      // the policy's limit or the round an automatic pause granted it (`grantAttempts`).
      const counted =
        renumbered ??
        (await updateIfCondition(
          client,
          new UpdateCommand({
            TableName: tableName,
            Key: { [orderingKey]: key },
            UpdateExpression: 'SET head_attempts = head_attempts + :one',
            ConditionExpression: `head_event_id = :event AND (head_attempts < :max OR head_attempts < head_allowed_attempts) AND (attribute_not_exists(skip_event_id) OR skip_event_id <> :event)${redrive === undefined ? '' : ' AND head_redrive = :redrive'}`,
            ExpressionAttributeValues: { ':one': 1, ':event': eventId, ':max': maxAttempts, ...redriveValues },
            ReturnValues: 'ALL_NEW',
          }),
        ));
      if (counted !== undefined) {
        const head = parseItem(headSchema, counted.Attributes, tableName, key);
        return ticketOf(AttemptTicketKind.attempt, head, isKeptSequence);
      }
      const head = await readHead(key);
      if (head.head_event_id !== eventId) {
        const isStale = message !== undefined && head.head_group === message.messageGroupId && head.head_position !== undefined && head.head_position > messagePositionOf(message);
        if (isStale) return ticketOf(AttemptTicketKind.superseded, head, isKeptSequence);
        // An event numbered with its batch, after the batch failed: a new head with the number the
        // batch gave it. Only here, after a read: a batch that was delivered never comes back.
        if (head.ahead?.[eventId] !== undefined) {
          const begun = await beginAhead(key, eventId, redrive?.redrivenAt, message);
          if (begun !== undefined) return ticketOf(AttemptTicketKind.attempt, begun, false);
          // Changed between the read and the write: only a second writer on the key does that.
          throw new HeadChangedError(key, eventId, head.head_event_id);
        }
        throw new HeadChangedError(key, eventId, head.head_event_id);
      }
      return ticketOf(head.skip_event_id === eventId ? AttemptTicketKind.skipped : AttemptTicketKind.exhausted, head, isKeptSequence);
    },

    async beginBatch({ orderingKey: key, events }) {
      const [first] = events;
      if (first === undefined || events.length < 2) throw new Error('a batch holds at least two events');
      // Every event of the batch is numbered now, before it is sent: the first as the key's new
      // head, its attempt not counted (a failed batch costs no event an attempt: its events are
      // then attempted one at a time, each counted); the others kept as offsets from it. Refused
      // when the first is the key's head already (a batch that failed or crashed: one at a time
      // from here), when any of them was numbered before (a batch's fall-back), or when its message
      // is not newer than the head's: then the caller begins the first alone.
      const names = Object.fromEntries(events.map((event, index) => [`#m${index}`, event.eventId]));
      const batchPlace = headPlaceClauses(first.message, undefined);
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: [
            'SET last_sequence = if_not_exists(last_sequence, :zero) + :count',
            ', head_sequence = if_not_exists(last_sequence, :zero) + :one, ahead_base = if_not_exists(last_sequence, :zero) + :one',
            SHIFT_PREVIOUS,
            MOVE_AHEAD,
            ', ahead = :ahead, head_event_id = :event, head_attempts = :zero',
            batchPlace.setTail,
            ` REMOVE ${HEAD_REMOVALS}`,
            batchPlace.removeTail,
          ].join(''),
          ConditionExpression: [
            '(attribute_not_exists(head_event_id) OR head_event_id <> :event)',
            ...events.map((_, index) => ` AND attribute_not_exists(ahead.#m${index})`),
            first.message === undefined ? '' : ` AND ${NEWER_THAN_HEAD}`,
          ].join(''),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: {
            ':zero': 0,
            ':one': 1,
            ':count': events.length,
            ':event': first.eventId,
            ':none': '',
            ':nothing': 0,
            ':noNumbers': {},
            ':ahead': Object.fromEntries(events.slice(1).map((event, index) => [event.eventId, index + 1])),
            ...batchPlace.values,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (output === undefined) return undefined;
      const head = parseItem(headSchema, output.Attributes, tableName, key);
      const numbers = new Map(numbersOf(head.ahead, head.ahead_base).map((numbered) => [numbered.eventId, numbered.sequence]));
      const sequences = events.map((event, index) => (index === 0 ? head.head_sequence : numbers.get(event.eventId)));
      if (sequences.some((sequence) => sequence === undefined)) throw new Error(`batch of ordering key ${key} was not numbered whole`);
      const givenUp = givenUpOf(head);
      const ticket: BatchTicket = {
        sequences: sequences.filter((sequence) => sequence !== undefined),
        ...(givenUp === undefined ? {} : { givenUp }),
        ...previousOf(head),
        ...streakOf(head),
      };
      return ticket;
    },

    async findNumber({ orderingKey: key, eventId }) {
      const output = await client.send(new GetCommand({ TableName: tableName, Key: { [orderingKey]: key }, ConsistentRead: true }));
      if (output.Item === undefined) return undefined;
      const head = parseItem(headSchema, output.Item, tableName, key);
      if (head.head_event_id === eventId) return head.head_sequence;
      const { previous, earlier, ahead, movedAhead } = previousOf(head);
      return [previous, earlier, ...(ahead ?? []), ...(movedAhead ?? [])].find((numbered) => numbered?.eventId === eventId)?.sequence;
    },

    async findDelivered(keys) {
      // Strongly consistent: a message can come back right after its delivery was recorded here
      // (a crash or a timeout before its deletion), and a stale read would deliver it again.
      const itemKeys = new Map(keys.map((key) => [deliveredItemKey(key), key]));
      const items = await batchGetItems(client, {
        tableName,
        keyName: orderingKey,
        keys: [...itemKeys.keys()],
        attributes: [orderingKey, 'delivered_group', 'delivered_position', 'delivered_sequence'],
        consistency: ReadConsistency.strong,
      });
      const delivered = new Map(
        items.map((item) => {
          const itemKey = String(item[orderingKey]);
          return [itemKeys.get(itemKey), deliveredOf(parseItem(deliveredSchema, item, tableName, itemKey))] as const;
        }),
      );
      return (key) => delivered.get(key);
    },

    async recordDelivered({ orderingKey: key, message, sequence }) {
      // Refused when the item records this place or a later one of the group already: an
      // invocation that ran late, or this write repeated. Nothing to do then.
      await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: deliveredItemKey(key) },
          UpdateExpression: 'SET delivered_group = :group, delivered_position = :position, delivered_sequence = :sequence',
          ConditionExpression: 'attribute_not_exists(delivered_position) OR delivered_group <> :group OR delivered_position < :position',
          ExpressionAttributeValues: { ':group': message.messageGroupId, ':position': messagePositionOf(message), ':sequence': sequence },
        }),
      );
    },

    async findHead(key) {
      const output = await client.send(new GetCommand({ TableName: tableName, Key: { [orderingKey]: key }, ConsistentRead: true }));
      if (output.Item === undefined) return undefined;
      const head = parseItem(headSchema, output.Item, tableName, key);
      const { ahead, movedAhead, ...previous } = previousOf(head);
      const numberedAhead = [...(ahead ?? []), ...(movedAhead ?? [])];
      return { eventId: head.head_event_id, sequence: head.head_sequence, attempts: head.head_attempts, ...previous, ...(numberedAhead.length === 0 ? {} : { numberedAhead }) };
    },

    async requestSkip({ orderingKey: key, eventId, at }) {
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: 'SET skip_event_id = :event, skip_requested_at = :at',
          // Only a head that has failed on its own: after a failed batch its first event is the
          // head with no attempt counted, and the batch may have failed for a batch-mate.
          ConditionExpression: 'head_event_id = :event AND head_attempts > :zero',
          ExpressionAttributeValues: { ':event': eventId, ':at': at, ':zero': 0 },
        }),
      );
      return output !== undefined;
    },

    async recordFailure({ orderingKey: key, eventId, reason, at, failingSince, isGivingUp }) {
      // Refused when another event is head already: its own state matters, this note does not.
      await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: `SET head_last_error = :reason, failing_since = :since, failed_at = :at${isGivingUp === true ? ', head_giving_up = :event' : ''}`,
          ConditionExpression: 'head_event_id = :event',
          ExpressionAttributeValues: { ':reason': reason, ':event': eventId, ':at': at, ':since': failingSince },
        }),
      );
    },

    async recordGivenUp({ orderingKey: key, sequence, previousDelivered }) {
      // Refused when the key remembers this give-up or a later one already: a give-up repeated
      // after a crash, or an invocation that ran late.
      await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: 'SET given_up_sequence = :sequence, given_up_previous = :previous',
          ConditionExpression: 'attribute_not_exists(given_up_sequence) OR given_up_sequence < :sequence',
          ExpressionAttributeValues: { ':sequence': sequence, ':previous': previousDelivered },
        }),
      );
    },

    async recordRecovered({ orderingKey: key, failingSince }) {
      // Refused when the streak is over already, or a later one began: nothing to end then.
      await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: 'REMOVE failing_since, failed_at',
          ConditionExpression: 'failing_since = :since',
          ExpressionAttributeValues: { ':since': failingSince },
        }),
      );
    },

    async grantAttempts({ orderingKey: key, eventId, attempts, more }) {
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [orderingKey]: key },
          UpdateExpression: 'SET head_attempts_base = :attempts, head_allowed_attempts = :allowed',
          ConditionExpression: 'head_event_id = :event AND head_attempts = :attempts',
          ExpressionAttributeValues: { ':event': eventId, ':attempts': attempts, ':allowed': attempts + more },
        }),
      );
      return output !== undefined;
    },
  };
  return store;
}

/**
 * The Events table: one item per accepted event, its idempotency record, its place in the queue
 * (which tells the consumer a copy of its message) and its delivery outcome. Every change is a
 * single-item write: no transactions (half the cost, and dynalite has none).
 */
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { giveUpNumberOf } from '../core/dead-letter.js';
import { isSettledBy, OutcomeKind, type DeliveryStore, type RecordedOutcome, type SettledEvent, type SettledQuery, type SettleResult } from '../core/delivery.js';
import { fanOutRecordKey } from '../core/fan-out-id.js';
import { EventStatus, RecordOutcome, type AcceptedEventRecord, type FanOutRecord, type IngestPorts, type RecordedEvent } from '../core/ingest.js';
import type { ReplayRecord } from '../core/replay.js';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { unlessConditionFails, updateIfCondition } from './aws-clients.js';
import { batchGetItems, ReadConsistency } from './batch-get.js';
import { parseItem } from './dynamo-item.js';

/**
 * The `status` attribute of an event item: the word of the outcome that wrote it, ingest's
 * `accepted`, then the consumer's `delivered` or `dead_lettered`, so that the table, the API and
 * the logs share one vocabulary. Stored values: never change them.
 */
export const EventItemStatus = {
  accepted: EventStatus.accepted,
  delivered: OutcomeKind.delivered,
  deadLettered: OutcomeKind.deadLettered,
} as const;
export type EventItemStatus = (typeof EventItemStatus)[keyof typeof EventItemStatus];

const sequenceSchema = z.object({ sequence: z.number().int().positive().optional() });

const eventStatusSchema = z.object({
  status: z.enum(EventItemStatus).optional(),
  dead_lettered_at: z.string().optional(),
  delivered_at: z.string().optional(),
  give_up: z.number().int().positive().optional(),
  replay_id: z.string().optional(),
  sequence: z.number().int().positive().optional(),
  queue_position: z.string().optional(),
  ordering_key: z.string().optional(),
});

/** An event's item as its outcome ({@link isSettledBy}), with its number and the place ingest recorded. */
export function eventOutcomeOf(item: Record<string, unknown>, tableName: string, eventId: string): RecordedOutcome & { readonly sequence: number | undefined; readonly position: string | undefined } {
  const { status, dead_lettered_at: deadLetteredAt, delivered_at: deliveredAt, give_up: giveUp, replay_id: replayId, sequence, queue_position: position } = parseItem(eventStatusSchema, item, tableName, eventId);
  return { status, deadLetteredAt, deliveredAt, giveUp, replayId, sequence, position };
}

/** What ingest reads of an event's item before it enqueues (see `IngestPorts.findRecorded`). */
const recordedItemSchema = z.object({
  accepted_at: z.string().optional(),
  tenant_id: z.string().optional(),
  subscription_id: z.string().optional(),
  fingerprint: z.string().optional(),
});

export interface EventStore extends Pick<DeliveryStore, 'findSettled' | 'markDelivered' | 'markDeliveredUnlessSettled' | 'markDeadLettered' | 'recordSequence'> {
  /**
   * Whether the event was already delivered or dead-lettered ({@link isSettledBy}). For a redriven
   * dead letter (`redrivenAt`), its own earlier dead-lettering does not count: only a delivery, or
   * a dead-lettering after this redrive.
   */
  readonly isSettled: (query: SettledQuery) => Promise<boolean>;
  /** The sequence the consumer gave the event, when it gave one. */
  readonly findSequence: (eventId: string) => Promise<number | undefined>;
  /** For a replay: each event's status, number and recorded place, by id, eventually consistent (the events are long settled). */
  readonly readOutcomes: (eventIds: readonly string[]) => Promise<ReadonlyMap<string, ReplayRecord>>;
  readonly recordAccepted: (record: AcceptedEventRecord) => Promise<RecordOutcome>;
  readonly findFanOuts: IngestPorts['findFanOuts'];
  readonly recordFanOut: IngestPorts['recordFanOut'];
  readonly findRecorded: NonNullable<IngestPorts['findRecorded']>;
}

const fanOutItemSchema = z.object({
  fan_out_event_id: z.string(),
  tenant_id: z.string(),
  subscription_ids: z.array(z.string()),
  accepted_at: z.string(),
  fingerprint: z.string().optional(),
});

export interface EventStoreOptions {
  readonly tableName: string;
  /** How long event items are kept, from their last write. */
  readonly ttlDays: number;
}

/** The IAM actions of each method of {@link EventStore}, all on the Events table. */
export const EVENT_STORE_ACCESS = {
  // The write; a read only when it is refused, to tell a repeat of the same write.
  recordAccepted: [{ resource: 'eventsTable', actions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'] }],
  isSettled: [{ resource: 'eventsTable', actions: ['dynamodb:GetItem'] }],
  findSettled: [{ resource: 'eventsTable', actions: ['dynamodb:BatchGetItem'] }],
  markDelivered: [{ resource: 'eventsTable', actions: ['dynamodb:UpdateItem'] }],
  markDeliveredUnlessSettled: [{ resource: 'eventsTable', actions: ['dynamodb:UpdateItem'] }],
  markDeadLettered: [{ resource: 'eventsTable', actions: ['dynamodb:UpdateItem'] }],
  // A read first; the write only when the number is not there yet.
  recordSequence: [{ resource: 'eventsTable', actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] }],
  findSequence: [{ resource: 'eventsTable', actions: ['dynamodb:GetItem'] }],
  readOutcomes: [{ resource: 'eventsTable', actions: ['dynamodb:BatchGetItem'] }],
  findFanOuts: [{ resource: 'eventsTable', actions: ['dynamodb:BatchGetItem'] }],
  // A conditional put; a read of the record that stands when it is refused.
  recordFanOut: [{ resource: 'eventsTable', actions: ['dynamodb:PutItem', 'dynamodb:GetItem'] }],
  findRecorded: [{ resource: 'eventsTable', actions: ['dynamodb:BatchGetItem'] }],
} as const satisfies AccessMap<EventStore>;

export function createEventStore(client: DynamoDBDocumentClient, options: EventStoreOptions): EventStore {
  const eventKey = TABLES.events.partitionKey;
  const expiresAt = (at: string): number => Math.floor(Date.parse(at) / 1000) + options.ttlDays * 86_400;

  /** The sequence recorded on the event's item, if any. */
  const readSequence = async (eventId: string, consistency: ReadConsistency): Promise<number | undefined> => {
    const output = await client.send(
      new GetCommand({
        TableName: options.tableName,
        Key: { [eventKey]: eventId },
        ProjectionExpression: '#sequence',
        ExpressionAttributeNames: { '#sequence': 'sequence' },
        ConsistentRead: consistency === ReadConsistency.strong,
      }),
    );
    return parseItem(sequenceSchema, output.Item ?? {}, options.tableName, eventId).sequence;
  };

  const settle = async (input: SettledEvent, outcome: Record<string, string | number>, unlessSettled = false, removals: readonly string[] = []): Promise<SettleResult | undefined> => {
    // A replay's copy's outcome names its replay: what settles that replay's other copies (isSettledBy).
    const replayId = input.queued.redrive?.replay === true ? input.queued.redrive.replay_id : undefined;
    const fields = replayId === undefined ? outcome : { ...outcome, replay_id: replayId };
    const values: Record<string, string | number> = {
      ':subscription': input.queued.event.subscription_id,
      ':tenant': input.queued.event.tenant_id,
      ':key': input.queued.ordering_key,
      ':group': input.queued.message_group_id,
      ':attempts': input.attempts,
      ':expires': expiresAt(input.at),
    };
    const assignments = ['subscription_id = :subscription', 'tenant_id = :tenant', 'ordering_key = :key', 'message_group_id = :group', 'attempts = :attempts', 'expires_at = :expires'];
    if (input.sequence !== undefined) {
      assignments.push('#sequence = :sequence');
      values[':sequence'] = input.sequence;
    }
    for (const [name, value] of Object.entries(fields)) {
      assignments.push(`#${name} = :${name}`);
      values[`:${name}`] = value;
    }
    // Settled as isSettledBy says: delivered, or dead-lettered (for a redriven copy, by a give-up
    // numbered above the one it came from: its own earlier dead-lettering does not settle it, and its
    // late delivery is recorded over it).
    const redrivenAt = input.queued.redrive?.redriven_at;
    const isReplay = input.queued.redrive?.replay === true;
    const giveUp = isReplay ? undefined : input.queued.redrive?.give_up;
    if (unlessSettled) values[':accepted'] = EventItemStatus.accepted;
    if (unlessSettled && replayId !== undefined) {
      values[':deadLettered'] = EventItemStatus.deadLettered;
      values[':delivered'] = EventItemStatus.delivered;
    } else if (unlessSettled && redrivenAt !== undefined) {
      values[':deadLettered'] = EventItemStatus.deadLettered;
      values[':redrivenAt'] = redrivenAt;
      if (isReplay) values[':delivered'] = EventItemStatus.delivered;
      if (giveUp !== undefined) values[':giveUp'] = giveUp;
    }
    // A give-up recorded before the numbers has none: its time decides, as it did.
    const notAfterRedrive = giveUp === undefined ? '#deadLetteredAt < :redrivenAt' : '(attribute_exists(#giveUp) AND #giveUp <= :giveUp) OR (attribute_not_exists(#giveUp) AND #deadLetteredAt < :redrivenAt)';
    const unlessSettledCondition =
      replayId !== undefined
        ? 'attribute_not_exists(#status) OR #status = :accepted OR ((#status = :delivered OR #status = :deadLettered) AND (attribute_not_exists(#replay_id) OR #replay_id <> :replay_id))'
        : redrivenAt === undefined
          ? 'attribute_not_exists(#status) OR #status = :accepted'
          : `attribute_not_exists(#status) OR #status = :accepted OR (#status = :deadLettered AND (${notAfterRedrive}))${isReplay ? ' OR (#status = :delivered AND #deliveredAt < :redrivenAt)' : ''}`;
    const output = await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: options.tableName,
        Key: { [eventKey]: input.queued.event.event_id },
        UpdateExpression: `SET ${assignments.join(', ')}${removals.length === 0 ? '' : ` REMOVE ${removals.map((name) => `#${name}`).join(', ')}`}`,
        ...(unlessSettled ? { ConditionExpression: unlessSettledCondition } : {}),
        ExpressionAttributeNames: {
          ...(input.sequence === undefined ? {} : { '#sequence': 'sequence' }),
          ...(unlessSettled && redrivenAt !== undefined && replayId === undefined ? { '#deadLetteredAt': 'dead_lettered_at' } : {}),
          ...(unlessSettled && redrivenAt !== undefined && isReplay && replayId === undefined ? { '#deliveredAt': 'delivered_at' } : {}),
          ...(unlessSettled && giveUp !== undefined && replayId === undefined ? { '#giveUp': 'give_up' } : {}),
          ...Object.fromEntries([...Object.keys(fields), ...removals].map((name) => [`#${name}`, name])),
        },
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_OLD',
      }),
    );
    return output === undefined ? undefined : { wasAccepted: output.Attributes?.accepted_at !== undefined };
  };

  /**
   * The outcome of a refused acceptance: a conflict when the record holds another fingerprint (the
   * same id sent with another type or payload). Else, for one that carried a place in the queue, the
   * same place on the record means this very write landed before (the SDK repeats a write whose answer it lost), as
   * no two messages share a place. Its status then tells how the first landing went, as well as
   * it can: settled since is taken for settled before, so the event is not counted (the lag's
   * depth may then read one low until the group drains). Strongly consistent: the write was just
   * refused because of what this read must see.
   */
  const repeatedOutcome = async (record: AcceptedEventRecord): Promise<RecordOutcome> => {
    // Nothing to tell apart: a record without a place or a fingerprint is a duplicate, unread.
    if (record.queuePosition === undefined && record.fingerprint === undefined) return RecordOutcome.alreadyRecorded;
    const output = await client.send(
      new GetCommand({
        TableName: options.tableName,
        Key: { [eventKey]: record.eventId },
        ProjectionExpression: '#status, queue_position, fingerprint',
        ExpressionAttributeNames: { '#status': 'status' },
        ConsistentRead: true,
      }),
    );
    const item = parseItem(eventStatusSchema.extend({ fingerprint: z.string().optional() }), output.Item ?? {}, options.tableName, record.eventId);
    if (record.fingerprint !== undefined && item.fingerprint !== undefined && item.fingerprint !== record.fingerprint) return RecordOutcome.conflict;
    if (record.queuePosition === undefined || item.queue_position !== record.queuePosition) return RecordOutcome.alreadyRecorded;
    return item.status === EventItemStatus.accepted ? RecordOutcome.recorded : RecordOutcome.recordedSettled;
  };

  const toFanOut = (item: Record<string, unknown>, key: string): FanOutRecord => {
    const parsed = parseItem(fanOutItemSchema, item, options.tableName, key);
    return { eventId: parsed.fan_out_event_id, tenantId: parsed.tenant_id, subscriptionIds: parsed.subscription_ids, acceptedAt: parsed.accepted_at, ...(parsed.fingerprint === undefined ? {} : { fingerprint: parsed.fingerprint }) };
  };

  return {
    async findFanOuts(keys) {
      // Strongly consistent: a resend right after the first acceptance must find its record.
      const items = await batchGetItems(client, { tableName: options.tableName, keyName: eventKey, keys, attributes: [eventKey, 'fan_out_event_id', 'tenant_id', 'subscription_ids', 'accepted_at', 'fingerprint'], consistency: ReadConsistency.strong });
      return new Map(items.map((item) => [String(item[eventKey]), toFanOut(item, String(item[eventKey]))]));
    },

    async findRecorded(eventIds) {
      // Strongly consistent: a resend right after the first acceptance must find its record. Only
      // ingest's records count (`accepted_at`): the consumer may have written an item first.
      const items = await batchGetItems(client, { tableName: options.tableName, keyName: eventKey, keys: eventIds, attributes: [eventKey, 'accepted_at', 'tenant_id', 'subscription_id', 'fingerprint'], consistency: ReadConsistency.strong });
      return new Map(
        items.flatMap((item): Array<[string, RecordedEvent]> => {
          const key = String(item[eventKey]);
          const parsed = parseItem(recordedItemSchema, item, options.tableName, key);
          if (parsed.accepted_at === undefined) return [];
          return [[key, { tenantId: parsed.tenant_id, subscriptionId: parsed.subscription_id, fingerprint: parsed.fingerprint }]];
        }),
      );
    },

    async recordFanOut(record) {
      const key = fanOutRecordKey(record.eventId, record.tenantId);
      const written = await unlessConditionFails(
        client.send(new PutCommand({
          TableName: options.tableName,
          Item: {
            [eventKey]: key,
            fan_out_event_id: record.eventId,
            tenant_id: record.tenantId,
            subscription_ids: [...record.subscriptionIds],
            accepted_at: record.acceptedAt,
            expires_at: expiresAt(record.acceptedAt),
            ...(record.fingerprint === undefined ? {} : { fingerprint: record.fingerprint }),
          },
          ConditionExpression: 'attribute_not_exists(#key)',
          ExpressionAttributeNames: { '#key': eventKey },
        })),
      );
      if (written !== undefined) return record;
      // Another request recorded it first: its subscriptions stand.
      const output = await client.send(new GetCommand({ TableName: options.tableName, Key: { [eventKey]: key }, ConsistentRead: true }));
      return toFanOut(output.Item ?? {}, key);
    },

    async recordAccepted(record) {
      const position = record.queuePosition === undefined ? {} : { ':position': record.queuePosition };
      const fingerprint = record.fingerprint === undefined ? {} : { ':fingerprint': record.fingerprint };
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: options.tableName,
          Key: { [eventKey]: record.eventId },
          // The consumer may have settled the event already (it can be delivered within
          // milliseconds of being enqueued): keep its status, add what ingest knows. And keep the
          // key it was settled under: a resend of an event whose first request failed after its
          // send, answered after a change of ordering, keys its copy anew, and that copy is skipped.
          UpdateExpression: `SET accepted_at = :accepted, subscription_id = :subscription, tenant_id = :tenant, ordering_key = if_not_exists(ordering_key, :key), message_group_id = if_not_exists(message_group_id, :group), #status = if_not_exists(#status, :status), expires_at = if_not_exists(expires_at, :expires)${record.queuePosition === undefined ? '' : ', queue_position = :position'}${record.fingerprint === undefined ? '' : ', fingerprint = :fingerprint'}`,
          ConditionExpression: 'attribute_not_exists(accepted_at)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':accepted': record.acceptedAt,
            ':subscription': record.subscriptionId,
            ':tenant': record.tenantId,
            ':key': record.orderingKey,
            ':group': record.messageGroupId,
            ':status': EventItemStatus.accepted,
            ':expires': expiresAt(record.acceptedAt),
            ...position,
            ...fingerprint,
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      if (output !== undefined) return output.Attributes?.status === undefined ? RecordOutcome.recorded : RecordOutcome.recordedSettled;
      return repeatedOutcome(record);
    },

    async isSettled(query) {
      const { eventId } = query;
      const output = await client.send(
        new GetCommand({
          TableName: options.tableName,
          Key: { [eventKey]: eventId },
          ProjectionExpression: '#status, dead_lettered_at, delivered_at, give_up, replay_id',
          ExpressionAttributeNames: { '#status': 'status' },
          ConsistentRead: true,
        }),
      );
      return isSettledBy(eventOutcomeOf(output.Item ?? {}, options.tableName, eventId), query);
    },

    async findSettled(events) {
      // Strongly consistent: a message can come back right after its delivery was recorded (a
      // crash or timeout before its deletion), and a stale read would deliver it again.
      const items = await batchGetItems(client, {
        tableName: options.tableName,
        keyName: eventKey,
        keys: events.map((event) => event.eventId),
        attributes: [eventKey, 'status', 'dead_lettered_at', 'delivered_at', 'give_up', 'replay_id', 'sequence', 'queue_position'],
        consistency: ReadConsistency.strong,
      });
      const outcomes = new Map(
        items.map((item) => {
          const eventId = String(item[eventKey]);
          return [eventId, eventOutcomeOf(item, options.tableName, eventId)] as const;
        }),
      );
      return Object.assign((query: SettledQuery) => isSettledBy(outcomes.get(query.eventId), query), {
        sequenceOf: (eventId: string) => outcomes.get(eventId)?.sequence,
        positionOf: (eventId: string) => outcomes.get(eventId)?.position,
      });
    },

    async recordSequence({ eventId, sequence }) {
      // Usually the event was settled with this number already (a delivery writes it): a read,
      // eventually consistent, costs half a read unit where the write costs a write unit, five times
      // the price. A stale read only leads to the write that would have been made anyway, and a
      // number once given never changes, so an equal number read is final.
      if ((await readSequence(eventId, ReadConsistency.eventual)) === sequence) return;
      await client.send(
        new UpdateCommand({
          TableName: options.tableName,
          Key: { [eventKey]: eventId },
          UpdateExpression: 'SET #sequence = :sequence',
          ExpressionAttributeNames: { '#sequence': 'sequence' },
          ExpressionAttributeValues: { ':sequence': sequence },
        }),
      );
    },

    findSequence: (eventId) => readSequence(eventId, ReadConsistency.strong),

    async readOutcomes(eventIds) {
      const items = await batchGetItems(client, {
        tableName: options.tableName,
        keyName: eventKey,
        keys: [...new Set(eventIds)],
        attributes: [eventKey, 'status', 'sequence', 'queue_position', 'give_up', 'ordering_key'],
        consistency: ReadConsistency.eventual,
      });
      return new Map(
        items.map((item) => {
          const eventId = String(item[eventKey]);
          const { status, sequence, queue_position: queuePosition, give_up: giveUp, ordering_key: orderingKey } = parseItem(eventStatusSchema, item, options.tableName, eventId);
          return [eventId, { status, sequence, queuePosition, giveUp, orderingKey }] as const;
        }),
      );
    },

    markDelivered: async (input) => {
      const result = await settle(input, { status: EventItemStatus.delivered, delivered_at: input.at });
      if (result === undefined) throw new Error('an unconditional write was refused');
      return result;
    },

    markDeliveredUnlessSettled: (input) => settle(input, { status: EventItemStatus.delivered, delivered_at: input.at }, true),

    // The dead letter itself is in the store of dead letters; this records the outcome, whose
    // number tells a redriven copy from the give-up it came from (isSettled); a copy redriven before
    // the numbers gives none, and its time decides.
    markDeadLettered: async (input) => {
      const giveUp = giveUpNumberOf(input.queued);
      const fields = { status: EventItemStatus.deadLettered, dead_lettered_at: input.at, reason: input.reason };
      const result = await (giveUp === undefined ? settle(input, fields, false, ['give_up']) : settle(input, { ...fields, give_up: giveUp }));
      if (result === undefined) throw new Error('an unconditional write was refused');
      return result;
    },
  };
}

/**
 * Parked events (see `core/park.ts`) in the DeadLetters table, under each subscription beside its
 * dead letters but never among them: their sort keys start with `!` (as kept events' do), before
 * the count item and every dead letter's position. Per group, its state at `!park#<group>` and
 * each parked event at `!park#<group>#<place>` (places are fixed-width digits: the store's order is
 * the group's). No TTL: a parked event stays until resume sends it back, however long the pause.
 * An event too large for an item is kept in the payload bucket, as a dead letter is.
 *
 * Which groups have a park is marked twice, each mark holding the park's id: on the subscription
 * (`parked_groups.<group>`), which the consumer reads with every batch, and on the group's lag item
 * (`parked_subscriptions.<subscription>`), which keeps the group in the index of active groups for
 * the lag job to find. A mark is made before its state and removed after it, only if it still
 * holds the same park's id: a park begun again meanwhile keeps its marks.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { PayloadStore } from '../core/dead-letter.js';
import { encodeQueuedEvent, readQueuedEvent } from '../core/event.js';
import { lagShardOf } from '../core/lag.js';
import { isParkOpen, newParkId, type ParkedEvent, type ParkState, type ParkStore } from '../core/park.js';
import { PAYLOAD_OBJECT_PREFIX, TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { unlessConditionFails } from './aws-clients.js';
import { MAX_INLINE_EVENT_BYTES, UnreadableDeadLetterError } from './dead-letter-store.js';
import { parseItem } from './dynamo-item.js';
import { PAYLOAD_BUCKET_ACCESS } from './payload-bucket.js';

const PARK_PREFIX = '!park#';

/** The attribute of each mark: a map from group (on a subscription) or subscription (on a group) to the park's id. */
export const PARKED_GROUPS_ATTRIBUTE = 'parked_groups';
export const PARKED_SUBSCRIPTIONS_ATTRIBUTE = 'parked_subscriptions';

const stateItemSchema = z.object({
  last_parked: z.string(),
  parking_through: z.string(),
  returned_through: z.string(),
  park_id: z.string().min(1),
});

const parkedItemSchema = z.object({
  subscription_id: z.string(),
  place: z.string().min(1),
  event_id: z.string(),
  queued_event: z.string().optional(),
  payload_key: z.string().optional(),
});

/** A group's marks: which park of it each names (see the file's comment). */
export const parkMarksSchema = z.record(z.string(), z.string());

function stateKeyOf(messageGroupId: string): string {
  return `${PARK_PREFIX}${messageGroupId}`;
}

function eventsPrefixOf(messageGroupId: string): string {
  return `${PARK_PREFIX}${messageGroupId}#`;
}

/** The park store, and how a resume ends a mark whose state is gone (a crash between the two). */
export type DynamoParkStore = ParkStore & {
  /** Removes a group's marks of the park `parkId`, if they still name it. */
  readonly unmark: (input: { readonly subscriptionId: string; readonly messageGroupId: string; readonly parkId: string }) => Promise<void>;
};

/** The IAM actions of each method of {@link DynamoParkStore}: the DeadLetters table, the marks, the payload bucket. */
export const PARK_STORE_ACCESS = {
  readState: [{ resource: 'deadLettersTable', actions: ['dynamodb:GetItem'] }],
  // The marks (a new park), each parked event, the state; when refused (a repeat), a read of it.
  park: [
    { resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] },
    { resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] },
    { resource: 'deadLettersTable', actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'] },
    ...PAYLOAD_BUCKET_ACCESS.put,
  ],
  noteReturned: [{ resource: 'deadLettersTable', actions: ['dynamodb:UpdateItem'] }],
  readParked: [{ resource: 'deadLettersTable', actions: ['dynamodb:Query'] }, ...PAYLOAD_BUCKET_ACCESS.get],
  removeParked: [{ resource: 'deadLettersTable', actions: ['dynamodb:DeleteItem'] }, ...PAYLOAD_BUCKET_ACCESS.remove],
  end: [
    { resource: 'deadLettersTable', actions: ['dynamodb:DeleteItem'] },
    { resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] },
    { resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] },
  ],
  unmark: [
    { resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] },
    { resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] },
  ],
} as const satisfies AccessMap<DynamoParkStore>;

export interface ParkStoreOptions {
  readonly tables: { readonly deadLetters: string; readonly subscriptions: string; readonly groups: string };
  readonly payloads: PayloadStore;
}

export function createParkStore(client: DynamoDBDocumentClient, options: ParkStoreOptions): DynamoParkStore {
  const { tables } = options;
  const { partitionKey, sortKey } = TABLES.deadLetters;
  const keyOf = (subscriptionId: string, position: string) => ({ [partitionKey]: subscriptionId, [sortKey]: position });
  const subscriptionKey = (subscriptionId: string) => ({ [TABLES.subscriptions.partitionKey]: subscriptionId });
  const groupKey = (messageGroupId: string) => ({ [TABLES.groups.partitionKey]: messageGroupId });

  const stateOf = (attributes: unknown, what: string): ParkState => {
    const item = parseItem(stateItemSchema, attributes, tables.deadLetters, what);
    return { lastParked: item.last_parked, parkingThrough: item.parking_through, returnedThrough: item.returned_through, parkId: item.park_id };
  };

  const readState: ParkStore['readState'] = async ({ subscriptionId, messageGroupId }) => {
    const output = await client.send(new GetCommand({ TableName: tables.deadLetters, Key: keyOf(subscriptionId, stateKeyOf(messageGroupId)), ConsistentRead: true }));
    return output.Item === undefined ? undefined : stateOf(output.Item, `${subscriptionId} ${stateKeyOf(messageGroupId)}`);
  };

  /**
   * Sets `<attribute>.<member> = parkId` on an item: the map is made first when missing (DynamoDB
   * sets no member of a map that is not there). `mustExist` refuses an item that is not there.
   */
  const setMark = async (
    table: string,
    key: Record<string, string>,
    attribute: string,
    member: string,
    parkId: string,
    also: { readonly mustExist?: boolean; readonly set?: { readonly clause: string; readonly values: Record<string, string> } },
  ): Promise<void> => {
    await client.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: `SET #marks = if_not_exists(#marks, :none)${also.set === undefined ? '' : `, ${also.set.clause}`}`,
        ...(also.mustExist === true ? { ConditionExpression: `attribute_exists(#key)` } : {}),
        ExpressionAttributeNames: { '#marks': attribute, ...(also.mustExist === true ? { '#key': Object.keys(key)[0] ?? '' } : {}) },
        ExpressionAttributeValues: { ':none': {}, ...also.set?.values },
      }),
    );
    await client.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET #marks.#member = :park',
        ExpressionAttributeNames: { '#marks': attribute, '#member': member },
        ExpressionAttributeValues: { ':park': parkId },
      }),
    );
  };

  /** Removes `<attribute>.<member>` if it still names `parkId`. */
  const removeMark = async (table: string, key: Record<string, string>, attribute: string, member: string, parkId: string): Promise<void> => {
    await unlessConditionFails(
      client.send(
        new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: 'REMOVE #marks.#member',
          ConditionExpression: '#marks.#member = :park',
          ExpressionAttributeNames: { '#marks': attribute, '#member': member },
          ExpressionAttributeValues: { ':park': parkId },
        }),
      ),
    );
  };

  const unmark: DynamoParkStore['unmark'] = async ({ subscriptionId, messageGroupId, parkId }) => {
    // The state is gone by now, so the order is for what a crash leaves: a group's mark alone is
    // found by the lag job and removed once old (`isAbandonedMark`); a subscription's alone would not be.
    await removeMark(tables.subscriptions, subscriptionKey(subscriptionId), PARKED_GROUPS_ATTRIBUTE, messageGroupId, parkId);
    await removeMark(tables.groups, groupKey(messageGroupId), PARKED_SUBSCRIPTIONS_ATTRIBUTE, subscriptionId, parkId);
  };

  const putEvent = async (subscriptionId: string, messageGroupId: string, event: ParkedEvent, parkedAt: string): Promise<void> => {
    const position = `${eventsPrefixOf(messageGroupId)}${event.place}`;
    const body = encodeQueuedEvent(event.queued);
    const isInline = Buffer.byteLength(body, 'utf8') <= MAX_INLINE_EVENT_BYTES;
    // Under the dead letters' prefix, where no dead letter's object can be (theirs go on with a hex position).
    const payloadKey = isInline ? undefined : `${PAYLOAD_OBJECT_PREFIX}${encodeURIComponent(subscriptionId)}/${encodeURIComponent(position)}.json`;
    if (payloadKey !== undefined) await options.payloads.put(payloadKey, body);
    await client.send(
      new PutCommand({
        TableName: tables.deadLetters,
        Item: {
          ...keyOf(subscriptionId, position),
          place: event.place,
          event_id: event.queued.event.event_id,
          parked_at: parkedAt,
          ...(payloadKey === undefined ? { queued_event: body } : { payload_key: payloadKey }),
        },
      }),
    );
  };

  return {
    readState,

    async park({ subscriptionId, messageGroupId, events, state, parkedAt }) {
      const isOpen = state !== undefined && isParkOpen(state);
      const parkId = isOpen ? state.parkId : newParkId(parkedAt, randomUUID());
      if (!isOpen) {
        // Marked before the state: a subscription never lacks the mark of an open park. The group's
        // first, so that the subscription's mark never stands without it for the lag job to find.
        // The group's mark puts it in the index of active groups, whatever its counts say.
        const inIndex = { clause: 'lag_shard = if_not_exists(lag_shard, :shard)', values: { ':shard': lagShardOf(messageGroupId) } };
        await setMark(tables.groups, groupKey(messageGroupId), PARKED_SUBSCRIPTIONS_ATTRIBUTE, subscriptionId, parkId, { set: inIndex });
        await setMark(tables.subscriptions, subscriptionKey(subscriptionId), PARKED_GROUPS_ATTRIBUTE, messageGroupId, parkId, { mustExist: true });
      }
      const last = events.at(-1)?.place ?? events[0].place;
      const stateKey = keyOf(subscriptionId, stateKeyOf(messageGroupId));
      // What is about to be written, noted first: a park cut short here is finished when its
      // messages come back (see `ParkState.parkingThrough`), and resume sends none of it meanwhile.
      await unlessConditionFails(
        client.send(
          new UpdateCommand({
            TableName: tables.deadLetters,
            Key: stateKey,
            UpdateExpression:
              'SET parking_through = :last, park_id = :park, last_parked = if_not_exists(last_parked, :none), returned_through = if_not_exists(returned_through, :none), parked_at = if_not_exists(parked_at, :at)',
            ConditionExpression: 'attribute_not_exists(parking_through) OR parking_through < :last',
            ExpressionAttributeValues: { ':last': last, ':park': parkId, ':none': '', ':at': parkedAt },
          }),
        ),
      );
      await Promise.all(events.map((event) => putEvent(subscriptionId, messageGroupId, event, parkedAt)));
      const output = await unlessConditionFails(
        client.send(
          new UpdateCommand({
            TableName: tables.deadLetters,
            Key: stateKey,
            UpdateExpression: 'SET last_parked = :last',
            // Never lowered: a repeat after a crash finds its own place there, and changes nothing.
            ConditionExpression: 'last_parked < :last',
            ExpressionAttributeValues: { ':last': last },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      if (output?.Attributes !== undefined) return stateOf(output.Attributes, `${subscriptionId} ${stateKeyOf(messageGroupId)}`);
      const stands = await readState({ subscriptionId, messageGroupId });
      if (stands === undefined) throw new Error(`the park state of group ${messageGroupId} of ${subscriptionId} refused a write and is not there`);
      return stands;
    },

    async noteReturned({ subscriptionId, messageGroupId, place }) {
      const output = await unlessConditionFails(
        client.send(
          new UpdateCommand({
            TableName: tables.deadLetters,
            Key: keyOf(subscriptionId, stateKeyOf(messageGroupId)),
            UpdateExpression: 'SET returned_through = :place',
            ConditionExpression: 'attribute_exists(last_parked) AND returned_through < :place',
            ExpressionAttributeValues: { ':place': place },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return output?.Attributes === undefined ? undefined : stateOf(output.Attributes, `${subscriptionId} ${stateKeyOf(messageGroupId)}`);
    },

    async readParked({ subscriptionId, messageGroupId, through, limit }) {
      const output = await client.send(
        new QueryCommand({
          TableName: tables.deadLetters,
          KeyConditionExpression: '#subscription = :subscription AND #position BETWEEN :from AND :through',
          ExpressionAttributeNames: { '#subscription': partitionKey, '#position': sortKey },
          ExpressionAttributeValues: { ':subscription': subscriptionId, ':from': eventsPrefixOf(messageGroupId), ':through': `${eventsPrefixOf(messageGroupId)}${through}` },
          ScanIndexForward: true,
          Limit: limit,
          ConsistentRead: true,
        }),
      );
      return Promise.all(
        (output.Items ?? []).map(async (raw): Promise<ParkedEvent> => {
          const item = parseItem(parkedItemSchema, raw, tables.deadLetters, `${subscriptionId} ${String(raw[sortKey])}`);
          const body = item.payload_key === undefined ? item.queued_event : await options.payloads.get(item.payload_key);
          if (body === undefined) throw new UnreadableDeadLetterError(subscriptionId, item.event_id, 'is parked with neither its event nor a payload key');
          const read = readQueuedEvent(body);
          if ('reason' in read) throw new UnreadableDeadLetterError(subscriptionId, item.event_id, `is parked as no readable event: ${read.reason}`);
          return { place: item.place, queued: read.queued, ...(item.payload_key === undefined ? {} : { payloadKey: item.payload_key }) };
        }),
      );
    },

    async removeParked({ subscriptionId, messageGroupId, events }) {
      await Promise.all(
        events.map(async (event) => {
          await client.send(new DeleteCommand({ TableName: tables.deadLetters, Key: keyOf(subscriptionId, `${eventsPrefixOf(messageGroupId)}${event.place}`) }));
          // The item first: a crash between leaves an object nobody points at, never an item pointing at nothing.
          if (event.payloadKey !== undefined) await options.payloads.remove(event.payloadKey);
        }),
      );
    },

    async end({ subscriptionId, messageGroupId, state }) {
      const removed = await unlessConditionFails(
        client.send(
          new DeleteCommand({
            TableName: tables.deadLetters,
            Key: keyOf(subscriptionId, stateKeyOf(messageGroupId)),
            ConditionExpression: 'last_parked = :last AND parking_through = :parking AND returned_through = :returned AND park_id = :park',
            ExpressionAttributeValues: { ':last': state.lastParked, ':parking': state.parkingThrough, ':returned': state.returnedThrough, ':park': state.parkId },
          }),
        ),
      );
      if (removed === undefined) return false;
      await unmark({ subscriptionId, messageGroupId, parkId: state.parkId });
      return true;
    },

    unmark,
  };
}

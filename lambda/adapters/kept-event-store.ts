/**
 * Kept events in the DeadLetters table (see `core/kept-event.ts`), under each subscription beside
 * its dead letters but never among them: their sort keys start with `!`, which sorts before the
 * count item (`#count`) and every dead letter's position (a hex digit first), and every list of
 * dead letters starts after `$`. One item per enqueued message (`!event#<accepted_at>#<place of its
 * first event>`): its SQS body gzipped, so that a pack's events share one item and DynamoDB bills
 * the bytes once, compressed; one per run the consumer numbered (`!numbers#<key digest>#<place of
 * its first event>`). A message too large for an item even compressed is kept in the payload
 * bucket under the dead letters' prefix, as a dead letter is.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { PayloadStore } from '../core/dead-letter.js';
import { readQueuedMessage } from '../core/event.js';
import type { KeptEvent, KeptEventStore, RunNumbers } from '../core/kept-event.js';
import { messageGroupIdFor } from '../core/routing.js';
import { PAYLOAD_OBJECT_PREFIX, TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { MAX_INLINE_EVENT_BYTES, UnreadableDeadLetterError } from './dead-letter-store.js';
import { parseItem } from './dynamo-item.js';
import { PAYLOAD_BUCKET_ACCESS } from './payload-bucket.js';

const EVENT_PREFIX = '!event#';
const NUMBERS_PREFIX = '!numbers#';
/** Sorts after `#`, so `<prefix><time>$` bounds every item of that time from above. */
const AFTER_TIME = '$';

const eventItemSchema = z.object({
  subscription_id: z.string(),
  position: z.string().startsWith(EVENT_PREFIX),
  event_ids: z.array(z.string()).min(1),
  /** Each event's place in its group, in order, when SQS gave its message one. */
  queue_positions: z.array(z.string()).optional(),
  /** The message's SQS body, gzipped; or, too large for an item, where the payload bucket keeps it (gzipped too). */
  body_gz: z.instanceof(Uint8Array).optional(),
  payload_key: z.string().optional(),
});

/** What `newestAcceptedAt` projects of an event's item: its sort key, which begins with its acceptance time. */
const newestItemSchema = z.object({ position: z.string().startsWith(EVENT_PREFIX) });

const numbersItemSchema = z.object({
  position: z.string().startsWith(NUMBERS_PREFIX),
  ordering_key: z.string(),
  first_position: z.string(),
  first_sequence: z.number().int().positive(),
  event_ids: z.array(z.string()).min(1),
});

/** A kept event's place in its subscription: its acceptance, then its message's place (or its id, when SQS gave none). */
function eventPositionOf(event: KeptEvent): string {
  return `${EVENT_PREFIX}${event.queued.accepted_at}#${event.queuePosition ?? `~${event.queued.event.event_id}`}`;
}

/** The group part of a queue position (`<group>/<place>`), its slash included. */
function groupPartOf(queuePosition: string): string {
  return queuePosition.slice(0, queuePosition.lastIndexOf('/') + 1);
}

function numbersPrefixOf(orderingKey: string): string {
  return `${NUMBERS_PREFIX}${messageGroupIdFor(orderingKey, undefined)}#`;
}

export interface KeptEventStoreOptions {
  readonly tableName: string;
  /** Days kept (DynamoDB TTL): from acceptance for a body, from numbering for a run's numbers. */
  readonly retentionDays: number;
  readonly payloads: PayloadStore;
}

/** The IAM actions of each method of {@link KeptEventStore} on the DeadLetters table and the payload bucket. */
export const KEPT_EVENT_STORE_ACCESS = {
  keep: [{ resource: 'deadLettersTable', actions: ['dynamodb:PutItem'] }, ...PAYLOAD_BUCKET_ACCESS.put],
  keepNumbers: [{ resource: 'deadLettersTable', actions: ['dynamodb:PutItem'] }],
  findNumbers: [{ resource: 'deadLettersTable', actions: ['dynamodb:Query'] }],
  readWindow: [{ resource: 'deadLettersTable', actions: ['dynamodb:Query'] }, ...PAYLOAD_BUCKET_ACCESS.get],
  newestAcceptedAt: [{ resource: 'deadLettersTable', actions: ['dynamodb:Query'] }],
} as const satisfies AccessMap<KeptEventStore>;

export function createKeptEventStore(client: DynamoDBDocumentClient, options: KeptEventStoreOptions): KeptEventStore {
  const { tableName } = options;
  const { partitionKey, sortKey } = TABLES.deadLetters;
  const expiresAt = (at: string): number => Math.floor(Date.parse(at) / 1000) + options.retentionDays * 86_400;

  const toKept = async (item: z.infer<typeof eventItemSchema>): Promise<(KeptEvent & { readonly cursor: string })[]> => {
    const [first] = item.event_ids;
    const unreadable = (problem: string) => new UnreadableDeadLetterError(item.subscription_id, first ?? '', problem);
    const compressed = item.payload_key === undefined ? item.body_gz : Buffer.from(await options.payloads.get(item.payload_key), 'base64');
    if (compressed === undefined) throw unreadable('is kept with neither its message nor a payload key');
    const read = readQueuedMessage(gunzipSync(compressed).toString('utf8'));
    if ('reason' in read) throw unreadable(`is kept as no readable message: ${read.reason}`);
    return read.items.map((message, index) => {
      if (!('queued' in message)) throw unreadable(`is kept with an unreadable event: ${message.reason}`);
      return { queued: message.queued, queuePosition: item.queue_positions?.[index], cursor: item.position };
    });
  };

  return {
    async keep({ events, body }) {
      const [first] = events;
      const subscriptionId = first.queued.event.subscription_id;
      const position = eventPositionOf(first);
      const compressed = gzipSync(body);
      const isInline = compressed.byteLength <= MAX_INLINE_EVENT_BYTES;
      // Under the dead letters' prefix, where no dead letter's key can be: theirs go on with a position, a hex digit first.
      const payloadKey = isInline ? undefined : `${PAYLOAD_OBJECT_PREFIX}${encodeURIComponent(subscriptionId)}/${encodeURIComponent(position)}.gz.b64`;
      if (payloadKey !== undefined) await options.payloads.put(payloadKey, compressed.toString('base64'));
      const positions = events.map((event) => event.queuePosition);
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            [partitionKey]: subscriptionId,
            [sortKey]: position,
            event_ids: events.map((event) => event.queued.event.event_id),
            ...(positions.every((place) => place !== undefined) ? { queue_positions: positions } : {}),
            ...(payloadKey === undefined ? { body_gz: new Uint8Array(compressed) } : { payload_key: payloadKey }),
            expires_at: expiresAt(first.queued.accepted_at),
          },
        }),
      );
    },

    async keepNumbers({ subscriptionId, orderingKey, firstPosition, firstSequence, eventIds, at }) {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            [partitionKey]: subscriptionId,
            [sortKey]: `${numbersPrefixOf(orderingKey)}${firstPosition}`,
            ordering_key: orderingKey,
            first_position: firstPosition,
            first_sequence: firstSequence,
            event_ids: [...eventIds],
            expires_at: expiresAt(at),
          },
        }),
      );
    },

    async findNumbers({ subscriptionId, orderingKey, queuePosition }) {
      const prefix = numbersPrefixOf(orderingKey);
      const output = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#subscription = :subscription AND #position BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#subscription': partitionKey, '#position': sortKey },
          ExpressionAttributeValues: { ':subscription': subscriptionId, ':from': `${prefix}${groupPartOf(queuePosition)}`, ':to': `${prefix}${queuePosition}` },
          ScanIndexForward: false,
          Limit: 1,
          ConsistentRead: true,
        }),
      );
      const item = output.Items?.[0];
      if (item === undefined) return undefined;
      const numbers = parseItem(numbersItemSchema, item, tableName, `${orderingKey} ${String(item[sortKey])}`);
      const run: RunNumbers = { orderingKey: numbers.ordering_key, firstPosition: numbers.first_position, firstSequence: numbers.first_sequence, eventIds: numbers.event_ids };
      // Another key of the same digest cannot be, but a key is compared whole rather than trusted.
      return run.orderingKey === orderingKey ? run : undefined;
    },

    async newestAcceptedAt(subscriptionId) {
      const output = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#subscription = :subscription AND begins_with(#position, :events)',
          ExpressionAttributeNames: { '#subscription': partitionKey, '#position': sortKey },
          ExpressionAttributeValues: { ':subscription': subscriptionId, ':events': EVENT_PREFIX },
          ProjectionExpression: '#position',
          ScanIndexForward: false,
          Limit: 1,
          ConsistentRead: true,
        }),
      );
      const item = output.Items?.[0];
      if (item === undefined) return undefined;
      // `!event#<accepted_at>#<place>` (see eventPositionOf): an ISO time holds no '#'.
      const { position } = parseItem(newestItemSchema, item, tableName, subscriptionId);
      return position.slice(EVENT_PREFIX.length).split('#')[0];
    },

    async readWindow({ subscriptionId, since, until, after, limit }) {
      const output = await client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: '#subscription = :subscription AND #position BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#subscription': partitionKey, '#position': sortKey },
          ExpressionAttributeValues: { ':subscription': subscriptionId, ':from': `${EVENT_PREFIX}${since}`, ':to': `${EVENT_PREFIX}${until}${AFTER_TIME}` },
          ...(after === undefined ? {} : { ExclusiveStartKey: { [partitionKey]: subscriptionId, [sortKey]: after } }),
          ScanIndexForward: true,
          Limit: limit,
          ConsistentRead: true,
        }),
      );
      const items = (output.Items ?? []).map((item) => parseItem(eventItemSchema, item, tableName, `${subscriptionId} ${String(item[sortKey])}`));
      const last = items.at(-1);
      return {
        events: (await Promise.all(items.map(toKept))).flat(),
        nextAfter: output.LastEvaluatedKey === undefined || last === undefined ? undefined : last.position,
      };
    },
  };
}

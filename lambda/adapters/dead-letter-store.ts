/**
 * The DeadLetters table: the store of dead letters and their only source of truth. One item per
 * dead letter under its subscription, sorted by position (ordering key digest, then sequence), with
 * the whole queued event; an event too large for an item is kept in the payload bucket and the item
 * points at it. One more item per subscription, at the position `#count`, counts its dead letters.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { giveUpNumberOf, positionOf, RemoveOutcome, toDeadLetterRow, type DeadLetter, type PayloadStore, type DeadLetterPage, type DeadLetterRow, type DeadLetterStore, type StoredDeadLetter } from '../core/dead-letter.js';
import { publicEventIdOf, readQueuedEvent } from '../core/event.js';
import { PAYLOAD_OBJECT_PREFIX, TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { unlessConditionFails } from './aws-clients.js';
import { parseItem } from './dynamo-item.js';
import { PAYLOAD_BUCKET_ACCESS } from './payload-bucket.js';

/**
 * The count item's position. Every dead letter's position starts with a lowercase hex digit
 * (`positionOf`), and `#` sorts before every one of them, so lists start after `FIRST_AFTER`.
 */
const COUNT_POSITION = '#count';
const FIRST_AFTER = '$';

/**
 * Largest queued event kept in the item itself. DynamoDB refuses items over 400 KB (names and
 * values together); the rest of an item is a few hundred bytes and a reason of at most 1 KB.
 */
export const MAX_INLINE_EVENT_BYTES = 350_000;


/**
 * A dead letter's stored event cannot be read back: its item has neither the event nor a payload
 * key, or what it points at is no queued event. A fault, as `put` writes only readable events.
 */
export class UnreadableDeadLetterError extends Error {
  override readonly name = 'UnreadableDeadLetterError';
  constructor(
    readonly subscriptionId: string,
    readonly eventId: string,
    readonly problem: string,
  ) {
    super(`dead letter ${eventId} of ${subscriptionId} ${problem}`);
  }
}

/** The attributes of an item, as written by `put`. */
const itemSchema = z.object({
  subscription_id: z.string(),
  position: z.string(),
  event_id: z.string(),
  ordering_key: z.string(),
  message_group_id: z.string(),
  sequence: z.number().int().positive().optional(),
  attempts: z.number().int().nonnegative(),
  reason: z.string(),
  dead_lettered_at: z.string(),
  queued_event: z.string().optional(),
  payload_key: z.string().optional(),
});
type Item = z.infer<typeof itemSchema>;

const countSchema = z.object({ dead_letters: z.number().int().optional() });

/**
 * The object key of a large dead letter: one per dead-lettering (its time and its give-up's number,
 * as two hosts may stamp two give-ups alike), so a rewrite never overwrites a redrive in flight.
 */
function payloadKeyOf(subscriptionId: string, position: string, deadLetteredAt: string, giveUp: number | undefined): string {
  return `${PAYLOAD_OBJECT_PREFIX}${encodeURIComponent(subscriptionId)}/${position}/${deadLetteredAt}${giveUp === undefined ? '' : `-${giveUp}`}.json`;
}

export interface DeadLetterStoreOptions {
  readonly tableName: string;
  /** Days a dead letter is kept (DynamoDB TTL), from its dead-lettering. */
  readonly ttlDays: number;
  readonly payloads: PayloadStore;
}

export type DynamoDeadLetterStore = DeadLetterStore & {
  /** A page of the list of `GET /v1/dead-letters`: rows without payloads. */
  readonly listRows: (input: { readonly subscriptionId: string; readonly after: string | undefined; readonly limit: number }) => Promise<{ rows: DeadLetterRow[]; nextAfter: string | undefined }>;
};

/**
 * The IAM actions of each method of {@link DynamoDeadLetterStore} on the DeadLetters table, and
 * those of the payload store's calls it makes for an event too large for an item.
 */
export const DEAD_LETTER_STORE_ACCESS = {
  // The item whole, returning the one it replaced; the count when it replaced none.
  put: [{ resource: 'deadLettersTable', actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'] }, ...PAYLOAD_BUCKET_ACCESS.put],
  readPage: [{ resource: 'deadLettersTable', actions: ['dynamodb:Query'] }, ...PAYLOAD_BUCKET_ACCESS.get],
  listRows: [{ resource: 'deadLettersTable', actions: ['dynamodb:Query'] }],
  // A conditional delete, then the count; when the condition fails, a read of what holds the place.
  remove: [{ resource: 'deadLettersTable', actions: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'] }, ...PAYLOAD_BUCKET_ACCESS.remove],
  count: [{ resource: 'deadLettersTable', actions: ['dynamodb:GetItem'] }],
} as const satisfies AccessMap<DynamoDeadLetterStore>;

export function createDeadLetterStore(client: DynamoDBDocumentClient, options: DeadLetterStoreOptions): DynamoDeadLetterStore {
  const { tableName } = options;
  const keyOf = (subscriptionId: string, position: string) => ({ [TABLES.deadLetters.partitionKey]: subscriptionId, [TABLES.deadLetters.sortKey]: position });

  const addToCount = async (subscriptionId: string, delta: number): Promise<void> => {
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keyOf(subscriptionId, COUNT_POSITION),
        UpdateExpression: 'ADD dead_letters :delta',
        ExpressionAttributeValues: { ':delta': delta },
      }),
    );
  };

  /** A page of items in position order; `projection` narrows what is read back. */
  const queryPage = async (input: { subscriptionId: string; after: string | undefined; limit: number; projection?: string }) => {
    const output = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: '#subscription = :subscription AND #position > :after',
        ExpressionAttributeNames: { '#subscription': TABLES.deadLetters.partitionKey, '#position': TABLES.deadLetters.sortKey, ...(input.projection === undefined ? {} : { '#reason': 'reason', '#sequence': 'sequence' }) },
        ExpressionAttributeValues: { ':subscription': input.subscriptionId, ':after': input.after ?? FIRST_AFTER },
        ...(input.projection === undefined ? {} : { ProjectionExpression: input.projection }),
        ScanIndexForward: true,
        Limit: input.limit,
        ConsistentRead: true,
      }),
    );
    const items = (output.Items ?? []).map((item) => parseItem(itemSchema, item, tableName, `${input.subscriptionId} ${String(item.position)}`));
    // DynamoDB may return a LastEvaluatedKey with a full page although nothing follows: the next
    // page then answers empty, which is the end.
    const last = items.at(-1);
    return { items, nextAfter: output.LastEvaluatedKey === undefined || last === undefined ? undefined : last.position };
  };

  const toStored = async (item: Item): Promise<StoredDeadLetter> => {
    const body = item.payload_key === undefined ? item.queued_event : await options.payloads.get(item.payload_key);
    if (body === undefined) throw new UnreadableDeadLetterError(item.subscription_id, item.event_id, 'has neither its event nor a payload key');
    const read = readQueuedEvent(body);
    if ('reason' in read) throw new UnreadableDeadLetterError(item.subscription_id, item.event_id, `holds no readable event: ${read.reason}`);
    return {
      queued: read.queued,
      sequence: item.sequence,
      attempts: item.attempts,
      reason: item.reason,
      deadLetteredAt: item.dead_lettered_at,
      subscriptionId: item.subscription_id,
      position: item.position,
      orderingKey: item.ordering_key,
      messageGroupId: item.message_group_id,
    };
  };

  return {
    async put(letter: DeadLetter) {
      const subscriptionId = letter.queued.event.subscription_id;
      const position = positionOf(letter);
      const body = JSON.stringify(letter.queued);
      const isInline = Buffer.byteLength(body, 'utf8') <= MAX_INLINE_EVENT_BYTES;
      const giveUp = giveUpNumberOf(letter.queued);
      const payloadKey = isInline ? undefined : payloadKeyOf(subscriptionId, position, letter.deadLetteredAt, giveUp);
      // The object before the item that points at it: an item never points at nothing.
      if (payloadKey !== undefined) await options.payloads.put(payloadKey, body);
      const output = await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...keyOf(subscriptionId, position),
            // The id the API lists: a fan-out's delivery by its event's (the row names the subscription).
            event_id: publicEventIdOf(letter.queued),
            ordering_key: letter.queued.ordering_key,
            message_group_id: letter.queued.message_group_id,
            sequence: letter.sequence,
            attempts: letter.attempts,
            reason: letter.reason,
            dead_lettered_at: letter.deadLetteredAt,
            ...(giveUp === undefined ? {} : { give_up: giveUp }),
            ...(payloadKey === undefined ? { queued_event: body } : { payload_key: payloadKey }),
            expires_at: Math.floor(Date.parse(letter.deadLetteredAt) / 1000) + options.ttlDays * 86_400,
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      // Counted once per dead letter: a rewrite of the same one (a crash, a second give-up) replaces it.
      if (output.Attributes === undefined) await addToCount(subscriptionId, 1);
    },

    async readPage({ subscriptionId, after, limit }): Promise<DeadLetterPage> {
      const page = await queryPage({ subscriptionId, after, limit });
      return { letters: await Promise.all(page.items.map(toStored)), nextAfter: page.nextAfter };
    },

    async listRows({ subscriptionId, after, limit }) {
      const page = await queryPage({
        subscriptionId,
        after,
        limit,
        projection: 'subscription_id, #position, event_id, ordering_key, message_group_id, #sequence, attempts, #reason, dead_lettered_at',
      });
      return {
        rows: page.items.map((item) =>
          toDeadLetterRow({
            eventId: item.event_id,
            subscriptionId: item.subscription_id,
            position: item.position,
            orderingKey: item.ordering_key,
            messageGroupId: item.message_group_id,
            sequence: item.sequence,
            attempts: item.attempts,
            reason: item.reason,
            deadLetteredAt: item.dead_lettered_at,
          }),
        ),
        nextAfter: page.nextAfter,
      };
    },

    async remove(letter) {
      // The same give-up: its time, and its number (two give-ups on two hosts may carry one time);
      // an item written before the numbers has none, and its time alone tells it.
      const giveUp = giveUpNumberOf(letter.queued);
      const output = await unlessConditionFails(
        client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: keyOf(letter.subscriptionId, letter.position),
            ConditionExpression: giveUp === undefined ? 'dead_lettered_at = :at AND attribute_not_exists(give_up)' : 'dead_lettered_at = :at AND (attribute_not_exists(give_up) OR give_up = :giveUp)',
            ExpressionAttributeValues: { ':at': letter.deadLetteredAt, ...(giveUp === undefined ? {} : { ':giveUp': giveUp }) },
            ReturnValues: 'ALL_OLD',
          }),
        ),
      );
      if (output === undefined) {
        const held = await client.send(
          new GetCommand({ TableName: tableName, Key: keyOf(letter.subscriptionId, letter.position), ProjectionExpression: 'event_id', ConsistentRead: true }),
        );
        return held.Item === undefined ? RemoveOutcome.gone : RemoveOutcome.replaced;
      }
      await addToCount(letter.subscriptionId, -1);
      const payloadKey = output.Attributes?.payload_key;
      // The object goes last; one left by a crash here expires with the bucket's lifecycle rule.
      if (typeof payloadKey === 'string') await options.payloads.remove(payloadKey);
      return RemoveOutcome.removed;
    },

    async count(subscriptionId) {
      const output = await client.send(new GetCommand({ TableName: tableName, Key: keyOf(subscriptionId, COUNT_POSITION), ConsistentRead: true }));
      return Math.max(0, parseItem(countSchema, output.Item ?? {}, tableName, `${subscriptionId} ${COUNT_POSITION}`).dead_letters ?? 0);
    },
  };
}

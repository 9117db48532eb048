/**
 * The Groups table: one item per message group with its lag, and the sparse, key-only
 * `active-group-keys` index of the groups that have pending or dead-lettered events, or had within
 * the last `IDLE_GROUP_MINUTES`. Ingest writes a group once per request, the consumer once per
 * batch; the index is written only when a group enters it (becomes active after being idle that
 * long) or leaves it (the lag job forgets it, idle that long): a key that sends again within
 * minutes costs the index nothing.
 */
import { GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { DeadLetterPlace } from '../core/dead-letter.js';
import { allBucketNamesOf, minuteOf, planBucketUpdate, RateCounter, type BucketUpdate, type RateBuckets } from '../core/group-rates.js';
import { ALL_LAG_SHARDS, HeadState, isActive, lagShardOf, ownOrderingKeyOf, type GroupHold, type GroupIntake, type GroupLag, type GroupProgress } from '../core/lag.js';
import { blake2bDigest } from '../core/routing.js';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { updateIfCondition } from './aws-clients.js';
import { batchGetItems, ReadConsistency } from './batch-get.js';
import { parseItem } from './dynamo-item.js';
import { parkMarksSchema } from './park-store.js';

const ACTIVE_GROUPS_INDEX = TABLES.groups.indexes[0].name;

/** Ordering keys a group remembers at most, for `keys_affected` (≤ 128 KB of keys in a 400 KB item). */
export const MAX_KEYS_TRACKED = 1000;

/**
 * Dead letters a group remembers the places of, which makes its count idempotent (below). 8000
 * places of 16 characters are about 150 KB in the group's dead-letter item (400 KB at most).
 * Beyond, a group counts on without places: exact but for a crash between two writes.
 */
export const MAX_DEAD_LETTERS_TRACKED = 8000;

/**
 * The key of a group's dead-letter item: the marks of its dead letters' places and their exact
 * count. Apart from the group's own item, because DynamoDB bills an UpdateItem by the larger of
 * the item's sizes before and after it: the group's item is written on the delivery path (once per
 * group per batch and per ingest request) and must stay small, whatever its dead letters. It has
 * no `lag_shard`, so it is never in the index of active groups; message group ids never hold `#`.
 */
function deadLettersKeyOf(messageGroupId: string): string {
  return `${messageGroupId}#dead-letters`;
}

const deadLetterItemSchema = z.object({
  dead_lettered: z.number().int().default(0),
  /** Grows with every change of the count: the group's copy takes only a newer one. */
  dead_letters_version: z.number().int().default(0),
  /** The marks of the dead letters counted (see `placeMark`): a string set. */
  dead_letter_places: z.set(z.string()).optional(),
});
type DeadLetterCount = z.infer<typeof deadLetterItemSchema>;

/**
 * The mark of a dead letter's place in its group's dead-letter item: a digest, short and of fixed
 * length whatever the subscription id and position (up to 128 characters and more each).
 */
export function placeMark(place: DeadLetterPlace): string {
  return Buffer.from(blake2bDigest(`${place.subscriptionId}\n${place.position}`, 12)).toString('base64url');
}

/** An entry of the key-only index of active groups: the group's key and its shard. */
const indexEntrySchema = z.object({ message_group_id: z.string() });

/** `depth` is a DynamoDB reserved word. */
const DEPTH = { '#depth': 'depth' };

const groupItemSchema = z.object({
  message_group_id: z.string(),
  depth: z.number().int().default(0),
  oldest_accepted_at: z.string().optional(),
  head_attempts: z.number().int().optional(),
  last_error: z.string().optional(),
  head_failing_since: z.string().optional(),
  head_event_id: z.string().optional(),
  head_ordering_key: z.string().optional(),
  /** A per-key group's one ordering key, written by the first intake (never in a partition's group). */
  ordering_key: z.string().optional(),
  /** A copy of the exact count kept on the group's dead-letter item (see `deadLettersKeyOf`). */
  dead_lettered: z.number().int().default(0),
  /** A DynamoDB string set: the document client reads it as a Set. */
  ordering_keys: z.set(z.string()).optional(),
  /** The group's shard in the index of active groups; absent once the lag job forgot it, idle. */
  lag_shard: z.string().optional(),
  /** When the group last drained, while it stays in the index idle; absent while it is active. */
  idle_since: z.string().optional(),
  /** Set while the consumer holds the group for a paused subscription (`GroupHold`): all six or none. */
  held_subscription_id: z.string().optional(),
  held_receipt: z.string().optional(),
  held_paused_at: z.string().optional(),
  held_reason: z.string().optional(),
  held_at: z.string().optional(),
  held_until: z.string().optional(),
  /** The subscriptions with a backlog parked from the group, each with its park's id (written by `park-store.ts`). */
  parked_subscriptions: parkMarksSchema.optional(),
  /** When a consumer batch last delivered an event of the group; kept when the group drains. */
  last_delivered_at: z.string().optional(),
});

/**
 * A group neither held nor marked parked (`parked_subscriptions` empty or absent): only such a
 * group leaves the index, whatever its depth says, since resume and the lag job find holds and
 * parks there. `:zero` is 0.
 */
const HELD_OR_PARKED_NOT = 'attribute_not_exists(held_receipt) AND (attribute_not_exists(parked_subscriptions) OR size(parked_subscriptions) = :zero)';

/** A hold's attributes on a group's item, removed together. */
const HOLD_ATTRIBUTES = 'held_subscription_id, held_receipt, held_paused_at, held_reason, held_at, held_until';

/** Every slot of both rings of per-minute buckets (group-rates.ts): at most three of each are on an item. */
const RATE_BUCKET_NAMES: readonly string[] = [...allBucketNamesOf(RateCounter.accepted), ...allBucketNamesOf(RateCounter.delivered)];

const rateBucketsSchema = z.object(Object.fromEntries(RATE_BUCKET_NAMES.map((name) => [name, z.number().int().nonnegative().optional()])));

/** Every attribute a group's lag is made of, and its shard: what the list reads of each active group. */
const GROUP_ATTRIBUTES: readonly string[] = [...Object.keys(groupItemSchema.shape), ...RATE_BUCKET_NAMES];

/**
 * A counter's bucket update (group-rates.ts) as parts of an UpdateExpression, its values named
 * after `prefix`. Bucket names are plain attribute names, no reserved words: written as they are.
 */
function bucketUpdateParts(update: BucketUpdate, prefix: string): { readonly set: string; readonly remove: readonly string[]; readonly values: Record<string, number> } {
  const { name, base, events } = update.add;
  return {
    set: `${name} = if_not_exists(${name}, :${prefix}Base) + :${prefix}Events`,
    remove: update.remove,
    values: { [`:${prefix}Base`]: base, [`:${prefix}Events`]: events },
  };
}

/** The group of an item read or written back: its lag attributes and its per-minute buckets. */
function groupOf(attributes: unknown, messageGroupId: string, tableName: string): { readonly group: GroupLag; readonly item: z.infer<typeof groupItemSchema> } {
  const item = parseItem(groupItemSchema, attributes, tableName, messageGroupId);
  const buckets: Record<string, number> = {};
  for (const [name, value] of Object.entries(parseItem(rateBucketsSchema, attributes, tableName, messageGroupId))) {
    if (value !== undefined) buckets[name] = value;
  }
  return { group: toGroupLag(item, buckets), item };
}

function toGroupLag(item: z.infer<typeof groupItemSchema>, rateBuckets: RateBuckets): GroupLag {
  return {
    messageGroupId: item.message_group_id,
    depth: item.depth,
    oldestAcceptedAt: item.oldest_accepted_at,
    headAttempts: item.head_attempts,
    lastError: item.last_error,
    headFailingSince: item.head_failing_since,
    headEventId: item.head_event_id,
    headOrderingKey: item.head_ordering_key,
    orderingKey: item.ordering_key,
    deadLettered: item.dead_lettered,
    keysAffected: item.ordering_keys?.size ?? 0,
    rateBuckets,
    // At the cap the set stopped growing: it may miss keys, so it names none.
    orderingKeys: (item.ordering_keys?.size ?? 0) < MAX_KEYS_TRACKED ? [...(item.ordering_keys ?? [])] : undefined,
    hold: holdOf(item),
    ...(item.parked_subscriptions === undefined || Object.keys(item.parked_subscriptions).length === 0 ? {} : { parkedSubscriptions: item.parked_subscriptions }),
    ...(item.last_delivered_at === undefined ? {} : { lastDeliveredAt: item.last_delivered_at }),
  };
}

function holdOf(item: z.infer<typeof groupItemSchema>): GroupHold | undefined {
  const { held_subscription_id: subscriptionId, held_receipt: receiptHandle, held_paused_at: pausedAt, held_reason: reason, held_at: heldAt, held_until: until } = item;
  if (subscriptionId === undefined || receiptHandle === undefined) return undefined;
  return { subscriptionId, receiptHandle, pausedAt: pausedAt ?? '', reason: reason ?? '', heldAt: heldAt ?? '', until: until ?? '' };
}

export interface GroupStore {
  /** Counts a request's recorded events into their group: one write per group per request. */
  readonly recordIntake: (intake: GroupIntake) => Promise<void>;
  /** Records what a consumer batch did to a group; marks it idle (still in the index) when it drains. */
  readonly recordProgress: (progress: GroupProgress, now: Date) => Promise<void>;
  /** Every active group of the index (`isActive`): the idle ones it still holds are left out. */
  readonly listActiveGroups: (options?: { readonly isConsistent?: boolean }) => Promise<GroupLag[]>;
  /**
   * The same list, from the same one read of the index, and each group idle since before
   * `idleBefore` taken out of the index: one conditional write each, refused when the group took
   * events since it was read. The lag job's, once a minute.
   */
  readonly listActiveForgettingIdle: (idleBefore: string) => Promise<GroupLag[]>;
  /** One group's lag, or undefined when the group has never had an event. */
  readonly getGroup: (messageGroupId: string) => Promise<GroupLag | undefined>;
  /** Groups by id, eventually consistent (a second-old view, for display): those never seen are absent. */
  readonly readGroups: (messageGroupIds: readonly string[]) => Promise<ReadonlyMap<string, GroupLag>>;
  /**
   * Counts redriven dead letters as pending again in the group they go to. Their places were
   * uncounted from the group they died in first (`uncountDeadLetter`).
   */
  readonly recordRedrive: (input: { readonly toGroup: string; readonly orderingKey: string; readonly events: number; readonly at: string }) => Promise<void>;
  /**
   * Counts a dead letter in its group's `dead_lettered`, once per place: the same conditional
   * UpdateItem adds the place's mark and the count on the group's dead-letter item, so a rewrite of
   * the same place (a crash, a retry, the backstop's import of an event given up already) never
   * counts it twice, whoever wrote the event's other records first; then the count is copied onto
   * the group's item, by version, so that a crash between the two is repaired by the rewrite.
   * Called after the dead letter is in the store.
   */
  readonly countDeadLetter: (place: DeadLetterPlace) => Promise<void>;
  /**
   * Uncounts a dead letter about to be removed from the store: removes its place's mark and the
   * count in one conditional UpdateItem, idempotent as `countDeadLetter` is. A group left with
   * nothing leaves the index.
   */
  readonly uncountDeadLetter: (place: DeadLetterPlace) => Promise<void>;
  /**
   * Forgets a group's hold once resume has let it go, in one conditional UpdateItem: only the hold
   * of that receipt handle (a hold made since, by a later receive, is another and stays).
   */
  readonly forgetHold: (messageGroupId: string, receiptHandle: string) => Promise<void>;
}

/**
 * The IAM actions of each method of {@link GroupStore}: item writes and reads on the Groups table;
 * the list Queries its `active-group-keys` index, never the table, and reads those groups by key.
 */
export const GROUP_STORE_ACCESS = {
  // The count, then the forgetting of a group found drained: conditional UpdateItems.
  recordIntake: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
  recordProgress: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
  listActiveGroups: [
    { resource: 'groupsTable', index: ACTIVE_GROUPS_INDEX, actions: ['dynamodb:Query'] },
    { resource: 'groupsTable', actions: ['dynamodb:BatchGetItem'] },
  ],
  listActiveForgettingIdle: [
    { resource: 'groupsTable', index: ACTIVE_GROUPS_INDEX, actions: ['dynamodb:Query'] },
    { resource: 'groupsTable', actions: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'] },
  ],
  getGroup: [{ resource: 'groupsTable', actions: ['dynamodb:GetItem'] }],
  readGroups: [{ resource: 'groupsTable', actions: ['dynamodb:BatchGetItem'] }],
  recordRedrive: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
  // The marked count; when refused, a read of the marks, then the unmarked count; then the copy.
  countDeadLetter: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'] }],
  // The same; when refused, a read of the count to repair the copy.
  uncountDeadLetter: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'] }],
  forgetHold: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
} as const satisfies AccessMap<GroupStore>;

/**
 * What a drained group forgets: its oldest acceptance, keys and head. It keeps its place in the
 * index, idle, until the lag job forgets it (`listActiveForgettingIdle`). Not a hold: a depth that
 * drifted to 0 must not lose the handle that lets a held group go (only the group's next delivery,
 * or the hold's release, ends a hold).
 */
const FORGOTTEN_ATTRIBUTES = 'oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key';

export function createGroupStore(client: DynamoDBDocumentClient, tableName: string): GroupStore {
  const key = (messageGroupId: string) => ({ [TABLES.groups.partitionKey]: messageGroupId });

  /**
   * A group with nothing pending forgets its oldest acceptance and its head, so that its next
   * events start its wait afresh. With no dead letters either, it is idle from `at`, still in the
   * index; or, without `at` (its last dead letters redriven away: no delivery drained it), it
   * leaves the index at once. Only written when a write saw the group drain; conditional, as
   * ingest may have counted new events.
   */
  const forgetIfDrained = async (messageGroupId: string, deadLettered: number, at: string | undefined): Promise<void> => {
    const hasDeadLetters = deadLettered > 0;
    const becomesIdle = !hasDeadLetters && at !== undefined;
    const leavesIndex = !hasDeadLetters && at === undefined;
    await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: key(messageGroupId),
        UpdateExpression: `${becomesIdle ? 'SET idle_since = :at ' : ''}REMOVE ${leavesIndex ? 'lag_shard, idle_since, ' : ''}${FORGOTTEN_ATTRIBUTES}`,
        // A group only a dead letter was counted in (before ingest's intake) has no depth yet. A
        // held group never leaves the index, whatever its depth says: resume finds holds there.
        ConditionExpression: hasDeadLetters
          ? '(attribute_not_exists(#depth) OR #depth <= :zero)'
          : `(attribute_not_exists(#depth) OR #depth <= :zero) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero)${leavesIndex ? ` AND ${HELD_OR_PARKED_NOT}` : ''}`,
        ExpressionAttributeNames: DEPTH,
        ExpressionAttributeValues: { ':zero': 0, ...(becomesIdle ? { ':at': at } : {}) },
      }),
    );
  };

  /** The group's dead-letter count, or undefined when none was ever counted. */
  const readCount = async (messageGroupId: string): Promise<DeadLetterCount | undefined> => {
    const countKey = deadLettersKeyOf(messageGroupId);
    const output = await client.send(new GetCommand({ TableName: tableName, Key: key(countKey), ProjectionExpression: 'dead_lettered, dead_letters_version', ConsistentRead: true }));
    return output.Item === undefined ? undefined : parseItem(deadLetterItemSchema, output.Item, tableName, countKey);
  };

  /**
   * After a refused marked count: the count as it stands if the place is marked (counted before),
   * else the place counted without a mark (the group is past MAX_DEAD_LETTERS_TRACKED).
   */
  const countPastRefusal = async (messageGroupId: string, mark: string): Promise<DeadLetterCount | undefined> => {
    const countKey = deadLettersKeyOf(messageGroupId);
    const output = await client.send(new GetCommand({ TableName: tableName, Key: key(countKey), ConsistentRead: true }));
    const known = parseItem(deadLetterItemSchema, output.Item ?? {}, tableName, countKey);
    if (known.dead_letter_places?.has(mark) === true) return known;
    const unmarked = await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: key(countKey),
        UpdateExpression: 'ADD dead_lettered :one, dead_lettered_unmarked :one, dead_letters_version :one',
        ConditionExpression: 'NOT contains(dead_letter_places, :mark)',
        ExpressionAttributeValues: { ':one': 1, ':mark': mark },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return unmarked === undefined ? undefined : parseItem(deadLetterItemSchema, unmarked.Attributes, tableName, countKey);
  };

  /**
   * Copies the exact count onto the group's item, where the lag view, its index and the draining
   * read it, unless a newer copy is there already. A group with dead letters is in the index.
   * @returns the group after the copy, or undefined when a newer copy was there
   */
  const copyCount = async (messageGroupId: string, count: DeadLetterCount): Promise<GroupLag | undefined> => {
    const hasDeadLetters = count.dead_lettered > 0;
    const output = await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: key(messageGroupId),
        UpdateExpression: `SET dead_lettered = :count, dead_letters_version = :version${hasDeadLetters ? ', lag_shard = :shard' : ''}`,
        ConditionExpression: 'attribute_not_exists(dead_letters_version) OR dead_letters_version < :version',
        ExpressionAttributeValues: { ':count': count.dead_lettered, ':version': count.dead_letters_version, ...(hasDeadLetters ? { ':shard': lagShardOf(messageGroupId) } : {}) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return output === undefined ? undefined : groupOf(output.Attributes, messageGroupId, tableName).group;
  };

  const recordIntake = async (intake: GroupIntake): Promise<void> => {
    const ownKey = ownOrderingKeyOf(intake.messageGroupId, intake.orderingKeys);
    // The events per minute ride on this write: their minute's bucket, the ring's old ones removed.
    const rate = bucketUpdateParts(planBucketUpdate(RateCounter.accepted, minuteOf(new Date(intake.acceptedAt)), intake.events), 'accepted');
    const values = {
      ':events': intake.events,
      ':shard': lagShardOf(intake.messageGroupId),
      ':accepted': intake.acceptedAt,
      ...rate.values,
      ...(ownKey === undefined ? {} : { ':ownKey': ownKey }),
    };
    // An idle group has no oldest acceptance (forgetIfDrained): these events become it; a group
    // with pending events keeps its own. A per-key group's key never changes, and is never forgotten.
    // An idle group still in the index keeps its shard: setting the same one writes no index entry.
    const counting = `ADD #depth :events SET lag_shard = :shard, oldest_accepted_at = if_not_exists(oldest_accepted_at, :accepted)${ownKey === undefined ? '' : ', ordering_key = if_not_exists(ordering_key, :ownKey)'}, ${rate.set} REMOVE ${['idle_since', ...rate.remove].join(', ')}`;
    // The keys seen are kept up to MAX_KEYS_TRACKED (a busy partition never drains, and an item
    // holds at most 400 KB): beyond, the count goes on without them.
    const withKeys = await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: key(intake.messageGroupId),
        UpdateExpression: counting.replace('ADD #depth :events', 'ADD #depth :events, ordering_keys :keys'),
        ConditionExpression: 'attribute_not_exists(ordering_keys) OR size(ordering_keys) < :cap',
        ExpressionAttributeNames: DEPTH,
        ExpressionAttributeValues: { ...values, ':keys': new Set(intake.orderingKeys), ':cap': MAX_KEYS_TRACKED },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const output =
      withKeys ??
      (await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key(intake.messageGroupId),
          UpdateExpression: counting,
          ExpressionAttributeNames: DEPTH,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      ));
    // The consumer settled these events before this count arrived (a race of milliseconds): the
    // group is drained already, and must not keep this acceptance as its oldest.
    const { group } = groupOf(output.Attributes, intake.messageGroupId, tableName);
    if (group.depth <= 0) await forgetIfDrained(intake.messageGroupId, group.deadLettered, intake.acceptedAt);
  };

  /**
   * Every group the index holds, active or idle, read by key: the index holds keys only (a group's
   * lag changes on every write; its keys only when it enters or leaves the index), so each shard
   * is Queried for them, then those groups are read.
   */
  const readIndexedGroups = async (consistency: ReadConsistency = ReadConsistency.eventual): Promise<ReturnType<typeof groupOf>[]> => {
    const shards = await Promise.all(
      ALL_LAG_SHARDS.map(async (shard) => {
        const ids: string[] = [];
        let startKey: Record<string, unknown> | undefined;
        do {
          const output: QueryCommandOutput = await client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: ACTIVE_GROUPS_INDEX,
              KeyConditionExpression: 'lag_shard = :shard',
              ExpressionAttributeValues: { ':shard': shard },
              ExclusiveStartKey: startKey,
            }),
          );
          for (const item of output.Items ?? []) ids.push(parseItem(indexEntrySchema, item, tableName, shard).message_group_id);
          startKey = output.LastEvaluatedKey;
        } while (startKey !== undefined);
        return ids;
      }),
    );
    // Eventually consistent by default, at half the read units: the index itself is eventually
    // consistent, so for a group new to it a strongly consistent read would not make the list any
    // more current; the lag view and the lag job (once a minute) show a moment's lag, and a
    // second-old copy of it is as good. A resume reads strongly: a held group has been in the index
    // since its first events, and its hold may have been written a moment ago.
    const items = await batchGetItems(client, { tableName, keyName: TABLES.groups.partitionKey, keys: shards.flat(), attributes: GROUP_ATTRIBUTES, consistency });
    // A group forgotten (or vanished) between the Query and the read is not in the index any more.
    return items.map((item) => groupOf(item, String(item[TABLES.groups.partitionKey]), tableName)).filter(({ item }) => item.lag_shard !== undefined);
  };

  /**
   * Takes an idle group out of the index: refused when it took events since it was read idle
   * (ingest's intake removes `idle_since`, and a later drain writes another).
   */
  const forgetIdle = async (messageGroupId: string, idleSince: string): Promise<void> => {
    await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: key(messageGroupId),
        UpdateExpression: 'REMOVE lag_shard, idle_since',
        // A held group stays, whatever its depth says: resume and the lag job find holds in the index.
        ConditionExpression:
          `idle_since = :seen AND (attribute_not_exists(#depth) OR #depth <= :zero) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero) AND ${HELD_OR_PARKED_NOT}`,
        ExpressionAttributeNames: DEPTH,
        ExpressionAttributeValues: { ':seen': idleSince, ':zero': 0 },
      }),
    );
  };

  return {
    recordIntake,

    async recordProgress(progress, now) {
      // The events per minute ride on the write below, whichever it is: the settled events into
      // their minute's bucket, the ring's old ones removed. A batch that settled none counts none.
      const rate = progress.settled > 0 ? bucketUpdateParts(planBucketUpdate(RateCounter.delivered, minuteOf(now), progress.settled), 'delivered') : undefined;
      // Likely the last of the group: the count and the forgetting in one conditional write, which
      // is refused when ingest counted more (or dead letters keep the group in the index); then the
      // two writes below, as for any batch.
      if (progress.head.state === HeadState.clear && progress.isLikelyDrained === true && progress.settled > 0) {
        const drained = await updateIfCondition(
          client,
          new UpdateCommand({
            TableName: tableName,
            Key: key(progress.messageGroupId),
            UpdateExpression: `ADD #depth :settled SET ${['idle_since = :now', ...(progress.hasDelivered === true ? ['last_delivered_at = :now'] : []), ...(rate === undefined ? [] : [rate.set])].join(', ')} REMOVE ${[FORGOTTEN_ATTRIBUTES, HOLD_ATTRIBUTES, ...(rate?.remove ?? [])].join(', ')}`,
            ConditionExpression: '(attribute_not_exists(#depth) OR #depth <= :count) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero)',
            ExpressionAttributeNames: DEPTH,
            ExpressionAttributeValues: { ':settled': -progress.settled, ':count': progress.settled, ':zero': 0, ':now': now.toISOString(), ...rate?.values },
          }),
        );
        if (drained !== undefined) return;
      }
      const set = ['lag_shard = :shard', ...(rate === undefined ? [] : [rate.set])];
      const remove: string[] = [...(rate?.remove ?? [])];
      const values: Record<string, unknown> = { ':settled': -progress.settled, ':shard': lagShardOf(progress.messageGroupId), ...rate?.values };
      // When it last delivered: on the write the batch makes anyway, so it costs no request.
      if (progress.hasDelivered === true) {
        set.push('last_delivered_at = :deliveredAt');
        values[':deliveredAt'] = now.toISOString();
      }
      if (progress.head.state === HeadState.waiting) {
        set.push('head_attempts = :attempts', 'last_error = :error', 'oldest_accepted_at = :oldest', 'head_event_id = :head', 'head_ordering_key = :headKey');
        // A head's first failure starts its stall clock; later failures of the same head keep it.
        set.push(progress.head.attempts <= 1 ? 'head_failing_since = :now' : 'head_failing_since = if_not_exists(head_failing_since, :now)');
        Object.assign(values, {
          ':attempts': progress.head.attempts,
          ':error': progress.head.lastError,
          ':oldest': progress.head.acceptedAt,
          ':head': progress.head.eventId,
          ':headKey': progress.head.orderingKey,
          ':now': now.toISOString(),
        });
        // A hold stays: this write can land after the head's backoff let another batch hold the
        // group anew (a hold is forgotten by its own handle, or by a clear write, see pause.ts).
      } else if (progress.head.state === HeadState.held) {
        // Held on purpose, not failing: no stall clock runs. The head's attempts so far stay shown.
        const { hold } = progress.head;
        set.push(
          'held_subscription_id = :heldSubscription',
          'held_receipt = :heldReceipt',
          'held_paused_at = :heldPausedAt',
          'held_reason = :heldReason',
          'held_at = :heldAt',
          'held_until = :heldUntil',
          'oldest_accepted_at = :oldest',
        );
        remove.push('head_failing_since');
        Object.assign(values, {
          ':heldSubscription': hold.subscriptionId,
          ':heldReceipt': hold.receiptHandle,
          ':heldPausedAt': hold.pausedAt,
          ':heldReason': hold.reason,
          ':heldAt': hold.heldAt,
          ':heldUntil': hold.until,
          ':oldest': progress.head.acceptedAt,
        });
      } else if (progress.head.state === HeadState.clear) {
        remove.push('head_attempts', 'last_error', 'head_failing_since', 'head_event_id', 'head_ordering_key', HOLD_ATTRIBUTES);
        if (progress.lastSettledAcceptedAt !== undefined) {
          // The next pending event was accepted no earlier than the last one settled.
          set.push('oldest_accepted_at = :oldest');
          values[':oldest'] = progress.lastSettledAcceptedAt;
        }
      }
      const output = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key(progress.messageGroupId),
          UpdateExpression: `ADD #depth :settled SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
          ExpressionAttributeNames: DEPTH,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      const { group } = groupOf(output.Attributes, progress.messageGroupId, tableName);
      // A failing head stays listed whatever the depth says: its event may never have been counted
      // (an ingest request that failed between its send and its count), and a stuck key must not
      // hide from the lag view, its stall alarm or the ordering-change guard.
      if (group.depth <= 0 && progress.head.state !== HeadState.waiting) await forgetIfDrained(progress.messageGroupId, group.deadLettered, now.toISOString());
    },

    async forgetHold(messageGroupId, receiptHandle) {
      await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: key(messageGroupId),
          UpdateExpression: `REMOVE ${HOLD_ATTRIBUTES}`,
          ConditionExpression: 'held_receipt = :receipt',
          ExpressionAttributeValues: { ':receipt': receiptHandle },
        }),
      );
    },

    async getGroup(messageGroupId) {
      const output = await client.send(new GetCommand({ TableName: tableName, Key: key(messageGroupId), ConsistentRead: true }));
      return output.Item === undefined ? undefined : groupOf(output.Item, messageGroupId, tableName).group;
    },

    async readGroups(messageGroupIds) {
      if (messageGroupIds.length === 0) return new Map();
      const items = await batchGetItems(client, {
        tableName,
        keyName: TABLES.groups.partitionKey,
        keys: [...new Set(messageGroupIds)],
        attributes: GROUP_ATTRIBUTES,
        consistency: ReadConsistency.eventual,
      });
      return new Map(items.map((item) => {
        const { group } = groupOf(item, String(item[TABLES.groups.partitionKey]), tableName);
        return [group.messageGroupId, group] as const;
      }));
    },

    async recordRedrive({ toGroup, orderingKey, events, at }) {
      await recordIntake({ messageGroupId: toGroup, events, orderingKeys: [orderingKey], acceptedAt: at });
    },

    async countDeadLetter(place) {
      const mark = placeMark(place);
      const counts = key(deadLettersKeyOf(place.messageGroupId));
      const marked = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: counts,
          UpdateExpression: 'ADD dead_lettered :one, dead_letters_version :one, dead_letter_places :marks',
          ConditionExpression: 'NOT contains(dead_letter_places, :mark) AND (attribute_not_exists(dead_letter_places) OR size(dead_letter_places) < :cap)',
          ExpressionAttributeValues: { ':one': 1, ':marks': new Set([mark]), ':mark': mark, ':cap': MAX_DEAD_LETTERS_TRACKED },
          ReturnValues: 'ALL_NEW',
        }),
      );
      // Refused: counted already (the usual case: a rewrite), or the group is past the cap.
      const count = marked === undefined ? await countPastRefusal(place.messageGroupId, mark) : parseItem(deadLetterItemSchema, marked.Attributes, tableName, deadLettersKeyOf(place.messageGroupId));
      // The copy is written again after a rewrite too: a crash may have come between the two writes.
      if (count !== undefined) await copyCount(place.messageGroupId, count);
    },

    async uncountDeadLetter(place) {
      const mark = placeMark(place);
      const counts = key(deadLettersKeyOf(place.messageGroupId));
      const output =
        (await updateIfCondition(
          client,
          new UpdateCommand({
            TableName: tableName,
            Key: counts,
            UpdateExpression: 'ADD dead_lettered :minusOne, dead_letters_version :one DELETE dead_letter_places :marks',
            ConditionExpression: 'contains(dead_letter_places, :mark)',
            ExpressionAttributeValues: { ':minusOne': -1, ':one': 1, ':marks': new Set([mark]), ':mark': mark },
            ReturnValues: 'ALL_NEW',
          }),
        )) ??
        // Not marked: uncounted already (a repeated step), or counted past the cap without a mark.
        (await updateIfCondition(
          client,
          new UpdateCommand({
            TableName: tableName,
            Key: counts,
            UpdateExpression: 'ADD dead_lettered :minusOne, dead_lettered_unmarked :minusOne, dead_letters_version :one',
            ConditionExpression: 'dead_lettered_unmarked > :zero AND NOT contains(dead_letter_places, :mark)',
            ExpressionAttributeValues: { ':minusOne': -1, ':one': 1, ':zero': 0, ':mark': mark },
            ReturnValues: 'ALL_NEW',
          }),
        ));
      // Uncounted already: the copy is written again, as a crash may have come between the two writes.
      const count = output === undefined ? await readCount(place.messageGroupId) : parseItem(deadLetterItemSchema, output.Attributes, tableName, deadLettersKeyOf(place.messageGroupId));
      if (count === undefined) return;
      const group = await copyCount(place.messageGroupId, count);
      // The group it died in may now hold nothing at all (its key was repartitioned away, or it
      // drained meanwhile): it leaves the index of active groups, as a group the consumer drains does.
      if (group !== undefined && group.depth <= 0) await forgetIfDrained(place.messageGroupId, group.deadLettered, undefined);
    },

    async listActiveGroups(options) {
      const consistency = options?.isConsistent === true ? ReadConsistency.strong : ReadConsistency.eventual;
      return (await readIndexedGroups(consistency)).filter(({ group }) => isActive(group)).map(({ group }) => group);
    },

    async listActiveForgettingIdle(idleBefore) {
      const indexed = await readIndexedGroups();
      const idle = indexed.filter(({ item }) => item.idle_since !== undefined && item.idle_since < idleBefore);
      await Promise.all(idle.map(({ item }) => forgetIdle(item.message_group_id, item.idle_since ?? '')));
      return indexed.filter(({ group }) => isActive(group)).map(({ group }) => group);
    },
  };
}

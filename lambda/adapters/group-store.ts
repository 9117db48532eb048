/**
 * The Groups table: one item per message group with its lag, and the sparse `active-groups` index
 * of the groups that have pending or dead-lettered events. Ingest writes a group once per request,
 * the consumer once per batch; a group leaves the index when it drains.
 */
import { GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { ALL_LAG_SHARDS, HeadState, lagShardOf, ownOrderingKeyOf, type GroupIntake, type GroupLag, type GroupProgress } from '../core/lag.js';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { updateIfCondition } from './aws-clients.js';
import { parseItem } from './dynamo-item.js';

const ACTIVE_GROUPS_INDEX = TABLES.groups.indexes[0].name;

/** Ordering keys a group remembers at most, for `keys_affected` (≤ 128 KB of keys in a 400 KB item). */
export const MAX_KEYS_TRACKED = 1000;

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
  dead_lettered: z.number().int().default(0),
  /** A DynamoDB string set: the document client reads it as a Set. */
  ordering_keys: z.set(z.string()).optional(),
});

function toGroupLag(item: z.infer<typeof groupItemSchema>): GroupLag {
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
  };
}

export interface GroupStore {
  /** Counts a request's recorded events into their group: one write per group per request. */
  readonly recordIntake: (intake: GroupIntake) => Promise<void>;
  /** Records what a consumer batch did to a group; takes the group out of the index when it drains. */
  readonly recordProgress: (progress: GroupProgress, now: Date) => Promise<void>;
  /** Every group in the index of active groups. */
  readonly listActiveGroups: () => Promise<GroupLag[]>;
  /** One group's lag, or undefined when the group has never had an event. */
  readonly getGroup: (messageGroupId: string) => Promise<GroupLag | undefined>;
  /**
   * Moves redriven dead letters back to pending: `events` fewer dead letters in the group they
   * died in, as many more pending events (one write each group).
   */
  readonly recordRedrive: (input: { readonly fromGroup: string; readonly toGroup: string; readonly orderingKey: string; readonly events: number; readonly at: string }) => Promise<void>;
}

/**
 * The IAM actions of each method of {@link GroupStore}: item writes and reads on the Groups table,
 * and the list by Query of its `active-groups` index alone, never of the table.
 */
export const GROUP_STORE_ACCESS = {
  // The count, then the forgetting of a group found drained: conditional UpdateItems.
  recordIntake: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
  recordProgress: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
  listActiveGroups: [{ resource: 'groupsTable', index: ACTIVE_GROUPS_INDEX, actions: ['dynamodb:Query'] }],
  getGroup: [{ resource: 'groupsTable', actions: ['dynamodb:GetItem'] }],
  recordRedrive: [{ resource: 'groupsTable', actions: ['dynamodb:UpdateItem'] }],
} as const satisfies AccessMap<GroupStore>;

export function createGroupStore(client: DynamoDBDocumentClient, tableName: string): GroupStore {
  const key = (messageGroupId: string) => ({ [TABLES.groups.partitionKey]: messageGroupId });

  /**
   * A group with nothing pending forgets its oldest acceptance and its head, so that its next
   * events start its wait afresh; it leaves the index when it has no dead letters either. Only
   * written when a write saw the group drain; conditional, as ingest may have counted new events.
   */
  const forgetIfDrained = async (messageGroupId: string, deadLettered: number): Promise<void> => {
    const hasDeadLetters = deadLettered > 0;
    await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: key(messageGroupId),
        UpdateExpression: `REMOVE ${hasDeadLetters ? '' : 'lag_shard, '}oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key`,
        ConditionExpression: hasDeadLetters ? '#depth <= :zero' : '#depth <= :zero AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero)',
        ExpressionAttributeNames: DEPTH,
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
  };

  const recordIntake = async (intake: GroupIntake): Promise<void> => {
    const ownKey = ownOrderingKeyOf(intake.messageGroupId, intake.orderingKeys);
    const values = {
      ':events': intake.events,
      ':shard': lagShardOf(intake.messageGroupId),
      ':accepted': intake.acceptedAt,
      ...(ownKey === undefined ? {} : { ':ownKey': ownKey }),
    };
    // An idle group has no oldest acceptance (forgetIfDrained): these events become it; a group
    // with pending events keeps its own. A per-key group's key never changes, and is never forgotten.
    const counting = `ADD #depth :events SET lag_shard = :shard, oldest_accepted_at = if_not_exists(oldest_accepted_at, :accepted)${ownKey === undefined ? '' : ', ordering_key = if_not_exists(ordering_key, :ownKey)'}`;
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
    const group = toGroupLag(parseItem(groupItemSchema, output.Attributes, tableName, intake.messageGroupId));
    if (group.depth <= 0) await forgetIfDrained(intake.messageGroupId, group.deadLettered);
  };

  return {
    recordIntake,

    async recordProgress(progress, now) {
      const set = ['lag_shard = :shard'];
      const remove: string[] = [];
      const values: Record<string, unknown> = { ':settled': -progress.settled, ':dead': progress.deadLettered, ':shard': lagShardOf(progress.messageGroupId) };
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
      } else if (progress.head.state === HeadState.clear) {
        remove.push('head_attempts', 'last_error', 'head_failing_since', 'head_event_id', 'head_ordering_key');
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
          UpdateExpression: `ADD #depth :settled, dead_lettered :dead SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
          ExpressionAttributeNames: DEPTH,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      const group = toGroupLag(parseItem(groupItemSchema, output.Attributes, tableName, progress.messageGroupId));
      if (group.depth <= 0) await forgetIfDrained(progress.messageGroupId, group.deadLettered);
    },

    async getGroup(messageGroupId) {
      const output = await client.send(new GetCommand({ TableName: tableName, Key: key(messageGroupId), ConsistentRead: true }));
      return output.Item === undefined ? undefined : toGroupLag(parseItem(groupItemSchema, output.Item, tableName, messageGroupId));
    },

    async recordRedrive({ fromGroup, toGroup, orderingKey, events, at }) {
      const output = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key(fromGroup),
          UpdateExpression: 'ADD dead_lettered :gone',
          ExpressionAttributeValues: { ':gone': -events },
          ReturnValues: 'ALL_NEW',
        }),
      );
      // The group it died in may now be drained of everything (its key was repartitioned away):
      // it leaves the index of active groups, as a group the consumer drains does.
      const group = toGroupLag(parseItem(groupItemSchema, output.Attributes, tableName, fromGroup));
      if (fromGroup !== toGroup && group.depth <= 0) await forgetIfDrained(fromGroup, group.deadLettered);
      await recordIntake({ messageGroupId: toGroup, events, orderingKeys: [orderingKey], acceptedAt: at });
    },

    async listActiveGroups() {
      const shards = await Promise.all(
        ALL_LAG_SHARDS.map(async (shard) => {
          const groups: GroupLag[] = [];
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
            for (const item of output.Items ?? []) {
              groups.push(toGroupLag(parseItem(groupItemSchema, item, tableName, String(item[TABLES.groups.partitionKey]))));
            }
            startKey = output.LastEvaluatedKey;
          } while (startKey !== undefined);
          return groups;
        }),
      );
      return shards.flat();
    },
  };
}

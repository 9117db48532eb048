/**
 * A replay's state (see `core/replay.ts`) on its subscription's item in the Subscriptions table:
 * `replay` while one is under way, `last_replay` once it ended. Every change is one conditional
 * UpdateItem on the replay's `started_at`, so a step of an ended or newer replay changes nothing.
 */
import { GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { ReplayState, ReplayStateStore } from '../core/replay.js';
import { REPLAYS_INDEX, TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { updateIfCondition } from './aws-clients.js';
import { parseItem } from './dynamo-item.js';

const count = z.number().int().nonnegative();

/** The stored shape of a replay's state (the item's `replay` and `last_replay`). */
export const replayItemSchema = z.object({
  since: z.iso.datetime(),
  until: z.iso.datetime(),
  started_at: z.iso.datetime(),
  after: z.string().optional(),
  reached: z.iso.datetime().optional(),
  replayed: count,
  dead_lettered: count,
  not_delivered: count,
  lease_until: z.iso.datetime().optional(),
  /** Set on `last_replay` when it was cancelled rather than done. */
  cancelled_at: z.iso.datetime().optional(),
});
type ReplayItem = z.infer<typeof replayItemSchema>;

const stateItemSchema = z.object({ replay: replayItemSchema.optional(), last_replay: replayItemSchema.optional() });

/** The one value of `replay_shard`: a replay is rare, a handful under way at once. */
const REPLAY_SHARD = 'replays';

export function toReplayState(item: ReplayItem): ReplayState {
  return {
    since: item.since,
    until: item.until,
    startedAt: item.started_at,
    ...(item.after === undefined ? {} : { after: item.after }),
    ...(item.reached === undefined ? {} : { reached: item.reached }),
    replayed: item.replayed,
    deadLettered: item.dead_lettered,
    notDelivered: item.not_delivered,
    ...(item.lease_until === undefined ? {} : { leaseUntil: item.lease_until }),
    ...(item.cancelled_at === undefined ? {} : { cancelledAt: item.cancelled_at }),
  };
}

function toItem(state: ReplayState, withLease: boolean): ReplayItem {
  return {
    since: state.since,
    until: state.until,
    started_at: state.startedAt,
    ...(state.after === undefined ? {} : { after: state.after }),
    ...(state.reached === undefined ? {} : { reached: state.reached }),
    replayed: state.replayed,
    dead_lettered: state.deadLettered,
    not_delivered: state.notDelivered,
    ...(withLease && state.leaseUntil !== undefined ? { lease_until: state.leaseUntil } : {}),
    ...(state.cancelledAt === undefined ? {} : { cancelled_at: state.cancelledAt }),
  };
}

/** The IAM actions of each method of {@link ReplayStateStore}, all on the Subscriptions table. */
export const REPLAY_STATE_STORE_ACCESS = {
  // A conditional UpdateItem; when refused, a read of what is in force.
  start: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'] }],
  claim: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  listUnderWay: [{ resource: 'subscriptionsTable', index: REPLAYS_INDEX, actions: ['dynamodb:Query'] }],
  save: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  finish: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  // A read of the replay under way, then its removal on its start time.
  cancel: [{ resource: 'subscriptionsTable', actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] }],
} as const satisfies AccessMap<ReplayStateStore>;

export function createReplayStateStore(client: DynamoDBDocumentClient, tableName: string): ReplayStateStore {
  const keyName = TABLES.subscriptions.partitionKey;
  const update = (subscriptionId: string, input: { expression: string; condition: string; names?: Record<string, string>; values: Record<string, unknown>; returnNew?: boolean }) =>
    updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: { [keyName]: subscriptionId },
        UpdateExpression: input.expression,
        ConditionExpression: input.condition,
        // DynamoDB refuses a name the expressions do not use.
        ExpressionAttributeNames: { ...(input.condition.includes('#id') ? { '#id': keyName } : {}), '#replay': 'replay', ...input.names },
        ExpressionAttributeValues: input.values,
        ...(input.returnNew === true ? { ReturnValues: 'ALL_NEW' as const } : {}),
      }),
    );
  const stateOf = (item: Record<string, unknown> | undefined, subscriptionId: string): ReplayState | undefined => {
    const replay = item === undefined ? undefined : parseItem(stateItemSchema, item, tableName, subscriptionId).replay;
    return replay === undefined ? undefined : toReplayState(replay);
  };

  return {
    async start(subscriptionId, state, { isUntilGiven }) {
      for (let attempt = 0; ; attempt += 1) {
        // Neither while one is under way, nor again for the named window of the last one: a request
        // repeated after the answer that ended it was lost answers that one, done. A window ending
        // by default is a new one each time it is asked for (its end may repeat: the newest acceptance).
        const notTheLast = 'NOT (last_replay.since = :since AND last_replay.#until = :until AND attribute_not_exists(last_replay.cancelled_at))';
        const started = await update(subscriptionId, {
          expression: 'SET #replay = :replay, replay_shard = :shard',
          condition: `attribute_exists(#id) AND attribute_not_exists(#replay)${isUntilGiven ? ` AND ${notTheLast}` : ''}`,
          ...(isUntilGiven ? { names: { '#until': 'until' } } : {}),
          values: { ':replay': toItem(state, true), ':shard': REPLAY_SHARD, ...(isUntilGiven ? { ':since': state.since, ':until': state.until } : {}) },
        });
        if (started !== undefined) return { state, isNew: true };
        const output = await client.send(new GetCommand({ TableName: tableName, Key: { [keyName]: subscriptionId }, ConsistentRead: true }));
        if (output.Item === undefined) return undefined;
        const { replay, last_replay: last } = parseItem(stateItemSchema, output.Item, tableName, subscriptionId);
        if (replay !== undefined) return { state: toReplayState(replay), isNew: false };
        if (isUntilGiven && last !== undefined && last.since === state.since && last.until === state.until && last.cancelled_at === undefined) return { state: toReplayState(last), isNew: false, isDone: true };
        // The one under way ended between the two calls: start again, once.
        if (attempt > 0) return { state, isNew: false };
      }
    },

    async claim({ subscriptionId, startedAt, now, leaseUntil }) {
      const output = await update(subscriptionId, {
        expression: 'SET #replay.lease_until = :lease',
        condition: `${startedAt === undefined ? 'attribute_exists(#replay)' : '#replay.started_at = :started'} AND (attribute_not_exists(#replay.lease_until) OR #replay.lease_until < :now)`,
        values: { ':lease': leaseUntil, ':now': now, ...(startedAt === undefined ? {} : { ':started': startedAt }) },
        returnNew: true,
      });
      return output === undefined ? undefined : stateOf(output.Attributes, subscriptionId);
    },

    async listUnderWay() {
      const ids: string[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const output = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: REPLAYS_INDEX,
            KeyConditionExpression: 'replay_shard = :shard',
            ExpressionAttributeValues: { ':shard': REPLAY_SHARD },
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        ids.push(...(output.Items ?? []).map((item) => String(item[keyName])));
        start = output.LastEvaluatedKey;
      } while (start !== undefined);
      return ids;
    },

    async save(subscriptionId, state) {
      await update(subscriptionId, {
        expression: 'SET #replay = :replay',
        condition: '#replay.started_at = :started',
        values: { ':replay': toItem(state, true), ':started': state.startedAt },
      });
    },

    async cancel(subscriptionId, now) {
      for (;;) {
        const output = await client.send(new GetCommand({ TableName: tableName, Key: { [keyName]: subscriptionId }, ConsistentRead: true }));
        if (output.Item === undefined) return undefined;
        const replay = stateOf(output.Item, subscriptionId);
        if (replay === undefined) return { isCancelled: false };
        const { leaseUntil: _lease, ...kept } = replay;
        const cancelled: ReplayState = { ...kept, cancelledAt: now };
        // On its start time: one that ended or was replaced meanwhile is read again.
        const removed = await update(subscriptionId, {
          expression: 'SET last_replay = :last REMOVE #replay, replay_shard',
          condition: '#replay.started_at = :started',
          values: { ':last': toItem(cancelled, false), ':started': replay.startedAt },
        });
        if (removed !== undefined) return { isCancelled: true, state: cancelled };
      }
    },

    async finish(subscriptionId, state) {
      await update(subscriptionId, {
        expression: 'SET last_replay = :last REMOVE #replay, replay_shard',
        condition: '#replay.started_at = :started',
        values: { ':last': toItem(state, false), ':started': state.startedAt },
      });
    },
  };
}

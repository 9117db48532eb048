import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../lambda/adapters/aws-clients.js';
import { createGroupStore } from '../../../lambda/adapters/group-store.js';
import { ALL_LAG_SHARDS, HeadState, lagShardOf } from '../../../lambda/core/lag.js';
import { minuteOf, planBucketUpdate, RateCounter } from '../../../lambda/core/group-rates.js';

const dynamo = mockClient(DynamoDBDocumentClient);
const store = createGroupStore(createDocumentClient({ region: 'us-east-1' }), 'Groups');
const now = new Date('2026-12-02T12:00:00.000Z');

beforeEach(() => dynamo.reset());

/** The SET and REMOVE parts a counter's ring adds to a write at `now` (group-rates.ts plans them). */
function ringOf(counter: RateCounter) {
  const { add, remove } = planBucketUpdate(counter, minuteOf(now), 1);
  return { set: `${add.name} = if_not_exists(${add.name}, :${counter}Base) + :${counter}Events`, remove: remove.join(', '), base: add.base };
}
const accepted = ringOf(RateCounter.accepted);
const delivered = ringOf(RateCounter.delivered);

describe('recordIntake', () => {
  it('counts a request’s events into their group in one write, keeping a busy group’s oldest acceptance', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { message_group_id: 'g1', depth: 3 } });
    await store.recordIntake({ messageGroupId: 'g1', events: 3, orderingKeys: ['k1'], acceptedAt: now.toISOString() });
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toEqual({
      TableName: 'Groups',
      Key: { message_group_id: 'g1' },
      // The events per minute ride on the same write: no request of their own.
      // Active again: an idle group still in the index keeps its entry (the same shard), and is no longer idle.
      UpdateExpression: `ADD #depth :events, ordering_keys :keys SET lag_shard = :shard, oldest_accepted_at = if_not_exists(oldest_accepted_at, :accepted), ${accepted.set} REMOVE idle_since, ${accepted.remove}`,
      ConditionExpression: 'attribute_not_exists(ordering_keys) OR size(ordering_keys) < :cap',
      ExpressionAttributeNames: { '#depth': 'depth' },
      ExpressionAttributeValues: {
        ':events': 3,
        ':keys': new Set(['k1']),
        ':shard': lagShardOf('g1'),
        ':accepted': now.toISOString(),
        ':acceptedBase': accepted.base,
        ':acceptedEvents': 3,
        ':cap': 1000,
      },
      ReturnValues: 'ALL_NEW',
    });
  });

  it('goes on counting without the keys once a group remembers 1000 of them', async () => {
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'full', $metadata: {} }))
      .resolvesOnce({ Attributes: { message_group_id: 'p1', depth: 5000 } });
    await store.recordIntake({ messageGroupId: 'p1', events: 2, orderingKeys: ['k1', 'k2'], acceptedAt: now.toISOString() });
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input.UpdateExpression).toBe(`ADD #depth :events SET lag_shard = :shard, oldest_accepted_at = if_not_exists(oldest_accepted_at, :accepted), ${accepted.set} REMOVE idle_since, ${accepted.remove}`);
  });

  it('forgets the group again when the consumer settled its events before this count arrived', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({ Attributes: { message_group_id: 'g1', depth: 0 } }).resolvesOnce({});
    await store.recordIntake({ messageGroupId: 'g1', events: 1, orderingKeys: ['k1'], acceptedAt: now.toISOString() });
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input).toMatchObject({
      UpdateExpression: 'SET idle_since = :at REMOVE oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key',
      ConditionExpression: '(attribute_not_exists(#depth) OR #depth <= :zero) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero)',
      ExpressionAttributeValues: { ':zero': 0, ':at': now.toISOString() },
    });
  });
});

describe('recordProgress', () => {
  it('records a waiting head with its stall clock, in one write', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { message_group_id: 'g1', depth: 4, dead_lettered: 0 } });
    await store.recordProgress(
      { messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: 'a0', head: { state: HeadState.waiting, eventId: 'e1', orderingKey: 'k1', attempts: 1, lastError: 'HTTP 500', acceptedAt: 'a1' } },
      now,
    );
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toMatchObject({
      UpdateExpression: `ADD #depth :settled SET lag_shard = :shard, ${delivered.set}, head_attempts = :attempts, last_error = :error, oldest_accepted_at = :oldest, head_event_id = :head, head_ordering_key = :headKey, head_failing_since = :now REMOVE ${delivered.remove}`,
      ExpressionAttributeValues: { ':settled': -1, ':deliveredBase': delivered.base, ':deliveredEvents': 1, ':attempts': 1, ':error': 'HTTP 500', ':oldest': 'a1', ':head': 'e1', ':headKey': 'k1', ':now': now.toISOString() },
      ReturnValues: 'ALL_NEW',
    });
  });

  it('keeps the stall clock of a head that fails again', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { message_group_id: 'g1', depth: 4 } });
    await store.recordProgress({ messageGroupId: 'g1', settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, eventId: 'e1', orderingKey: 'k1', attempts: 3, lastError: 'HTTP 500', acceptedAt: 'a1' } }, now);
    const expression = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression;
    expect(expression).toContain('head_failing_since = if_not_exists(head_failing_since, :now)');
    // A batch that settled nothing counts nothing.
    expect(expression).not.toContain('delivered_m');
  });

  it('clears the head of a drained group and marks it idle, still in the index, only if nothing new was counted', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({ Attributes: { message_group_id: 'g1', depth: 0, dead_lettered: 0 } }).resolvesOnce({});
    await store.recordProgress({ messageGroupId: 'g1', settled: 2, lastSettledAcceptedAt: 'a2', head: { state: HeadState.clear } }, now);
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls[0]?.args[0].input.UpdateExpression).toBe(
      `ADD #depth :settled SET lag_shard = :shard, ${delivered.set}, oldest_accepted_at = :oldest REMOVE ${delivered.remove}, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key, held_subscription_id, held_receipt, held_paused_at, held_reason, held_at, held_until`,
    );
    expect(calls[1]?.args[0].input).toMatchObject({
      UpdateExpression: 'SET idle_since = :at REMOVE oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key',
      ConditionExpression: '(attribute_not_exists(#depth) OR #depth <= :zero) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero)',
      ExpressionAttributeValues: { ':zero': 0, ':at': now.toISOString() },
    });
  });

  it('records a hold with its receipt handle, stopping the stall clock and keeping the head\'s attempts, in one write', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { message_group_id: 'g1', depth: 3 } });
    const hold = { subscriptionId: 'sub_1', receiptHandle: 'rh-1', pausedAt: 'p', reason: 'r', heldAt: 'h', until: 'u' };
    await store.recordProgress({ messageGroupId: 'g1', settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.held, hold, acceptedAt: 'a1' } }, now);
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toMatchObject({
      UpdateExpression:
        'ADD #depth :settled SET lag_shard = :shard, held_subscription_id = :heldSubscription, held_receipt = :heldReceipt, held_paused_at = :heldPausedAt, held_reason = :heldReason, held_at = :heldAt, held_until = :heldUntil, oldest_accepted_at = :oldest REMOVE head_failing_since',
      ExpressionAttributeValues: { ':settled': -0, ':heldSubscription': 'sub_1', ':heldReceipt': 'rh-1', ':heldPausedAt': 'p', ':heldReason': 'r', ':heldAt': 'h', ':heldUntil': 'u', ':oldest': 'a1' },
    });
  });

  it('forgets a hold only while it is the one let go', async () => {
    dynamo.on(UpdateCommand).resolves({});
    await store.forgetHold('g1', 'rh-1');
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      UpdateExpression: 'REMOVE ' + 'held_subscription_id, held_receipt, held_paused_at, held_reason, held_at, held_until',
      ConditionExpression: 'held_receipt = :receipt',
      ExpressionAttributeValues: { ':receipt': 'rh-1' },
    });
  });

  it('keeps a drained group that still has dead letters in the index, forgetting its oldest acceptance', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({ Attributes: { message_group_id: 'g1', depth: 0, dead_lettered: 1 } }).resolvesOnce({});
    await store.recordProgress({ messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: 'a2', head: { state: HeadState.clear } }, now);
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input).toMatchObject({
      UpdateExpression: 'REMOVE oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key',
      ConditionExpression: '(attribute_not_exists(#depth) OR #depth <= :zero)',
    });
  });

  it('drains a group likely emptied by its batch in one conditional write, and writes as usual when refused', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const drained = { messageGroupId: 'g1', settled: 2, lastSettledAcceptedAt: 'a2', head: { state: HeadState.clear }, isLikelyDrained: true } as const;
    await store.recordProgress(drained, now);
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toMatchObject({
      UpdateExpression: `ADD #depth :settled SET idle_since = :now, ${delivered.set} REMOVE oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key, held_subscription_id, held_receipt, held_paused_at, held_reason, held_at, held_until, ${delivered.remove}`,
      ConditionExpression: '(attribute_not_exists(#depth) OR #depth <= :count) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero)',
      ExpressionAttributeValues: { ':settled': -2, ':count': 2, ':zero': 0, ':now': now.toISOString(), ':deliveredBase': delivered.base, ':deliveredEvents': 2 },
    });
    dynamo.reset();
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'more pending', $metadata: {} }))
      .resolvesOnce({ Attributes: { message_group_id: 'g1', depth: 3 } });
    await store.recordProgress(drained, now);
    // The refused write counted nothing; the one that follows counts the settled events once.
    expect(dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input.UpdateExpression)).toEqual([
      `ADD #depth :settled SET idle_since = :now, ${delivered.set} REMOVE oldest_accepted_at, ordering_keys, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key, held_subscription_id, held_receipt, held_paused_at, held_reason, held_at, held_until, ${delivered.remove}`,
      `ADD #depth :settled SET lag_shard = :shard, ${delivered.set}, oldest_accepted_at = :oldest REMOVE ${delivered.remove}, head_attempts, last_error, head_failing_since, head_event_id, head_ordering_key, held_subscription_id, held_receipt, held_paused_at, held_reason, held_at, held_until`,
    ]);
  });

  it('records when a batch last delivered on the write it makes anyway, drained or not, and not for a batch that only gave up', async () => {
    dynamo.on(UpdateCommand).rejectsOnce(new ConditionalCheckFailedException({ message: 'more pending', $metadata: {} })).resolves({ Attributes: { message_group_id: 'g1', depth: 3 } });
    await store.recordProgress({ messageGroupId: 'g1', settled: 2, lastSettledAcceptedAt: 'a2', head: { state: HeadState.clear }, isLikelyDrained: true, hasDelivered: true }, now);
    const [drainedWrite, write] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(drainedWrite?.UpdateExpression).toContain('SET idle_since = :now, last_delivered_at = :now,');
    expect(write?.UpdateExpression).toContain(`SET lag_shard = :shard, ${delivered.set}, last_delivered_at = :deliveredAt,`);
    expect(write?.ExpressionAttributeValues).toMatchObject({ ':deliveredAt': now.toISOString() });
    // Never in what a drained group forgets: its last delivery stays.
    expect(write?.UpdateExpression).not.toMatch(/REMOVE.*last_delivered_at/);
    dynamo.reset();
    dynamo.on(UpdateCommand).resolves({ Attributes: { message_group_id: 'g1', depth: 1 } });
    await store.recordProgress({ messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: 'a3', head: { state: HeadState.clear } }, now);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).not.toContain('last_delivered_at');
  });

  it('accepts that ingest counted new events meanwhile', async () => {
    dynamo
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: { message_group_id: 'g1', depth: 0 } })
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }));
    await expect(store.recordProgress({ messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: 'a', head: { state: HeadState.clear } }, now)).resolves.toBeUndefined();
  });
});

describe('listActiveGroups', () => {
  it('queries every shard of the key-only index, page by page, then reads those groups by key, never scanning the table', async () => {
    // A key-only index answers with the table's key and the index's key alone.
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':shard': string }; ExclusiveStartKey?: unknown }) => {
      if (input.ExpressionAttributeValues[':shard'] !== 'shard-3') return { Items: [] };
      if (input.ExclusiveStartKey === undefined) return { Items: [{ message_group_id: 'g1', lag_shard: 'shard-3' }], LastEvaluatedKey: { message_group_id: 'g1', lag_shard: 'shard-3' } };
      return { Items: [{ message_group_id: 'g2', lag_shard: 'shard-3' }] };
    });
    dynamo.on(BatchGetCommand).resolves({
      Responses: {
        Groups: [
          { message_group_id: 'g1', lag_shard: 'shard-3', depth: 2, ordering_keys: new Set(['a', 'b']) },
          { message_group_id: 'g2', lag_shard: 'shard-3', depth: 0, dead_lettered: 1 },
        ],
      },
    });
    const groups = await store.listActiveGroups();
    expect(groups.map((g) => [g.messageGroupId, g.depth, g.keysAffected, g.deadLettered])).toEqual([['g1', 2, 2, 0], ['g2', 0, 0, 1]]);
    const calls = dynamo.commandCalls(QueryCommand);
    expect(calls).toHaveLength(ALL_LAG_SHARDS.length + 1);
    for (const call of calls) expect(call.args[0].input).toMatchObject({ TableName: 'Groups', IndexName: 'active-group-keys', KeyConditionExpression: 'lag_shard = :shard' });
    const reads = dynamo.commandCalls(BatchGetCommand);
    expect(reads).toHaveLength(1);
    const read = reads[0]?.args[0].input.RequestItems?.Groups;
    expect(read?.Keys).toEqual([{ message_group_id: 'g1' }, { message_group_id: 'g2' }]);
    // The index is eventually consistent: so may the read of what it lists be, at half the units.
    expect(read?.ConsistentRead).toBe(false);
    expect(Object.values(read?.ExpressionAttributeNames ?? {})).toEqual(expect.arrayContaining(['depth', 'oldest_accepted_at', 'head_attempts', 'ordering_keys', 'dead_lettered', 'lag_shard']));
  });

  it('leaves out a group that drained or vanished between the Query and the read', async () => {
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':shard': string } }) =>
      input.ExpressionAttributeValues[':shard'] === 'shard-0'
        ? { Items: [{ message_group_id: 'active', lag_shard: 'shard-0' }, { message_group_id: 'drained', lag_shard: 'shard-0' }, { message_group_id: 'vanished', lag_shard: 'shard-0' }] }
        : { Items: [] },
    );
    dynamo.on(BatchGetCommand).resolves({ Responses: { Groups: [{ message_group_id: 'active', lag_shard: 'shard-0', depth: 1 }, { message_group_id: 'drained', depth: 0 }] } });
    expect((await store.listActiveGroups()).map((group) => group.messageGroupId)).toEqual(['active']);
  });

  it('leaves out an idle group the index still holds', async () => {
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':shard': string } }) =>
      input.ExpressionAttributeValues[':shard'] === 'shard-0' ? { Items: [{ message_group_id: 'active', lag_shard: 'shard-0' }, { message_group_id: 'idle', lag_shard: 'shard-0' }] } : { Items: [] },
    );
    dynamo.on(BatchGetCommand).resolves({
      Responses: { Groups: [{ message_group_id: 'active', lag_shard: 'shard-0', depth: 1 }, { message_group_id: 'idle', lag_shard: 'shard-0', depth: 0, idle_since: now.toISOString() }] },
    });
    expect((await store.listActiveGroups()).map((group) => group.messageGroupId)).toEqual(['active']);
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('reads nothing by key when no group is active', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });
    expect(await store.listActiveGroups()).toEqual([]);
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(0);
  });
});

describe('listActiveForgettingIdle', () => {
  it('takes out of the index each group idle since before the cutoff, if it took no events since, from the same one read', async () => {
    const before = (minutes: number) => new Date(now.getTime() - minutes * 60_000).toISOString();
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':shard': string } }) =>
      input.ExpressionAttributeValues[':shard'] === 'shard-0'
        ? { Items: ['active', 'idle-long', 'idle-briefly'].map((id) => ({ message_group_id: id, lag_shard: 'shard-0' })) }
        : { Items: [] },
    );
    dynamo.on(BatchGetCommand).resolves({
      Responses: {
        Groups: [
          { message_group_id: 'active', lag_shard: 'shard-0', depth: 2 },
          { message_group_id: 'idle-long', lag_shard: 'shard-0', depth: 0, idle_since: before(20) },
          { message_group_id: 'idle-briefly', lag_shard: 'shard-0', depth: 0, idle_since: before(5) },
        ],
      },
    });
    const groups = await store.listActiveForgettingIdle(before(15));
    expect(groups.map((group) => group.messageGroupId)).toEqual(['active']);
    expect(dynamo.commandCalls(BatchGetCommand)).toHaveLength(1);
    const writes = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(writes).toEqual([
      {
        TableName: 'Groups',
        Key: { message_group_id: 'idle-long' },
        UpdateExpression: 'REMOVE lag_shard, idle_since',
        ConditionExpression: 'idle_since = :seen AND (attribute_not_exists(#depth) OR #depth <= :zero) AND (attribute_not_exists(dead_lettered) OR dead_lettered <= :zero) AND attribute_not_exists(held_receipt) AND (attribute_not_exists(parked_subscriptions) OR size(parked_subscriptions) = :zero)',
        ExpressionAttributeNames: { '#depth': 'depth' },
        ExpressionAttributeValues: { ':seen': before(20), ':zero': 0 },
      },
    ]);
  });

  it('keeps a group that took events since it was read idle (its write refused)', async () => {
    dynamo.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':shard': string } }) =>
      input.ExpressionAttributeValues[':shard'] === 'shard-0' ? { Items: [{ message_group_id: 'g1', lag_shard: 'shard-0' }] } : { Items: [] },
    );
    dynamo.on(BatchGetCommand).resolves({ Responses: { Groups: [{ message_group_id: 'g1', lag_shard: 'shard-0', depth: 0, idle_since: '2026-01-01T00:00:00.000Z' }] } });
    dynamo.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'active again', $metadata: {} }));
    await expect(store.listActiveForgettingIdle(now.toISOString())).resolves.toEqual([]);
  });
});

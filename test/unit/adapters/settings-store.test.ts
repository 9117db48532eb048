import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../lambda/adapters/aws-clients.js';
import { createSettingsStore } from '../../../lambda/adapters/settings-store.js';

const dynamo = mockClient(DynamoDBDocumentClient);
const store = createSettingsStore(createDocumentClient({ region: 'us-east-1' }), 'Settings', 8);

beforeEach(() => dynamo.reset());

describe('settings store', () => {
  it('gives the deployment’s partition count before any switch, and the stored one after', async () => {
    dynamo.on(GetCommand).resolves({});
    expect(await store.getRouting()).toEqual({ version: 0, partitionCount: 8, isPaused: false, pausedAt: undefined });
    // A pause at version 0 wrote no count of its own: a redeployed PARTITION_COUNT still applies.
    dynamo.on(GetCommand).resolves({ Item: { setting: 'routing', version: 0, is_paused: true, paused_at: 't', partition_count: 4 } });
    expect((await store.getRouting()).partitionCount).toBe(8);
    dynamo.on(GetCommand).resolves({ Item: { setting: 'routing', version: 2, is_paused: false } });
    expect((await store.getRouting()).partitionCount).toBeUndefined();
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({ ConsistentRead: true, Key: { setting: 'routing' } });
  });

  it('pauses and resumes without touching the routing', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { setting: 'routing', version: 0, is_paused: true, paused_at: '2026-12-02T12:00:00.000Z' } });
    await store.setPaused(true, '2026-12-02T12:00:00.000Z');
    await store.setPaused(false, '2026-12-02T12:05:00.000Z');
    const [pause, resume] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input.UpdateExpression);
    expect(pause).toBe('SET version = if_not_exists(version, :zero), is_paused = :paused, paused_at = if_not_exists(paused_at, :at)');
    expect(resume).toBe('SET version = if_not_exists(version, :zero), is_paused = :paused REMOVE paused_at');
  });

  it('switches only from the expected version while paused', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({}).rejectsOnce(new ConditionalCheckFailedException({ message: 'no', $metadata: {} }));
    expect(await store.switchRouting({ expectedVersion: 0, partitionCount: 16, at: 't' })).toBe(true);
    expect(await store.switchRouting({ expectedVersion: 0, partitionCount: undefined, at: 't' })).toBe(false);
    const [first, second] = dynamo.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(first).toMatchObject({
      UpdateExpression: 'SET version = :next, switched_at = :at, partition_count = :partitions',
      ConditionExpression: 'version = :expected AND is_paused = :true',
      ExpressionAttributeValues: { ':next': 1, ':expected': 0, ':true': true, ':at': 't', ':partitions': 16 },
    });
    expect(second?.UpdateExpression).toBe('SET version = :next, switched_at = :at REMOVE partition_count');
  });
});

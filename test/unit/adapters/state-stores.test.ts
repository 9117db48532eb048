import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../lambda/adapters/aws-clients.js';
import { createEventStore } from '../../../lambda/adapters/event-store.js';
import { createOrderingKeyStore, deliveredItemKey } from '../../../lambda/adapters/ordering-key-store.js';
import { subscriptionIdSchema, type QueuedEvent } from '../../../lambda/core/event.js';
import { Ordering, partitionKey, subscriptionOfKey } from '../../../lambda/core/routing.js';

const dynamo = mockClient(DynamoDBDocumentClient);
const client = createDocumentClient({ region: 'us-east-1' });
const store = {
  ...createEventStore(client, { tableName: 'Events', ttlDays: 30 }),
  ...createOrderingKeyStore(client, 'OrderingKeys'),
};
const conditionFailed = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

beforeEach(() => dynamo.reset());

const queued: QueuedEvent = {
  version: 1,
  event: { event_id: 'evt_1', tenant_id: 't', subscription_id: 'sub_1', type: 'x', payload_json: '{}' },
  ordering_key: 'sub_1',
  message_group_id: 'g1',
  accepted_at: '2026-12-02T12:00:00.000Z',
};

describe('recordAccepted', () => {
  const record = { eventId: 'evt_1', subscriptionId: 'sub_1', tenantId: 't', orderingKey: 'sub_1', messageGroupId: 'g1', acceptedAt: '2026-12-02T12:00:00.000Z' };

  it('writes once per event id, keeping a status the consumer may have written first, with a TTL', async () => {
    dynamo.on(UpdateCommand).resolves({});
    expect(await store.recordAccepted(record)).toBe('recorded');
    const input = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ TableName: 'Events', Key: { event_id: 'evt_1' }, ConditionExpression: 'attribute_not_exists(accepted_at)' });
    expect(input?.UpdateExpression).toContain('#status = if_not_exists(#status, :status)');
    expect(input?.ExpressionAttributeValues).toMatchObject({ ':status': 'accepted', ':expires': Date.parse(record.acceptedAt) / 1000 + 30 * 86_400 });
  });

  it('tells a first acceptance the consumer already settled from a pending one', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { event_id: 'evt_1', status: 'delivered' } });
    expect(await store.recordAccepted(record)).toBe('recorded_settled');
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({ ReturnValues: 'ALL_OLD' });
  });

  it('answers already_recorded when the condition fails', async () => {
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    expect(await store.recordAccepted(record)).toBe('already_recorded');
  });

  const placed = { ...record, queuePosition: 'g1/00000000000000000000000000000000000000001' };

  it("records the event's place in the queue with it", async () => {
    dynamo.on(UpdateCommand).resolves({});
    expect(await store.recordAccepted(placed)).toBe('recorded');
    const input = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.UpdateExpression).toContain('queue_position = :position');
    expect(input?.ExpressionAttributeValues).toMatchObject({ ':position': placed.queuePosition });
  });

  it('takes a refusal over the same place for its own write repeated, reading it strongly consistent', async () => {
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    dynamo.on(GetCommand).resolves({ Item: { status: 'accepted', queue_position: placed.queuePosition } });
    expect(await store.recordAccepted(placed)).toBe('recorded');
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({ Key: { event_id: 'evt_1' }, ConsistentRead: true });
    dynamo.on(GetCommand).resolves({ Item: { status: 'delivered', queue_position: placed.queuePosition } });
    expect(await store.recordAccepted(placed)).toBe('recorded_settled');
    dynamo.on(GetCommand).resolves({ Item: { status: 'accepted', queue_position: 'g1/00000000000000000000000000000000000000000' } });
    expect(await store.recordAccepted(placed)).toBe('already_recorded');
  });

  it('rethrows other errors as faults', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('ProvisionedThroughputExceeded'));
    await expect(store.recordAccepted(record)).rejects.toThrow('ProvisionedThroughputExceeded');
  });
});

describe('findSettled', () => {
  it('reads the outcomes strongly consistent, so that a message back right after its delivery’s record is skipped', async () => {
    dynamo.on(BatchGetCommand).resolves({ Responses: { Events: [{ event_id: 'evt_1', status: 'delivered' }] } });
    const isSettled = await store.findSettled([{ eventId: 'evt_1', redrivenAt: undefined }, { eventId: 'evt_2', redrivenAt: undefined }]);
    expect(isSettled({ eventId: 'evt_1', redrivenAt: undefined })).toBe(true);
    expect(isSettled({ eventId: 'evt_2', redrivenAt: undefined })).toBe(false);
    expect(dynamo.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.Events).toMatchObject({
      Keys: [{ event_id: 'evt_1' }, { event_id: 'evt_2' }],
      ConsistentRead: true,
    });
  });
});

describe('beginAttempt', () => {
  it('makes a new head with the next sequence in one conditional write', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { head_event_id: 'evt_1', head_sequence: 4, head_attempts: 1 } });
    expect(await store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5 })).toEqual({ kind: 'attempt', sequence: 4, attempts: 1, previousDelivered: 3 });
    const calls = dynamo.commandCalls(UpdateCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input).toMatchObject({
      TableName: 'OrderingKeys',
      Key: { ordering_key: 'sub_1' },
      ConditionExpression: '(attribute_not_exists(head_event_id) OR head_event_id <> :event) AND attribute_not_exists(ahead.#event)',
      ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':event': 'evt_1', ':none': '', ':nothing': 0 },
    });
    // The head it replaces stays on the item as prev_*, and the one before as prev2_*, read before the write.
    expect(calls[0]?.args[0].input.UpdateExpression).toBe(
      'SET last_sequence = if_not_exists(last_sequence, :zero) + :one, head_sequence = if_not_exists(last_sequence, :zero) + :one, prev2_event_id = if_not_exists(prev_event_id, :none), prev2_sequence = if_not_exists(prev_sequence, :nothing), prev_event_id = if_not_exists(head_event_id, :none), prev_sequence = if_not_exists(head_sequence, :nothing), prev_ahead = if_not_exists(ahead, :noNumbers), prev_ahead_base = if_not_exists(ahead_base, :nothing), head_event_id = :event, head_attempts = :one REMOVE head_last_error, skip_event_id, skip_requested_at, head_attempts_base, head_allowed_attempts, head_giving_up, ahead, ahead_base, head_redrive, head_group, head_position',
    );
  });

  it('keeps the head message’s place in its group, and begins no message older than it there', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { head_event_id: 'evt_1', head_sequence: 4, head_attempts: 1 } });
    await store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5, message: { messageGroupId: 'g1', sequenceNumber: '18869786213367824640' } });
    const input = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.UpdateExpression).toContain(', head_group = :group, head_position = :position REMOVE');
    expect(input?.ConditionExpression).toBe('(attribute_not_exists(head_event_id) OR head_event_id <> :event) AND attribute_not_exists(ahead.#event) AND (attribute_not_exists(head_position) OR head_group <> :group OR head_position < :position)');
    expect(input?.ExpressionAttributeValues).toMatchObject({ ':group': 'g1', ':position': '0000000000000000000018869786213367824640' });
  });

  it('counts one more attempt of the same head, keeping its sequence, below the maximum', async () => {
    dynamo
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed())
      .resolvesOnce({ Attributes: { head_event_id: 'evt_1', head_sequence: 4, head_attempts: 3 } });
    expect(await store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5 })).toEqual({ kind: 'attempt', sequence: 4, attempts: 3, previousDelivered: 3 });
    expect(dynamo.commandCalls(UpdateCommand)[1]?.args[0].input).toMatchObject({
      UpdateExpression: 'SET head_attempts = head_attempts + :one',
      ConditionExpression: 'head_event_id = :event AND (head_attempts < :max OR head_attempts < head_allowed_attempts) AND (attribute_not_exists(skip_event_id) OR skip_event_id <> :event)',
      ExpressionAttributeValues: { ':one': 1, ':event': 'evt_1', ':max': 5 },
    });
  });

  it('reports the attempts exhausted when both conditions fail', async () => {
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    dynamo.on(GetCommand).resolves({ Item: { ordering_key: 'sub_1', head_event_id: 'evt_1', head_sequence: 4, head_attempts: 5 } });
    expect(await store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5 })).toEqual({ kind: 'exhausted', sequence: 4, attempts: 5, previousDelivered: 3 });
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({ ConsistentRead: true });
  });

  it('keeps a redriven dead letter’s sequence instead of taking the next', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { head_event_id: 'evt_1', head_sequence: 2, head_attempts: 1, last_sequence: 6, given_up_sequence: 6, given_up_previous: 4 } });
    const redrive = { redrivenAt: '2026-12-02T13:00:00.000Z', sequence: 2 };
    expect(await store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5, redrive })).toEqual({ kind: 'attempt', sequence: 2, attempts: 1, previousDelivered: 4 });
    const input = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.UpdateExpression).toBe('SET head_sequence = :kept, prev2_event_id = if_not_exists(prev_event_id, :none), prev2_sequence = if_not_exists(prev_sequence, :nothing), prev_event_id = if_not_exists(head_event_id, :none), prev_sequence = if_not_exists(head_sequence, :nothing), prev_ahead = if_not_exists(ahead, :noNumbers), prev_ahead_base = if_not_exists(ahead_base, :nothing), head_event_id = :event, head_attempts = :one, head_redrive = :redrive REMOVE head_last_error, skip_event_id, skip_requested_at, head_attempts_base, head_allowed_attempts, head_giving_up, ahead, ahead_base, head_group, head_position');
    // Even as the key's last head (dead-lettered with its attempts spent), a redrive starts afresh.
    expect(input?.ConditionExpression).toBe('(attribute_not_exists(head_event_id) OR head_event_id <> :event OR attribute_not_exists(head_redrive) OR head_redrive <> :redrive)');
    expect(input?.ExpressionAttributeValues).toEqual({ ':one': 1, ':event': 'evt_1', ':none': '', ':nothing': 0, ':noNumbers': {}, ':kept': 2, ':redrive': '2026-12-02T13:00:00.000Z' });
  });

  it('reports a head an operator asked to skip', async () => {
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    dynamo.on(GetCommand).resolves({ Item: { ordering_key: 'sub_1', head_event_id: 'evt_1', head_sequence: 4, head_attempts: 2, skip_event_id: 'evt_1' } });
    expect(await store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5 })).toEqual({ kind: 'skipped', sequence: 4, attempts: 2, previousDelivered: 3 });
  });

  it('asks for a skip only of the current head', async () => {
    dynamo.on(UpdateCommand).resolves({});
    expect(await store.requestSkip({ orderingKey: 'sub_1', eventId: 'evt_1', at: '2026-12-02T12:00:00.000Z' })).toBe(true);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({ ConditionExpression: 'head_event_id = :event AND head_attempts > :zero' });
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    expect(await store.requestSkip({ orderingKey: 'sub_1', eventId: 'evt_1', at: '2026-12-02T12:00:00.000Z' })).toBe(false);
  });

  it('refuses an item that is not shaped as the code expects', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { head_event_id: 'evt_1', head_sequence: 'four', head_attempts: 1 } });
    await expect(store.beginAttempt({ orderingKey: 'sub_1', eventId: 'evt_1', maxAttempts: 5 })).rejects.toThrow(/not readable: head_sequence/);
  });
});

describe('settling', () => {
  it('reads the status consistently to skip settled events', async () => {
    dynamo.on(GetCommand).resolves({ Item: { status: 'delivered' } });
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: undefined })).toBe(true);
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({ TableName: 'Events', Key: { event_id: 'evt_1' }, ConsistentRead: true });
    dynamo.on(GetCommand).resolves({ Item: { status: 'accepted' } });
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: undefined })).toBe(false);
    dynamo.on(GetCommand).resolves({});
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: undefined })).toBe(false);
  });

  it('does not count a redriven dead letter’s own earlier dead-lettering as settled', async () => {
    dynamo.on(GetCommand).resolves({ Item: { status: 'dead_lettered', dead_lettered_at: '2026-12-02T12:00:00.000Z' } });
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: undefined })).toBe(true);
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: '2026-12-02T13:00:00.000Z' })).toBe(false);
    // Dead-lettered again after this redrive: settled.
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: '2026-12-02T11:00:00.000Z' })).toBe(true);
  });

  it("counts a replay's copy settled only by a delivery or dead-lettering after the replay sent it", async () => {
    dynamo.on(GetCommand).resolves({ Item: { status: 'delivered', delivered_at: '2026-12-02T12:00:00.000Z' } });
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: '2026-12-02T13:00:00.000Z', isReplay: true })).toBe(false);
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: '2026-12-02T11:00:00.000Z', isReplay: true })).toBe(true);
    // A redrive of a dead letter delivered since is settled, whenever.
    expect(await store.isSettled({ eventId: 'evt_1', redrivenAt: '2026-12-02T13:00:00.000Z' })).toBe(true);
  });

  it('says whether a settled event had been recorded as accepted (and so counted in its group)', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { event_id: 'evt_1', accepted_at: '2026-12-02T12:00:00.000Z', status: 'accepted' } });
    expect(await store.markDelivered({ queued, sequence: 4, attempts: 2, at: '2026-12-02T12:00:03.000Z' })).toEqual({ wasAccepted: true });
    dynamo.on(UpdateCommand).resolves({});
    expect(await store.markDeadLettered({ queued, sequence: 4, attempts: 5, at: '2026-12-02T12:00:03.000Z', reason: 'x' })).toEqual({ wasAccepted: false });
  });

  it('records a delivery with its sequence and attempts', async () => {
    dynamo.on(UpdateCommand).resolves({});
    await store.markDelivered({ queued, sequence: 4, attempts: 2, at: '2026-12-02T12:00:03.000Z' });
    const input = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ TableName: 'Events', Key: { event_id: 'evt_1' } });
    expect(input?.ExpressionAttributeValues).toMatchObject({ ':status': 'delivered', ':sequence': 4, ':attempts': 2, ':delivered_at': '2026-12-02T12:00:03.000Z' });
  });

  it('records a dead letter with its reason', async () => {
    dynamo.on(UpdateCommand).resolves({});
    await store.markDeadLettered({ queued, sequence: 4, attempts: 5, at: '2026-12-02T12:00:03.000Z', reason: 'gave up' });
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues).toMatchObject({ ':status': 'dead_lettered', ':reason': 'gave up', ':dead_lettered_at': '2026-12-02T12:00:03.000Z' });
  });

  it('writes a number on an event’s record only when an eventually consistent read does not show it there', async () => {
    dynamo.on(GetCommand).resolves({ Item: { sequence: 4 } });
    dynamo.on(UpdateCommand).resolves({});
    await store.recordSequence({ eventId: 'evt_1', sequence: 4 });
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({ TableName: 'Events', Key: { event_id: 'evt_1' }, ConsistentRead: false });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
    dynamo.on(GetCommand).resolves({ Item: {} });
    await store.recordSequence({ eventId: 'evt_1', sequence: 4 });
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({ Key: { event_id: 'evt_1' }, ExpressionAttributeValues: { ':sequence': 4 } });
  });

  it('notes the head’s last error only while it is still the head', async () => {
    dynamo.on(UpdateCommand).rejects(conditionFailed());
    await expect(store.recordFailure({ orderingKey: 'sub_1', eventId: 'evt_1', reason: 'HTTP 500', at: '2026-01-01T00:00:00.000Z', failingSince: '2026-01-01T00:00:00.000Z' })).resolves.toBeUndefined();
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({ ConditionExpression: 'head_event_id = :event' });
  });
});

describe('deliveries recorded on the key', () => {
  it('live on an item of their own, whose key is no ordering key and differs per key', () => {
    const keys = ['a', 'a ', 'sub_1', 'x'.repeat(128), partitionKey({ subscription_id: 'sub_1', resource_id: 'r1' }, Ordering.resource)];
    const itemKeys = keys.map(deliveredItemKey);
    expect(new Set(itemKeys).size).toBe(keys.length);
    for (const itemKey of itemKeys) {
      expect(itemKey).toHaveLength(129);
      expect(subscriptionIdSchema.safeParse(itemKey).success).toBe(false);
      expect(subscriptionOfKey(itemKey)).toBeUndefined();
    }
  });

  it('are written to that item, never to the key’s own, whatever its numbers weigh', async () => {
    dynamo.on(UpdateCommand).resolves({});
    await store.recordDelivered({ orderingKey: 'sub_1', message: { messageGroupId: 'g1', sequenceNumber: '7' }, sequence: 3 });
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.Key).toEqual({ ordering_key: deliveredItemKey('sub_1') });
  });

  it('are read from that item strongly consistent, and answered by the ordering key', async () => {
    dynamo.on(BatchGetCommand).resolves({ Responses: { OrderingKeys: [{ ordering_key: deliveredItemKey('sub_1'), delivered_group: 'g1', delivered_position: '7', delivered_sequence: 3 }] } });
    const lookup = await store.findDelivered(['sub_1', 'sub_2']);
    expect(lookup('sub_1')).toEqual({ messageGroupId: 'g1', position: '7', sequence: 3 });
    expect(lookup('sub_2')).toBeUndefined();
    const request = dynamo.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.['OrderingKeys'];
    expect(request?.Keys).toEqual([{ ordering_key: deliveredItemKey('sub_1') }, { ordering_key: deliveredItemKey('sub_2') }]);
    expect(request?.ConsistentRead).toBe(true);
  });
});

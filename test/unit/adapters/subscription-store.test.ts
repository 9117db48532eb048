import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../lambda/adapters/aws-clients.js';
import { createSubscriptionStore } from '../../../lambda/adapters/subscription-store.js';

const dynamo = mockClient(DynamoDBDocumentClient);
const store = createSubscriptionStore(createDocumentClient({ region: 'us-east-1' }), 'Subscriptions');
const at = '2026-12-02T12:00:00.000Z';
const input = { subscription_id: 'sub_1', tenant_id: 't1', url: 'https://example.com/hook', secret: 'whsec_new', now: at };
const old = { subscription_id: 'sub_1', tenant_id: 't1', url: 'https://example.com/old', secret: 'whsec_old', created_at: '2026-01-01T00:00:00.000Z' };
/** What an item written before `batch_size` and `ordering` existed is read as. */
const DEFAULTS = { batch_size: 1, ordering: 'subscription' } as const;
const KEEP_SETTINGS = 'batch_size = if_not_exists(batch_size, :batch), ordering = if_not_exists(ordering, :ordering)';

beforeEach(() => dynamo.reset());

describe('subscription store put', () => {
  it('creates or replaces in one UpdateItem conditioned on the tenant, returning the old item', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const { now, ...fields } = input;
    expect(await store.put(input)).toEqual({ kind: 'created', subscription: { ...fields, ...DEFAULTS, created_at: now } });
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'Subscriptions',
      Key: { subscription_id: 'sub_1' },
      UpdateExpression: `SET tenant_id = :tenant, #url = :url, secret = :secret, ${KEEP_SETTINGS}, updated_at = :now, created_at = if_not_exists(created_at, :now) REMOVE previous_secret, previous_secret_expires_at`,
      ConditionExpression: 'attribute_not_exists(#id) OR tenant_id = :tenant',
      ExpressionAttributeNames: { '#url': 'url', '#id': 'subscription_id' },
      ExpressionAttributeValues: { ':tenant': 't1', ':url': 'https://example.com/hook', ':secret': 'whsec_new', ':batch': 1, ':ordering': 'subscription', ':now': at },
      ReturnValues: 'ALL_OLD',
    });
  });

  it('ends a rotation’s grace when a secret is given, and keeps it when none is', async () => {
    const rotated = { ...old, previous_secret: 'whsec_older', previous_secret_expires_at: '2026-12-03T12:00:00.000Z' };
    dynamo.on(UpdateCommand).resolves({ Attributes: rotated });
    const { now: _now, ...fields } = input;
    expect(await store.put(input)).toEqual({ kind: 'replaced', subscription: { ...fields, ...DEFAULTS, created_at: old.created_at } });
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).toMatch(/ REMOVE previous_secret, previous_secret_expires_at$/);
    const kept = await store.put({ ...input, shouldKeepExistingSecret: true });
    expect(kept).toMatchObject({ subscription: { secret: 'whsec_old', previous_secret: 'whsec_older', previous_secret_expires_at: rotated.previous_secret_expires_at } });
    expect(dynamo.commandCalls(UpdateCommand)[1]?.args[0].input.UpdateExpression).not.toContain('previous_secret');
  });

  it('replaces a given secret, and answers the secret it stored', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: old });
    const outcome = await store.put(input);
    expect(outcome).toMatchObject({ kind: 'replaced', subscription: { secret: 'whsec_new', created_at: old.created_at } });
  });

  it('keeps the existing secret with if_not_exists when none is given, and answers the kept one', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({ Attributes: old }).resolvesOnce({});
    expect(await store.put({ ...input, shouldKeepExistingSecret: true })).toMatchObject({ kind: 'replaced', subscription: { secret: 'whsec_old', url: input.url } });
    // A new subscription stores the generated one.
    expect(await store.put({ ...input, shouldKeepExistingSecret: true })).toMatchObject({ kind: 'created', subscription: { secret: 'whsec_new' } });
    for (const call of dynamo.commandCalls(UpdateCommand)) {
      expect(call.args[0].input.UpdateExpression).toBe(`SET tenant_id = :tenant, #url = :url, secret = if_not_exists(secret, :secret), ${KEEP_SETTINGS}, updated_at = :now, created_at = if_not_exists(created_at, :now)`);
      expect(call.args[0].input.ConditionExpression).toBe('attribute_not_exists(#id) OR tenant_id = :tenant');
    }
  });

  it('sets batch_size and ordering when given, and answers them', async () => {
    dynamo.on(UpdateCommand).resolves({ Attributes: { ...old, batch_size: 3, ordering: 'subscription' } });
    expect(await store.put({ ...input, batch_size: 10, ordering: 'resource' })).toMatchObject({ kind: 'replaced', subscription: { batch_size: 10, ordering: 'resource' } });
    const call = dynamo.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(call?.UpdateExpression).toContain('batch_size = :batch, ordering = :ordering,');
    expect(call?.ExpressionAttributeValues).toMatchObject({ ':batch': 10, ':ordering': 'resource' });
  });

  it('keeps the stored batch_size and ordering when a replacement omits them, and answers those', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({ Attributes: { ...old, batch_size: 4, ordering: 'resource' } }).resolvesOnce({ Attributes: old });
    expect(await store.put(input)).toMatchObject({ kind: 'replaced', subscription: { batch_size: 4, ordering: 'resource' } });
    // An item written before the fields existed answers the defaults, which the write stored.
    expect(await store.put(input)).toMatchObject({ kind: 'replaced', subscription: DEFAULTS });
  });

  it('answers tenant_mismatch, not a fault, when another tenant holds the id', async () => {
    dynamo.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    expect(await store.put({ ...input, tenant_id: 't2' })).toEqual({ kind: 'tenant_mismatch' });
  });

  it('rethrows any other error', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('throttled'));
    await expect(store.put(input)).rejects.toThrow('throttled');
  });
});

describe('subscription store rotateSecret', () => {
  const rotation = { subscriptionId: 'sub_1', secret: 'whsec_new', previousSecretExpiresAt: '2026-12-03T12:00:00.000Z', now: at };

  it('moves the secret to previous_secret and sets the new one in one UpdateItem conditioned on the subscription existing', async () => {
    dynamo.on(UpdateCommand).resolves({});
    expect(await store.rotateSecret(rotation)).toBe(true);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'Subscriptions',
      Key: { subscription_id: 'sub_1' },
      UpdateExpression: 'SET previous_secret = secret, previous_secret_expires_at = :expires, secret = :secret, updated_at = :now',
      ConditionExpression: 'attribute_exists(#id)',
      ExpressionAttributeNames: { '#id': 'subscription_id' },
      ExpressionAttributeValues: { ':secret': 'whsec_new', ':expires': rotation.previousSecretExpiresAt, ':now': at },
    });
  });

  it('answers false, not a fault, when there is no such subscription', async () => {
    dynamo.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    expect(await store.rotateSecret(rotation)).toBe(false);
  });
});

describe('subscription store reads', () => {
  it('reads a subscription strongly consistent for the API', async () => {
    dynamo.on(GetCommand).resolves({ Item: old });
    expect(await store.get('sub_1')).toEqual({ ...old, ...DEFAULTS });
    expect(dynamo.commandCalls(GetCommand).map((call) => call.args[0].input)).toEqual([{ TableName: 'Subscriptions', Key: { subscription_id: 'sub_1' }, ConsistentRead: true }]);
  });

  it('finds tenants and orderings with one eventually consistent read when every subscription is found', async () => {
    dynamo.on(BatchGetCommand).resolves({ Responses: { Subscriptions: [{ subscription_id: 'sub_1', tenant_id: 't1' }, { subscription_id: 'sub_2', tenant_id: 't2', ordering: 'resource' }] } });
    expect(await store.findRouting(['sub_1', 'sub_2'])).toEqual(
      new Map([
        ['sub_1', { tenantId: 't1', ordering: 'subscription' }],
        ['sub_2', { tenantId: 't2', ordering: 'resource' }],
      ]),
    );
    const calls = dynamo.commandCalls(BatchGetCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.args[0].input.RequestItems?.Subscriptions).toMatchObject({ Keys: [{ subscription_id: 'sub_1' }, { subscription_id: 'sub_2' }], ConsistentRead: false });
  });

  it('reads the ids the first read missed again, strongly consistent, before calling them unknown', async () => {
    dynamo
      .on(BatchGetCommand)
      .resolvesOnce({ Responses: { Subscriptions: [{ subscription_id: 'sub_1', tenant_id: 't1' }] } })
      .resolvesOnce({ Responses: { Subscriptions: [{ subscription_id: 'sub_2', tenant_id: 't2' }] } });
    expect([...(await store.findRouting(['sub_1', 'sub_2', 'sub_3'])).keys()]).toEqual(['sub_1', 'sub_2']);
    const calls = dynamo.commandCalls(BatchGetCommand).map((call) => call.args[0].input.RequestItems?.Subscriptions);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ Keys: [{ subscription_id: 'sub_1' }, { subscription_id: 'sub_2' }, { subscription_id: 'sub_3' }], ConsistentRead: false });
    expect(calls[1]).toMatchObject({ Keys: [{ subscription_id: 'sub_2' }, { subscription_id: 'sub_3' }], ConsistentRead: true });
  });
});

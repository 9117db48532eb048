/**
 * The DynamoDB model against a real DynamoDB: every scenario sends the same commands, through the
 * same DocumentClient settings, to the model and to dynalite (the embedded DynamoDB the local stack
 * runs), and asserts equal outputs, equal error names and, at the end, equal table contents.
 *
 * Where dynalite is known to differ from DynamoDB the model is tested alone, against what the AWS
 * documentation says, and those tests say so: dynalite ignores ReturnValuesOnConditionCheckFailure,
 * compares strings in conditions by UTF-16 units, compares lists and maps by reference, takes false
 * and '' for absent in IN and attribute_type, stores an empty string as an index key, removes list
 * elements one after the other, and lets Select go with a ProjectionExpression. It has no TTL and no
 * transactions, and neither has the model (it refuses TransactWrite).
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, type AttributeDefinition, type GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeadLetterStore } from '../../../lambda/adapters/dead-letter-store.js';
import { createEventStore } from '../../../lambda/adapters/event-store.js';
import { createGroupStore, MAX_KEYS_TRACKED } from '../../../lambda/adapters/group-store.js';
import { createKeptEventStore } from '../../../lambda/adapters/kept-event-store.js';
import { createOrderingKeyStore } from '../../../lambda/adapters/ordering-key-store.js';
import { createReplayStateStore } from '../../../lambda/adapters/replay-state-store.js';
import { createSettingsStore } from '../../../lambda/adapters/settings-store.js';
import { createSubscriptionStore } from '../../../lambda/adapters/subscription-store.js';
import { encodeQueuedEvent, type QueuedEvent } from '../../../lambda/core/event.js';
import { HeadState } from '../../../lambda/core/lag.js';
import { TABLES, type TableDefinition } from '../../../lambda/resources.js';
import { createLocalClients, type LocalClients } from '../../../local/clients.js';
import { createModelDocumentClient, DynamoModel, DynamoModelUnsupportedError, ExpressionParser, type CallGate, type ModelTableDefinition } from './dynamo-model.js';

type DocumentCommand = GetCommand | PutCommand | UpdateCommand | DeleteCommand | QueryCommand | ScanCommand | BatchGetCommand | BatchWriteCommand;

/** What a call came to: its output without `$metadata`, or the name of its error. */
type Outcome = { readonly output: Record<string, unknown> } | { readonly error: string };

let server: Server;
let clients: LocalClients;

beforeAll(async () => {
  // As local/emulators.ts starts it: in memory, tables usable at once.
  server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  // The project's own client factory: removeUndefinedValues, as in Lambda.
  clients = createLocalClients({ sqsEndpoint: 'http://127.0.0.1:9', dynamoEndpoint: `http://127.0.0.1:${port}` });
});

afterAll(async () => {
  clients.destroy();
  await new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
});

let tableCount = 0;

/** The same tables, under fresh names, in dynalite and in a new model. */
interface Pair {
  readonly real: DynamoDBDocumentClient;
  readonly model: DynamoDBDocumentClient;
  readonly modelState: DynamoModel;
  /** Physical name of each table, by the name in its definition. */
  readonly names: Readonly<Record<string, string>>;
  readonly definitions: readonly ModelTableDefinition[];
}

async function createRealTable(definition: ModelTableDefinition): Promise<void> {
  const types = new Map<string, 'S' | 'N'>([[definition.partitionKey, 'S']]);
  if (definition.sortKey !== undefined) types.set(definition.sortKey.name, definition.sortKey.type);
  for (const index of definition.indexes ?? []) {
    types.set(index.partitionKey, 'S');
    if (index.sortKey !== undefined) types.set(index.sortKey.name, index.sortKey.type);
  }
  const attributeDefinitions: AttributeDefinition[] = [...types].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
  const indexes: GlobalSecondaryIndex[] = (definition.indexes ?? []).map((index) => ({
    IndexName: index.name,
    KeySchema: [{ AttributeName: index.partitionKey, KeyType: 'HASH' }, ...(index.sortKey === undefined ? [] : [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' as const }])],
    Projection: { ProjectionType: index.projection ?? 'ALL' },
  }));
  await clients.dynamo.send(
    new CreateTableCommand({
      TableName: definition.name,
      AttributeDefinitions: attributeDefinitions,
      KeySchema: [{ AttributeName: definition.partitionKey, KeyType: 'HASH' }, ...(definition.sortKey === undefined ? [] : [{ AttributeName: definition.sortKey.name, KeyType: 'RANGE' as const }])],
      BillingMode: 'PAY_PER_REQUEST',
      ...(indexes.length === 0 ? {} : { GlobalSecondaryIndexes: indexes }),
    }),
  );
  for (;;) {
    const { Table } = await clients.dynamo.send(new DescribeTableCommand({ TableName: definition.name }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function createPair(definitions: readonly ModelTableDefinition[]): Promise<Pair> {
  tableCount += 1;
  const named = definitions.map((definition) => ({ ...definition, name: `${definition.name}-${tableCount}` }));
  await Promise.all(named.map(createRealTable));
  const modelState = new DynamoModel(named);
  return {
    real: clients.dynamo,
    model: createModelDocumentClient(modelState),
    modelState,
    names: Object.fromEntries(definitions.map((definition, index) => [definition.name, named[index]?.name ?? ''])),
    definitions: named,
  };
}

function withoutMetadata(output: object): Record<string, unknown> {
  const { $metadata: _metadata, ...rest } = output as Record<string, unknown>;
  return rest;
}

/** Sends any of the commands (the client's overloads take one command type at a time). */
async function send(client: DynamoDBDocumentClient, command: DocumentCommand): Promise<object> {
  if (command instanceof BatchWriteCommand) return client.send(command);
  if (command instanceof BatchGetCommand) return client.send(command);
  if (command instanceof QueryCommand) return client.send(command);
  if (command instanceof ScanCommand) return client.send(command);
  if (command instanceof PutCommand) return client.send(command);
  if (command instanceof DeleteCommand) return client.send(command);
  if (command instanceof UpdateCommand) return client.send(command);
  return client.send(command);
}

async function outcomeOf(client: DynamoDBDocumentClient, command: DocumentCommand): Promise<Outcome> {
  try {
    return { output: withoutMetadata(await send(client, command)) };
  } catch (error) {
    return { error: error instanceof Error ? error.name : String(error) };
  }
}

/** A stable text for any value, sets included: for sorting results whose order DynamoDB leaves open. */
function canonical(value: unknown): string {
  if (value instanceof Set) return `set(${[...value].map(canonical).sort().join(',')})`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, member]) => `${key}:${canonical(member)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

function sortedItems(items: unknown): unknown[] {
  return Array.isArray(items) ? [...items].sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1)) : [];
}

/** Items sorted, for reads whose order DynamoDB leaves open (Scan, BatchGet, ties in an index). */
function unordered(outcome: Outcome): Outcome {
  if (!('output' in outcome)) return outcome;
  const { Items, Responses, ...rest } = outcome.output;
  return {
    output: {
      ...rest,
      ...(Items === undefined ? {} : { Items: sortedItems(Items) }),
      ...(Responses === undefined ? {} : { Responses: Object.fromEntries(Object.entries(Responses as object).map(([table, items]) => [table, sortedItems(items)])) }),
    },
  };
}

/**
 * Sends the command `build` makes (a new one for each client) to both, and expects the same outcome.
 * @returns dynalite's outcome
 */
async function expectSame(pair: Pair, build: () => DocumentCommand, normalize: (outcome: Outcome) => Outcome = (outcome) => outcome): Promise<Outcome> {
  const real = await outcomeOf(pair.real, build());
  const model = await outcomeOf(pair.model, build());
  expect(normalize(model), `${build().constructor.name} ${canonical(build().input)}`).toEqual(normalize(real));
  return real;
}

async function scanAll(client: DynamoDBDocumentClient, tableName: string): Promise<unknown[]> {
  const items: unknown[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const output = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey }));
    items.push(...(output.Items ?? []));
    startKey = output.LastEvaluatedKey;
  } while (startKey !== undefined);
  return sortedItems(items);
}

/** Every table holds the same items in both. */
async function expectSameTables(pair: Pair): Promise<void> {
  for (const { name } of pair.definitions) {
    expect(await scanAll(pair.model, name), `contents of ${name}`).toEqual(await scanAll(pair.real, name));
  }
}

function isOutput(outcome: Outcome): outcome is { readonly output: Record<string, unknown> } {
  return 'output' in outcome;
}

/** Pages through a Query or Scan on both, page by page, expecting the same pages (or, `unorderedPages`, the same items in all). */
async function expectSamePages(pair: Pair, build: (startKey: Record<string, unknown> | undefined) => QueryCommand | ScanCommand, options: { readonly isUnordered?: boolean } = {}): Promise<number> {
  if (options.isUnordered === true) {
    const collect = async (client: DynamoDBDocumentClient) => {
      const items: unknown[] = [];
      let count = 0;
      let scanned = 0;
      let pages = 0;
      let startKey: Record<string, unknown> | undefined;
      do {
        const output = await client.send(build(startKey));
        items.push(...(output.Items ?? []));
        count += output.Count ?? 0;
        scanned += output.ScannedCount ?? 0;
        pages += 1;
        startKey = output.LastEvaluatedKey;
      } while (startKey !== undefined);
      return { items: sortedItems(items), count, scanned, pages };
    };
    const real = await collect(pair.real);
    expect(await collect(pair.model)).toEqual(real);
    return real.pages;
  }
  let startKey: Record<string, unknown> | undefined;
  let pages = 0;
  do {
    const key = startKey;
    const outcome = await expectSame(pair, () => build(key));
    pages += 1;
    startKey = isOutput(outcome) ? (outcome.output.LastEvaluatedKey as Record<string, unknown> | undefined) : undefined;
  } while (startKey !== undefined && pages < 50);
  return pages;
}

const things: ModelTableDefinition = { name: 'Things', partitionKey: 'pk' };

describe('DynamoModel against dynalite: the adapters', () => {
  /** The project's tables, as lambda/resources.ts declares them. */
  const projectTables: ModelTableDefinition[] = Object.values<TableDefinition>(TABLES).map((table) => ({
    name: table.localName,
    partitionKey: table.partitionKey,
    ...(table.sortKey === undefined ? {} : { sortKey: { name: table.sortKey, type: 'S' as const } }),
    indexes: (table.indexes ?? []).map((index) => ({
      name: index.name,
      partitionKey: index.partitionKey,
      ...(index.sortKey === undefined ? {} : { sortKey: { name: index.sortKey, type: 'S' as const } }),
      projection: index.projection,
    })),
  }));

  /** A client that records each call's outcome, so that the adapters' own calls are compared one by one. */
  function recording(client: DynamoDBDocumentClient, log: { readonly command: string; readonly outcome: Outcome }[]): DynamoDBDocumentClient {
    const recorder = {
      send: async (command: DocumentCommand) => {
        const outcome = await outcomeOf(client, command);
        log.push({ command: `${command.constructor.name} ${canonical(command.input)}`, outcome });
        if ('error' in outcome) throw Object.assign(new Error(outcome.error), { name: outcome.error });
        return { ...outcome.output, $metadata: {} };
      },
    };
    // The adapters call send() only.
    return recorder as unknown as DynamoDBDocumentClient;
  }

  /** Runs `scenario` with adapters over dynalite and over the model; expects equal results, equal calls, equal tables. */
  async function expectSameThroughAdapters<T>(scenario: (client: DynamoDBDocumentClient, names: Readonly<Record<string, string>>) => Promise<T>, options: { readonly isUnorderedLog?: boolean } = {}): Promise<T> {
    const pair = await createPair(projectTables);
    const realLog: { command: string; outcome: Outcome }[] = [];
    const modelLog: { command: string; outcome: Outcome }[] = [];
    const real = await scenario(recording(pair.real, realLog), pair.names);
    const model = await scenario(recording(pair.model, modelLog), pair.names);
    expect(model).toEqual(real);
    // BatchGet answers in any order; so do the concurrent calls of listActiveGroups.
    const order = (log: typeof realLog) =>
      options.isUnorderedLog === true
        ? [...log].sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1)).map((entry) => ({ ...entry, outcome: unordered(entry.outcome) }))
        : log.map((entry) => (entry.command.startsWith('BatchGetCommand') ? { ...entry, outcome: unordered(entry.outcome) } : entry));
    expect(order(modelLog)).toEqual(order(realLog));
    await expectSameTables(pair);
    return real;
  }

  const queued = (eventId: string, subscriptionId = 'sub_1'): QueuedEvent => ({
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: subscriptionId, type: 'x', payload_json: '{}' },
    ordering_key: `key-${subscriptionId}`,
    message_group_id: 'g1',
    accepted_at: '2026-01-01T00:00:00.000Z',
  });

  it('gives the same answers to the subscription store when a secret is rotated, rotated again and replaced', async () => {
    const result = await expectSameThroughAdapters(async (client, names) => {
      const store = createSubscriptionStore(client, names.Subscriptions ?? '');
      const input = { subscription_id: 'sub_1', tenant_id: 't1', url: 'https://a.example', now: '2026-01-01T00:00:00.000Z' };
      const missing = await store.rotateSecret({ subscriptionId: 'sub_9', secret: 's9', previousSecretExpiresAt: '2026-01-02T00:00:00.000Z', now: input.now });
      await store.put({ ...input, secret: 's1' });
      await store.rotateSecret({ subscriptionId: 'sub_1', secret: 's2', previousSecretExpiresAt: '2026-01-02T00:00:00.000Z', now: input.now });
      const rotated = await store.get('sub_1');
      await store.rotateSecret({ subscriptionId: 'sub_1', secret: 's3', previousSecretExpiresAt: '2026-01-03T00:00:00.000Z', now: input.now });
      const rotatedAgain = await store.get('sub_1');
      await store.put({ ...input, secret: 's1', shouldKeepExistingSecret: true });
      const kept = await store.get('sub_1');
      await store.put({ ...input, secret: 's4' });
      const replaced = await store.get('sub_1');
      return { missing, rotated, rotatedAgain, kept, replaced, sub9: await store.get('sub_9') };
    });
    expect(result.missing).toBe(false);
    expect(result.sub9).toBeUndefined();
    expect(result.rotated).toMatchObject({ secret: 's2', previous_secret: 's1', previous_secret_expires_at: '2026-01-02T00:00:00.000Z' });
    expect(result.rotatedAgain).toMatchObject({ secret: 's3', previous_secret: 's2', previous_secret_expires_at: '2026-01-03T00:00:00.000Z' });
    expect(result.kept).toMatchObject({ secret: 's3', previous_secret: 's2' });
    expect(result.replaced).toMatchObject({ secret: 's4' });
    expect(result.replaced).not.toHaveProperty('previous_secret');
    expect(result.replaced).not.toHaveProperty('previous_secret_expires_at');
  });

  it('gives the same answers to the subscription store when subscriptions are created, replaced and looked up', async () => {
    const result = await expectSameThroughAdapters(async (client, names) => {
      const store = createSubscriptionStore(client, names.Subscriptions ?? '');
      const missing = await store.get('sub_1');
      const created = await store.put({ subscription_id: 'sub_1', tenant_id: 't1', url: 'https://a.example', secret: 's1', now: '2026-01-01T00:00:00Z' });
      const replaced = await store.put({ subscription_id: 'sub_1', tenant_id: 't1', url: 'https://b.example', secret: 's2', now: '2026-01-02T00:00:00Z' });
      const kept = await store.put({ subscription_id: 'sub_1', tenant_id: 't1', url: 'https://b.example', secret: 's9', shouldKeepExistingSecret: true, now: '2026-01-02T00:00:01Z' });
      const takenOver = await store.put({ subscription_id: 'sub_1', tenant_id: 't2', url: 'https://evil.example', secret: 's4', now: '2026-01-02T00:00:02Z' });
      await store.put({ subscription_id: 'sub_2', tenant_id: 't2', url: 'https://c.example', secret: 's3', shouldKeepExistingSecret: true, now: '2026-01-03T00:00:00Z' });
      const found = await store.get('sub_1');
      const tenants = new Map([...(await store.findRouting(['sub_2', 'sub_1', 'sub_9', 'sub_1']))].map(([id, routing]) => [id, routing.tenantId]));
      return { missing, created, replaced, kept, takenOver, found, sub2: await store.get('sub_2'), tenants: [...tenants].sort() };
    });
    expect(result.created.kind).toBe('created');
    expect(result.replaced.kind).toBe('replaced');
    expect(result.kept).toMatchObject({ kind: 'replaced', subscription: { secret: 's2' } });
    expect(result.takenOver).toEqual({ kind: 'tenant_mismatch' });
    expect(result.found).toMatchObject({ tenant_id: 't1', url: 'https://b.example', secret: 's2' });
    expect(result.sub2?.secret).toBe('s3');
    expect(result.tenants).toEqual([
      ['sub_1', 't1'],
      ['sub_2', 't2'],
    ]);
  });

  it('gives the same answers to the event store through acceptance, settling and dead-lettering, refused conditions included', async () => {
    const result = await expectSameThroughAdapters(async (client, names) => {
      const store = createEventStore(client, { tableName: names.Events ?? '', ttlDays: 30 });
      const record = (eventId: string) => ({ eventId, subscriptionId: 'sub_1', tenantId: 't', orderingKey: 'key-sub_1', messageGroupId: 'g1', acceptedAt: '2026-01-01T00:00:00.000Z' });
      const first = await store.recordAccepted(record('evt_1'));
      const again = await store.recordAccepted(record('evt_1'));
      const settledEarly = await store.markDelivered({ queued: queued('evt_2'), sequence: 2, attempts: 1, at: '2026-01-01T00:00:01.000Z' });
      const afterSettled = await store.recordAccepted(record('evt_2'));
      const delivered = await store.isSettled({ eventId: 'evt_2', redrivenAt: undefined });
      const pending = await store.isSettled({ eventId: 'evt_1', redrivenAt: undefined });
      const deadLetters = [];
      for (const [index, eventId] of ['evt_5', 'evt_3', 'evt_4'].entries()) {
        deadLetters.push(await store.markDeadLettered({ queued: queued(eventId), sequence: index + 3, attempts: 5, at: `2026-01-01T00:00:0${5 - index}.000Z`, reason: `failed ${index}` }));
      }
      // A backstop import may know no sequence.
      deadLetters.push(await store.markDeadLettered({ queued: queued('evt_7'), sequence: undefined, attempts: 0, at: '2026-01-01T00:00:09.000Z', reason: 'backstop' }));
      const settledBeforeRedrive = await store.isSettled({ eventId: 'evt_3', redrivenAt: '2026-01-01T00:00:00.000Z' });
      const settledAfterRedrive = await store.isSettled({ eventId: 'evt_3', redrivenAt: '2026-01-02T00:00:00.000Z' });
      // With a place in the queue: the same place again is the same write repeated, another is a duplicate.
      const placed = { ...record('evt_8'), queuePosition: 'g1/0001' };
      const places = [await store.recordAccepted(placed), await store.recordAccepted(placed), await store.recordAccepted({ ...placed, queuePosition: 'g1/0002' })];
      const placeRead = (await store.findSettled([{ eventId: 'evt_8', redrivenAt: undefined }])).positionOf('evt_8');
      const lookup = await store.findSettled(['evt_1', 'evt_2', 'evt_3', 'evt_9'].map((eventId) => ({ eventId, redrivenAt: undefined })));
      const settledInBatch = ['evt_1', 'evt_2', 'evt_3', 'evt_9'].map((eventId) => lookup({ eventId, redrivenAt: undefined }));
      const redrivenInBatch = lookup({ eventId: 'evt_3', redrivenAt: '2026-01-02T00:00:00.000Z' });
      // A late delivery is recorded only over an unsettled record.
      const late = await store.markDeliveredUnlessSettled({ queued: queued('evt_1'), sequence: 1, attempts: 1, at: '2026-01-01T00:00:10.000Z' });
      const lateOverDeadLetter = await store.markDeliveredUnlessSettled({ queued: queued('evt_3'), sequence: 4, attempts: 1, at: '2026-01-01T00:00:10.000Z' });
      const afterLate = await store.isSettled({ eventId: 'evt_1', redrivenAt: undefined });
      // Still dead-lettered, not delivered: a later redrive of it is not settled.
      const deadLetterKept = !(await store.isSettled({ eventId: 'evt_3', redrivenAt: '2026-01-02T00:00:00.000Z' }));
      return {
        first, again, settledEarly, afterSettled, delivered, pending, deadLetters, settledBeforeRedrive, settledAfterRedrive, places, placeRead,
        settledInBatch, redrivenInBatch, late, lateOverDeadLetter: lateOverDeadLetter ?? 'refused', afterLate, deadLetterKept,
      };
    });
    expect(result).toMatchObject({ first: 'recorded', again: 'already_recorded', afterSettled: 'recorded_settled', delivered: true, pending: false, settledBeforeRedrive: true, settledAfterRedrive: false });
    expect(result).toMatchObject({ places: ['recorded', 'recorded', 'already_recorded'], placeRead: 'g1/0001' });
    expect(result).toMatchObject({ settledInBatch: [false, true, true, false], redrivenInBatch: false, late: { wasAccepted: true }, lateOverDeadLetter: 'refused', afterLate: true, deadLetterKept: true });
  });

  it('gives the same answers to the dead-letter store through writes, rewrites, pages, conditional removals and its count', async () => {
    const objects = new Map<string, string>();
    const payloads = {
      put: async (key: string, body: string) => void objects.set(key, body),
      get: async (key: string) => objects.get(key) ?? '',
      remove: async (key: string) => void objects.delete(key),
    };
    const result = await expectSameThroughAdapters(async (client, names) => {
      objects.clear();
      const store = createDeadLetterStore(client, { tableName: names.DeadLetters ?? '', ttlDays: 30, payloads });
      const letter = (eventId: string, sequence: number | undefined, at: string) => ({ queued: queued(eventId), sequence, attempts: 2, reason: 'HTTP 500', deadLetteredAt: at });
      for (const [eventId, sequence] of [['evt_12', 12], ['evt_3', 3], ['evt_7', 7], ['evt_x', undefined]] as const) {
        await store.put(letter(eventId, sequence, '2026-01-01T00:00:00.000Z'));
      }
      // A second give-up of the same event rewrites it in its place, and is not counted twice.
      await store.put(letter('evt_7', 7, '2026-01-01T00:01:00.000Z'));
      const counted = await store.count('sub_1');
      const first = await store.readPage({ subscriptionId: 'sub_1', after: undefined, limit: 2 });
      const second = await store.readPage({ subscriptionId: 'sub_1', after: first.nextAfter, limit: 2 });
      const third = await store.readPage({ subscriptionId: 'sub_1', after: second.nextAfter, limit: 2 });
      const rows = await store.listRows({ subscriptionId: 'sub_1', after: undefined, limit: 10 });
      const [stale] = first.letters.filter((l) => l.queued.event.event_id === 'evt_7');
      const removedStale = stale === undefined ? undefined : await store.remove({ ...stale, deadLetteredAt: '2026-01-01T00:00:00.000Z' });
      const [three] = first.letters;
      const removed = three === undefined ? undefined : await store.remove(three);
      const removedAgain = three === undefined ? undefined : await store.remove(three);
      const after = await store.count('sub_1');
      const other = await store.count('sub_2');
      const order = [...first.letters, ...second.letters, ...third.letters].map((l) => [l.queued.event.event_id, l.sequence]);
      return { counted, order, rows: rows.rows.map((row) => row.event_id), removedStale, removed, removedAgain, after, other, third: third.nextAfter };
    });
    expect(result).toMatchObject({ counted: 4, removedStale: 'replaced', removed: 'removed', removedAgain: 'gone', after: 3, other: 0 });
    expect(result.order).toEqual([['evt_3', 3], ['evt_7', 7], ['evt_12', 12], ['evt_x', undefined]]);
  });

  it('gives the same answers to the kept-event store (binary bodies, windows, pages, run numbers) and the replay state store', async () => {
    const payloads = { put: async () => undefined, get: async () => '', remove: async () => undefined };
    const result = await expectSameThroughAdapters(async (client, names) => {
      const store = createKeptEventStore(client, { tableName: names.DeadLetters ?? '', retentionDays: 7, payloads });
      const at = (second: number) => `2026-01-01T00:00:0${second}.000Z`;
      for (const second of [3, 1, 2]) {
        const event = { ...queued(`evt_${second}`), accepted_at: at(second) };
        await store.keep({ events: [{ queued: event, queuePosition: `g1/${second}` }], body: encodeQueuedEvent(event) });
      }
      await store.keepNumbers({ subscriptionId: 'sub_1', orderingKey: 'key-sub_1', firstPosition: 'g1/1', firstSequence: 4, eventIds: ['evt_1', 'evt_2'], at: at(5) });
      const first = await store.readWindow({ subscriptionId: 'sub_1', since: at(1), until: at(3), after: undefined, limit: 2 });
      const second = await store.readWindow({ subscriptionId: 'sub_1', since: at(1), until: at(3), after: first.nextAfter, limit: 2 });
      const run = await store.findNumbers({ subscriptionId: 'sub_1', orderingKey: 'key-sub_1', queuePosition: 'g1/2' });
      const states = createReplayStateStore(client, names.Subscriptions ?? '');
      const replay = { since: at(1), until: at(3), startedAt: at(9), replayed: 0, deadLettered: 0, notDelivered: 0 };
      const unknown = await states.start('sub_1', replay, { isUntilGiven: true });
      return { ids: [...first.events, ...second.events].map((event) => event.queued.event.event_id), run, unknown };
    });
    expect(result).toMatchObject({ ids: ['evt_1', 'evt_2', 'evt_3'], run: { firstSequence: 4, eventIds: ['evt_1', 'evt_2'] }, unknown: undefined });
  });

  it('gives the same answers to the ordering-key store through new heads, retries, exhaustion, skips and redrives', async () => {
    const result = await expectSameThroughAdapters(async (client, names) => {
      const store = createOrderingKeyStore(client, names.OrderingKeys ?? '');
      const key = 'key-1';
      const tickets = [];
      for (let attempt = 0; attempt < 4; attempt += 1) tickets.push(await store.beginAttempt({ orderingKey: key, eventId: 'evt_1', maxAttempts: 3 }));
      await store.recordFailure({ orderingKey: key, eventId: 'evt_1', reason: 'HTTP 500', at: '2026-01-01T00:00:00.000Z', failingSince: '2026-01-01T00:00:00.000Z' });
      await store.recordFailure({ orderingKey: key, eventId: 'evt_0', reason: 'not the head', at: '2026-01-01T00:00:00.000Z', failingSince: '2026-01-01T00:00:00.000Z' });
      const skipRefused = await store.requestSkip({ orderingKey: key, eventId: 'evt_0', at: '2026-01-01T00:00:00Z' });
      tickets.push(await store.beginAttempt({ orderingKey: key, eventId: 'evt_2', maxAttempts: 3 }));
      const skipped = await store.requestSkip({ orderingKey: key, eventId: 'evt_2', at: '2026-01-01T00:00:00Z' });
      tickets.push(await store.beginAttempt({ orderingKey: key, eventId: 'evt_2', maxAttempts: 3 }));
      tickets.push(await store.beginAttempt({ orderingKey: key, eventId: 'evt_1', maxAttempts: 3, redrive: { redrivenAt: '2026-01-02T00:00:00Z', sequence: 1 } }));
      tickets.push(await store.beginAttempt({ orderingKey: key, eventId: 'evt_1', maxAttempts: 3, redrive: { redrivenAt: '2026-01-02T00:00:00Z', sequence: 1 } }));
      tickets.push(await store.beginAttempt({ orderingKey: key, eventId: 'evt_3', maxAttempts: 3, redrive: { redrivenAt: '2026-01-03T00:00:00Z', sequence: undefined } }));
      tickets.push(await store.beginAttempt({ orderingKey: 'key-2', eventId: 'evt_9', maxAttempts: 3 }));
      // The place of a head's message in its group: an older message is superseded, a newer one
      // (or one in another group) begins; 20-digit and longer numbers compare as numbers.
      const at = (group: string, sequenceNumber: string) => ({ messageGroupId: group, sequenceNumber });
      const placed = [
        await store.beginAttempt({ orderingKey: 'key-3', eventId: 'evt_a', maxAttempts: 3, message: at('g3', '18000000000000065536') }),
        await store.beginAttempt({ orderingKey: 'key-3', eventId: 'evt_b', maxAttempts: 3, message: at('g3', '180000000000000131072') }),
        await store.beginAttempt({ orderingKey: 'key-3', eventId: 'evt_a', maxAttempts: 3, message: at('g3', '18000000000000065536') }),
        await store.beginAttempt({ orderingKey: 'key-3', eventId: 'evt_b', maxAttempts: 3, message: at('g3', '180000000000000131072') }),
        await store.beginAttempt({ orderingKey: 'key-3', eventId: 'evt_c', maxAttempts: 3, message: at('g9', '1') }),
      ];
      return { tickets, skipRefused, skipped, placed };
    });
    expect(result.placed.map((ticket) => [ticket.kind, ticket.sequence, ticket.attempts, ticket.previous?.eventId])).toEqual([
      ['attempt', 1, 1, undefined],
      ['attempt', 2, 1, 'evt_a'],
      ['superseded', 2, 1, 'evt_a'],
      ['attempt', 2, 2, 'evt_a'],
      ['attempt', 3, 1, 'evt_b'],
    ]);
    expect(result.tickets.map((ticket) => ticket.kind)).toEqual(['attempt', 'attempt', 'attempt', 'exhausted', 'attempt', 'skipped', 'attempt', 'attempt', 'attempt', 'attempt']);
    expect(result.tickets.map((ticket) => ticket.sequence)).toEqual([1, 1, 1, 1, 2, 2, 1, 1, 3, 1]);
    expect(result).toMatchObject({ skipRefused: false, skipped: true });
  });

  it('gives the same answers to the group store through intake, progress, draining, redrive and the sparse index of active groups', async () => {
    const result = await expectSameThroughAdapters(
      async (client, names) => {
        const store = createGroupStore(client, names.Groups ?? '');
        await store.recordIntake({ messageGroupId: 'g1', events: 3, orderingKeys: ['k1', 'k2'], acceptedAt: '2026-01-01T00:00:00Z' });
        await store.recordIntake({ messageGroupId: 'g2', events: 1, orderingKeys: ['k3'], acceptedAt: '2026-01-01T00:00:01Z' });
        // A group at its cap of tracked keys: the conditional write with keys is refused, the count goes on.
        await store.recordIntake({ messageGroupId: 'g3', events: 1, orderingKeys: Array.from({ length: MAX_KEYS_TRACKED }, (_, index) => `k${index}`), acceptedAt: '2026-01-01T00:00:02Z' });
        await store.recordIntake({ messageGroupId: 'g3', events: 1, orderingKeys: ['another'], acceptedAt: '2026-01-01T00:00:03Z' });
        const now = new Date('2026-01-01T00:01:00Z');
        await store.recordProgress({ messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, eventId: 'e2', orderingKey: 'k1', attempts: 1, lastError: 'HTTP 500', acceptedAt: '2026-01-01T00:00:00Z' } }, now);
        await store.recordProgress({ messageGroupId: 'g1', settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, eventId: 'e2', orderingKey: 'k1', attempts: 2, lastError: 'HTTP 502', acceptedAt: '2026-01-01T00:00:00Z' } }, now);
        await store.countDeadLetter({ messageGroupId: 'g1', subscriptionId: 's1', position: 'p1' });
        // A rewrite of the same place is not counted again; another place is.
        await store.countDeadLetter({ messageGroupId: 'g1', subscriptionId: 's1', position: 'p1' });
        await store.countDeadLetter({ messageGroupId: 'g1', subscriptionId: 's1', position: 'p2' });
        await store.recordProgress({ messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: '2026-01-01T00:00:00Z', head: { state: HeadState.clear } }, now);
        // g2 drains with nothing dead-lettered: no longer listed (idle in the index until the lag job takes it out).
        await store.recordProgress({ messageGroupId: 'g2', settled: 1, lastSettledAcceptedAt: '2026-01-01T00:00:01Z', head: { state: HeadState.clear } }, now);
        const active = await store.listActiveGroups();
        await store.recordProgress({ messageGroupId: 'g1', settled: 1, lastSettledAcceptedAt: undefined, head: { state: HeadState.unknown } }, now);
        const countedBefore = (await store.getGroup('g1'))?.deadLettered;
        await store.uncountDeadLetter({ messageGroupId: 'g1', subscriptionId: 's1', position: 'p1' });
        await store.uncountDeadLetter({ messageGroupId: 'g1', subscriptionId: 's1', position: 'p2' });
        // A repeated step uncounts nothing more.
        await store.uncountDeadLetter({ messageGroupId: 'g1', subscriptionId: 's1', position: 'p2' });
        await store.recordRedrive({ toGroup: 'g4', orderingKey: 'k1', events: 1, at: '2026-01-02T00:00:00Z' });
        const activeAfter = await store.listActiveGroups();
        return {
          active: [...active].sort((a, b) => a.messageGroupId.localeCompare(b.messageGroupId)),
          activeAfter: [...activeAfter].sort((a, b) => a.messageGroupId.localeCompare(b.messageGroupId)),
          g1: await store.getGroup('g1'),
          g2: await store.getGroup('g2'),
          g5: await store.getGroup('g5'),
          countedBefore,
        };
      },
      // listActiveGroups reads its shards concurrently.
      { isUnorderedLog: true },
    );
    expect(result.active.map((group) => group.messageGroupId)).toEqual(['g1', 'g3']);
    // g1 drained while it had a dead letter, then its dead letter was redriven to another group: it leaves the index.
    expect(result.activeAfter.map((group) => group.messageGroupId)).toEqual(['g3', 'g4']);
    expect(result.g5).toBeUndefined();
    expect(result.countedBefore).toBe(2);
    expect(result.g1?.deadLettered).toBe(0);
  });

  it('gives the same answers to the settings store through pauses and conditional switches', async () => {
    const result = await expectSameThroughAdapters(async (client, names) => {
      const store = createSettingsStore(client, names.Settings ?? '', 4);
      const initial = await store.getRouting();
      const notPaused = await store.switchRouting({ expectedVersion: 0, partitionCount: 8, at: '2026-01-01T00:00:00Z' });
      const paused = await store.setPaused(true, '2026-01-01T00:00:01Z');
      const pausedAgain = await store.setPaused(true, '2026-01-01T00:00:02Z');
      const wrongVersion = await store.switchRouting({ expectedVersion: 3, partitionCount: 8, at: '2026-01-01T00:00:03Z' });
      const switched = await store.switchRouting({ expectedVersion: 0, partitionCount: 8, at: '2026-01-01T00:00:04Z' });
      const switchedToKeys = await store.switchRouting({ expectedVersion: 1, partitionCount: undefined, at: '2026-01-01T00:00:05Z' });
      const resumed = await store.setPaused(false, '2026-01-01T00:00:06Z');
      return { initial, notPaused, paused, pausedAgain, wrongVersion, switched, switchedToKeys, resumed, final: await store.getRouting() };
    });
    expect(result).toMatchObject({ notPaused: false, wrongVersion: false, switched: true, switchedToKeys: true });
    expect(result.final).toMatchObject({ version: 2, isPaused: false, partitionCount: undefined });
  });
});

describe('DynamoModel against dynalite: condition and filter expressions', () => {
  const items: Record<string, unknown>[] = [
    { pk: 'a', n: 5, s: 'apple', b: true, nul: null, l: [1, 'x', { m: 1 }], m: { x: 1, y: { z: 'deep' } }, ss: new Set(['red', 'blue']), ns: new Set([1, 2, 3]), e: '' },
    { pk: 'b', n: 10, s: 'banana', b: false, m: { x: 2 }, l: [] },
    { pk: 'c', n: -1.5, s: 'Apple', ss: new Set(['red']) },
    { pk: 'd', n: 0, s: 'cherry pie', deep: { list: [{ v: 'one' }, { v: 'two' }] } },
    { pk: 'e', n: 0.001, s: 'b' },
    { pk: 'f', n: '5', s: 5 },
    { pk: 'g' },
  ];
  const values: Record<string, unknown> = {
    ':zero': 0,
    ':one': 1,
    ':two': 2,
    ':four': 4,
    ':five': 5,
    ':ten': 10,
    ':fiveText': '5',
    ':apple': 'apple',
    ':banana': 'banana',
    ':a': 'a',
    ':c': 'c',
    ':ap': 'ap',
    ':an': 'an',
    ':red': 'red',
    ':x': 'x',
    ':deep': 'deep',
    ':true': true,
    ':null': null,
    ':empty': '',
    ':N': 'N',
    ':S': 'S',
    ':SS': 'SS',
    ':NS': 'NS',
    ':L': 'L',
    ':M': 'M',
    ':NULL': 'NULL',
    ':BOOL': 'BOOL',
    ':two_text': 'two',
  };
  const filters = [
    'n = :five',
    'n <> :five',
    'n < :five',
    'n <= :five',
    'n > :zero',
    'n >= :zero',
    'n = :fiveText',
    's < :banana',
    's >= :banana',
    'n BETWEEN :zero AND :ten',
    's BETWEEN :a AND :c',
    'n IN (:five, :ten, :fiveText)',
    's IN (:apple, :five)',
    'attribute_exists(m.y.z)',
    'attribute_exists(l[2].m)',
    'attribute_not_exists(b)',
    'attribute_type(n, :N)',
    'attribute_type(s, :S)',
    'attribute_type(nul, :NULL)',
    'attribute_type(ss, :SS)',
    'attribute_type(ns, :NS)',
    'attribute_type(l, :L)',
    'attribute_type(m, :M)',
    'begins_with(s, :ap)',
    'contains(s, :an)',
    'contains(ss, :red)',
    'contains(ns, :two)',
    'contains(l, :x)',
    'size(s) > :four',
    'size(ss) = :two',
    'size(l) >= :one',
    'size(m) = :two',
    'NOT n = :five',
    'n = :five OR n = :ten AND s = :banana',
    '(n = :five OR n = :ten) AND s = :banana',
    'NOT (n = :five OR b = :true)',
    'NOT attribute_exists(n) OR n < :zero',
    'm.x = :one',
    '#m.#x = :two',
    'l[0] = :one',
    'l[2].m = :one',
    'deep.#list[1].v = :two_text',
    'm.y.z = :deep',
    'e = :empty',
    'b = :true',
    'nul = :null',
    'n = s',
    'n <> nothing_here',
    'nothing_here < :five',
  ];
  const namesFor = (filter: string): Record<string, string> | undefined => {
    const names: Record<string, string> = {};
    if (filter.includes('#m')) names['#m'] = 'm';
    if (filter.includes('#x')) names['#x'] = 'x';
    if (filter.includes('#list')) names['#list'] = 'list';
    return Object.keys(names).length === 0 ? undefined : names;
  };
  const valuesFor = (filter: string): Record<string, unknown> | undefined => {
    const used = Object.fromEntries(Object.entries(values).filter(([name]) => new RegExp(`${name}(?![A-Za-z0-9_])`).test(filter)));
    return Object.keys(used).length === 0 ? undefined : used;
  };

  it('selects the same items for each filter, with DynamoDB precedence, nested paths, functions and type rules', async () => {
    const pair = await createPair([things]);
    const table = pair.names.Things ?? '';
    for (const item of items) await expectSame(pair, () => new PutCommand({ TableName: table, Item: item }));
    for (const filter of filters) {
      const outcome = await expectSame(pair, () => new ScanCommand({ TableName: table, FilterExpression: filter, ExpressionAttributeNames: namesFor(filter), ExpressionAttributeValues: valuesFor(filter) }), unordered);
      expect(outcome, filter).toHaveProperty('output');
    }
  });

  it('refuses or applies a conditional write alike for each condition, and writes nothing when refused', async () => {
    const pair = await createPair([things]);
    const table = pair.names.Things ?? '';
    for (const item of items) await expectSame(pair, () => new PutCommand({ TableName: table, Item: item }));
    let refused = 0;
    for (const [index, condition] of filters.entries()) {
      for (const pk of ['a', 'c', 'g', 'absent']) {
        const values = { ...valuesFor(condition), ':mark': index };
        const outcome = await expectSame(pair, () =>
          new UpdateCommand({ TableName: table, Key: { pk }, UpdateExpression: 'SET marked = :mark', ConditionExpression: condition, ExpressionAttributeNames: namesFor(condition), ExpressionAttributeValues: values, ReturnValues: 'ALL_OLD' }),
        );
        if ('error' in outcome) refused += 1;
      }
    }
    expect(refused).toBeGreaterThan(50);
    await expectSameTables(pair);
  });

  it('refuses the same malformed conditions with a ValidationException', async () => {
    const pair = await createPair([things]);
    const table = pair.names.Things ?? '';
    await expectSame(pair, () => new PutCommand({ TableName: table, Item: items[0] ?? {} }));
    const malformed: [string, Record<string, unknown>?, Record<string, string>?][] = [
      ['status = :five', { ':five': 5 }],
      ['n = :undefined', { ':five': 5 }],
      ['#undefined = :five', { ':five': 5 }],
      ['n = :five', { ':five': 5, ':unused': 1 }],
      ['n = :five', { ':five': 5 }, { '#unused': 'n' }],
      ['n = ', { ':five': 5 }],
      ['n == :five', { ':five': 5 }],
      ['begins_with(s, :five)', { ':five': 5 }],
      ['n BETWEEN :ten AND :five', { ':five': 5, ':ten': 10 }],
      ['n BETWEEN :five AND :text', { ':five': 5, ':text': 'x' }],
      ['attribute_type(n, :bad)', { ':bad': 'NUMBER' }],
      ['attribute_exists(:five)', { ':five': 5 }],
      ['unknown_function(n)', undefined],
      ['size(n)', undefined],
      ['((n = :five))', { ':five': 5 }],
      ['n = :five AND', { ':five': 5 }],
      ['', { ':five': 5 }],
      ['attribute_exists(n) = :five', { ':five': 5 }],
      ['NOT NOT n = :five', { ':five': 5 }],
    ];
    for (const [condition, conditionValues, conditionNames] of malformed) {
      const outcome = await expectSame(pair, () =>
        new DeleteCommand({ TableName: table, Key: { pk: 'a' }, ConditionExpression: condition, ExpressionAttributeValues: conditionValues, ExpressionAttributeNames: conditionNames }),
      );
      expect(outcome, condition).toEqual({ error: 'ValidationException' });
    }
    await expectSameTables(pair);
  });
});

describe('DynamoModel against dynalite: writes', () => {
  it('applies the same updates: arithmetic, if_not_exists, list_append, nested maps, REMOVE, ADD and DELETE on sets, clauses in any order', async () => {
    const pair = await createPair([things]);
    const table = pair.names.Things ?? '';
    const update = async (expression: string, expressionValues?: Record<string, unknown>, returnValues: UpdateCommand['input']['ReturnValues'] = 'ALL_NEW', pk = 'u', names?: Record<string, string>) => {
      const outcome = await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { pk }, UpdateExpression: expression, ExpressionAttributeValues: expressionValues, ExpressionAttributeNames: names, ReturnValues: returnValues }));
      expect(outcome, expression).toHaveProperty('output');
    };
    await update('SET a = :one, b = :text', { ':one': 1, ':text': 'text' }, 'ALL_OLD');
    await update('SET a = a + :two', { ':two': 2 }, 'UPDATED_NEW');
    await update('SET a = a - :two', { ':two': 2 }, 'UPDATED_OLD');
    await update('SET c = if_not_exists(c, :zero) + :one', { ':zero': 0, ':one': 1 });
    await update('SET c = if_not_exists(c, :zero) + :one', { ':zero': 0, ':one': 1 }, 'UPDATED_NEW');
    await update('SET l = list_append(if_not_exists(l, :empty), :l1)', { ':empty': [], ':l1': [1, 2] });
    await update('SET l = list_append(:l0, l)', { ':l0': ['zero'] });
    await update('SET m = :map', { ':map': { inner: { deep: 1 }, other: 'x' } });
    await update('SET m.#inner.deep = :v, m.added = :w', { ':v': 2, ':w': [true, null] }, 'UPDATED_NEW', 'u', { '#inner': 'inner' });
    await update('SET #m.#inner.#new = :v', { ':v': 'new' }, 'UPDATED_OLD', 'u', { '#m': 'm', '#inner': 'inner', '#new': 'new' });
    await update('REMOVE b, m.#inner', undefined, 'UPDATED_OLD', 'u', { '#inner': 'inner' });
    await update('REMOVE l[1]', undefined, 'ALL_NEW');
    await update('SET l[10] = :v', { ':v': 'appended' });
    await update('SET l[0] = :v', { ':v': 'replaced' });
    await update('ADD cnt :one, tags :set1', { ':one': 1, ':set1': new Set(['a', 'b']) });
    await update('ADD tags :set2', { ':set2': new Set(['b', 'c']) }, 'UPDATED_NEW');
    await update('DELETE tags :set1', { ':set1': new Set(['a', 'b', 'x']) });
    await update('DELETE tags :all', { ':all': new Set(['c']) }, 'ALL_NEW');
    await update('DELETE tags :all', { ':all': new Set(['c']) }, 'ALL_NEW');
    await update('ADD nums :nset', { ':nset': new Set([1, 2, 3]) });
    await update('DELETE nums :nset', { ':nset': new Set([2]) });
    await update('REMOVE a ADD cnt :one SET y = :v DELETE nums :n', { ':one': 1, ':v': 'y', ':n': new Set([1]) });
    await update('DELETE nums :n ADD cnt :minus REMOVE y SET z = :v', { ':n': new Set([3]), ':minus': -5, ':v': 'z' });
    await update('SET d = :tenth', { ':tenth': 0.1 });
    await update('SET d = d + :fifth', { ':fifth': 0.2 });
    await update('ADD d :tenth', { ':tenth': 0.1 });
    await update('SET d = d - :big', { ':big': 1000.25 });
    await update('SET empty_text = :empty', { ':empty': '' });
    await update('REMOVE z', undefined, 'UPDATED_NEW');
    await update('SET z = :v REMOVE empty_text', { ':v': [{ a: 1 }, { b: [2, 3] }] }, 'UPDATED_OLD');
    for (const projection of ['l[0], l[2], m.added[1], z[1].b[0]', 'm, cnt, tags', 'nothing_here', 'z[5], m.#inner', '#m.#inner.deep, d']) {
      await expectSame(pair, () => new GetCommand({ TableName: table, Key: { pk: 'u' }, ProjectionExpression: projection, ExpressionAttributeNames: projection.includes('#') ? { '#inner': 'inner', ...(projection.includes('#m') ? { '#m': 'm' } : {}) } : undefined }));
    }
    await update('REMOVE nothing_here', undefined, 'ALL_NEW', 'created-by-remove');
    await update('SET x = :v', { ':v': 1 }, 'ALL_OLD', 'fresh');
    await update('SET x = :v', { ':v': 2 }, 'UPDATED_OLD', 'fresh2');
    await update('SET x = :v', { ':v': 3 }, 'NONE', 'fresh3');
    await expectSameTables(pair);
  });

  it('puts and deletes alike, conditionally or not, returning the old item when asked', async () => {
    const pair = await createPair([things]);
    const table = pair.names.Things ?? '';
    await expectSame(pair, () => new PutCommand({ TableName: table, Item: { pk: 'p', v: 1, skipped: undefined }, ConditionExpression: 'attribute_not_exists(pk)' }));
    await expectSame(pair, () => new PutCommand({ TableName: table, Item: { pk: 'p', v: 2 }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValues: 'ALL_OLD' }));
    await expectSame(pair, () => new PutCommand({ TableName: table, Item: { pk: 'p', v: 3, m: { keep: undefined, x: 1 } }, ReturnValues: 'ALL_OLD' }));
    await expectSame(pair, () => new PutCommand({ TableName: table, Item: { pk: 'q', v: 1 }, ReturnValues: 'ALL_OLD' }));
    await expectSame(pair, () => new DeleteCommand({ TableName: table, Key: { pk: 'p' }, ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': 1 }, ReturnValues: 'ALL_OLD' }));
    await expectSame(pair, () => new DeleteCommand({ TableName: table, Key: { pk: 'p' }, ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': 3 }, ReturnValues: 'ALL_OLD' }));
    await expectSame(pair, () => new DeleteCommand({ TableName: table, Key: { pk: 'p' }, ReturnValues: 'ALL_OLD' }));
    await expectSame(pair, () => new DeleteCommand({ TableName: table, Key: { pk: 'absent' }, ConditionExpression: 'attribute_exists(pk)' }));
    await expectSame(pair, () => new GetCommand({ TableName: table, Key: { pk: 'q' }, ProjectionExpression: 'v, missing', ConsistentRead: true }));
    await expectSame(pair, () => new GetCommand({ TableName: table, Key: { pk: 'absent' } }));
    await expectSameTables(pair);
  });

  it('refuses the same invalid requests with the same error, and writes nothing', async () => {
    const sorted: ModelTableDefinition = { name: 'Sorted', partitionKey: 'pk', sortKey: { name: 'sk', type: 'N' }, indexes: [{ name: 'by-owner', partitionKey: 'owner', sortKey: { name: 'at', type: 'S' } }] };
    const pair = await createPair([things, sorted]);
    const table = pair.names.Things ?? '';
    const sortedTable = pair.names.Sorted ?? '';
    await expectSame(pair, () => new PutCommand({ TableName: table, Item: { pk: 'k', text: 'x', n: 1 } }));
    // The largest item that fits 400 KB: 2 ("pk") + 3 ("big") + 4 ("data") + the data.
    const fits = 400 * 1024 - 2 - 3 - 4;
    const invalid: [string, () => DocumentCommand, string?][] = [
      ['an item of 400 KB', () => new PutCommand({ TableName: table, Item: { pk: 'big', data: 'x'.repeat(fits) } }), 'ok'],
      ['an item over 400 KB', () => new PutCommand({ TableName: table, Item: { pk: 'big', data: 'x'.repeat(fits + 1) } })],
      ['an update growing an item over 400 KB', () => new UpdateCommand({ TableName: table, Key: { pk: 'big' }, UpdateExpression: 'SET more = :x', ExpressionAttributeValues: { ':x': 'x' } })],
      ['a missing table', () => new GetCommand({ TableName: 'no-such-table', Key: { pk: 'k' } }), 'ResourceNotFoundException'],
      ['a key without its partition key', () => new GetCommand({ TableName: table, Key: {} })],
      ['a key with another attribute', () => new GetCommand({ TableName: table, Key: { pk: 'k', other: 1 } })],
      ['a key of the wrong type', () => new GetCommand({ TableName: table, Key: { pk: 1 } })],
      ['an empty string key', () => new GetCommand({ TableName: table, Key: { pk: '' } })],
      ['a key without its sort key', () => new GetCommand({ TableName: sortedTable, Key: { pk: 'k' } })],
      ['a sort key of the wrong type', () => new DeleteCommand({ TableName: sortedTable, Key: { pk: 'k', sk: '1' } })],
      ['an item without its key', () => new PutCommand({ TableName: table, Item: { other: 'x' } })],
      ['an item with a key of the wrong type', () => new PutCommand({ TableName: sortedTable, Item: { pk: 'k', sk: 'one' } })],
      ['an item with an index key of the wrong type', () => new PutCommand({ TableName: sortedTable, Item: { pk: 'k', sk: 1, owner: 7, at: 'x' } })],
      ['an update setting an index key of the wrong type', () => new UpdateCommand({ TableName: sortedTable, Key: { pk: 'k', sk: 2 }, UpdateExpression: 'SET #at = :n', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':n': 1 } })],
      ['an update of a key attribute', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET pk = :v', ExpressionAttributeValues: { ':v': 'other' } })],
      ['an update of a sort key attribute', () => new UpdateCommand({ TableName: sortedTable, Key: { pk: 'k', sk: 1 }, UpdateExpression: 'ADD sk :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['a reserved word', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET status = :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['an undefined value', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = :v', ExpressionAttributeValues: { ':w': 1 } })],
      ['an unused name', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = :v', ExpressionAttributeNames: { '#a': 'a' }, ExpressionAttributeValues: { ':v': 1 } })],
      ['a syntax error', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['an empty update expression', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: '' })],
      ['ADD of a string', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'ADD a :v', ExpressionAttributeValues: { ':v': 'x' } })],
      ['DELETE of a number', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'DELETE a :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['ADD to a string attribute', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'ADD #text :v', ExpressionAttributeNames: { '#text': 'text' }, ExpressionAttributeValues: { ':v': 1 } })],
      ['ADD of a number set to a string set', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'ADD ss :s', ExpressionAttributeValues: { ':s': new Set(['a']) } }), 'ok'],
      ['ADD of a number set to a string set, second', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'ADD ss :s', ExpressionAttributeValues: { ':s': new Set([1]) } })],
      ['arithmetic on a string value', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = :v + :one', ExpressionAttributeValues: { ':v': 'x', ':one': 1 } })],
      ['arithmetic on a missing attribute', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = missing + :one', ExpressionAttributeValues: { ':one': 1 } })],
      ['arithmetic on a string attribute', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = #text + :one', ExpressionAttributeNames: { '#text': 'text' }, ExpressionAttributeValues: { ':one': 1 } })],
      ['list_append of a number', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET l = list_append(n, :l)', ExpressionAttributeValues: { ':l': [1] } })],
      ['a path into a missing map', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET m.x.y = :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['a section twice', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = :v SET b = :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['overlapping paths', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = :v REMOVE a', ExpressionAttributeValues: { ':v': 1 } })],
      ['nested overlapping paths', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a.b = :v, a = :v', ExpressionAttributeValues: { ':v': 1 } })],
      ['overlapping paths through names', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET #a = :v, a = :v', ExpressionAttributeNames: { '#a': 'a' }, ExpressionAttributeValues: { ':v': 1 } })],
      ['an unknown update function', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'SET a = frobnicate(:v)', ExpressionAttributeValues: { ':v': 1 } })],
      ['overlapping projections', () => new GetCommand({ TableName: table, Key: { pk: 'k' }, ProjectionExpression: 'n, n' })],
      ['a Put returning ALL_NEW', () => new PutCommand({ TableName: table, Item: { pk: 'k2' }, ReturnValues: 'ALL_NEW' })],
      ['a Delete returning UPDATED_OLD', () => new DeleteCommand({ TableName: table, Key: { pk: 'absent' }, ReturnValues: 'UPDATED_OLD' }), 'ok'],
      ['an empty set', () => new PutCommand({ TableName: table, Item: { pk: 'k3', tags: new Set<string>() } }), 'Error'],
      ['an empty set value', () => new UpdateCommand({ TableName: table, Key: { pk: 'k' }, UpdateExpression: 'ADD tags :s', ExpressionAttributeValues: { ':s': new Set<string>() } }), 'Error'],
      ['NaN', () => new PutCommand({ TableName: table, Item: { pk: 'k3', n: Number.NaN } }), 'Error'],
    ];
    for (const [what, build, expected = 'ValidationException'] of invalid) {
      const outcome = await expectSame(pair, build);
      expect(outcome, what).toEqual(expected === 'ok' ? expect.objectContaining({ output: expect.anything() }) : { error: expected });
    }
    await expectSameTables(pair);
  });
});

describe('DynamoModel against dynalite: queries, scans and pages', () => {
  /** Like the dead letters to come: a string partition, a numeric sort key. */
  const letters: ModelTableDefinition = { name: 'Letters', partitionKey: 'subscription', sortKey: { name: 'at', type: 'N' } };
  const named: ModelTableDefinition = { name: 'Named', partitionKey: 'pk', sortKey: { name: 'sk', type: 'S' } };

  async function seed(pair: Pair): Promise<void> {
    const writes: DocumentCommand[] = [];
    for (let at = 1; at <= 14; at += 1) {
      writes.push(new PutCommand({ TableName: pair.names.Letters, Item: { subscription: 'sub-a', at: at * 10 - 45, kind: at % 3 === 0 ? 'x' : 'y', reason: `r${at}` } }));
    }
    writes.push(new PutCommand({ TableName: pair.names.Letters, Item: { subscription: 'sub-b', at: 1, kind: 'x' } }));
    for (const sk of ['evt#001', 'evt#002', 'evt#010', 'evt#1', 'other#001', 'evt', 'ev', 'Evt#003', 'évt#004', '\uffff', '😀', 'z']) {
      writes.push(new PutCommand({ TableName: pair.names.Named, Item: { pk: 'p', sk, kind: sk.length % 2 === 0 ? 'x' : 'y' } }));
    }
    for (const command of writes) {
      await send(pair.real, command);
      await send(pair.model, command instanceof PutCommand ? new PutCommand(structuredClone(command.input)) : command);
    }
  }

  it('answers the same key conditions, in the same order both ways, numbers numerically and strings by UTF-8 bytes', async () => {
    const pair = await createPair([letters, named]);
    await seed(pair);
    const numeric: [string, Record<string, unknown>][] = [
      ['subscription = :s', {}],
      ['subscription = :s AND #at = :v', { ':v': 15 }],
      ['subscription = :s AND #at < :v', { ':v': 15 }],
      ['subscription = :s AND #at <= :v', { ':v': 15 }],
      ['subscription = :s AND #at > :v', { ':v': -5 }],
      ['subscription = :s AND #at >= :v', { ':v': -5 }],
      ['subscription = :s AND #at BETWEEN :low AND :high', { ':low': -35, ':high': 40 }],
      ['#at > :v AND subscription = :s', { ':v': 50 }],
    ];
    for (const [condition, extra] of numeric) {
      for (const isForward of [true, false]) {
        await expectSame(pair, () => new QueryCommand({ TableName: pair.names.Letters, KeyConditionExpression: condition, ExpressionAttributeNames: condition.includes('#at') ? { '#at': 'at' } : undefined, ExpressionAttributeValues: { ':s': 'sub-a', ...extra }, ScanIndexForward: isForward }));
      }
    }
    for (const [condition, extra] of [
      ['pk = :p', {}],
      ['pk = :p AND begins_with(sk, :prefix)', { ':prefix': 'evt#' }],
      ['pk = :p AND begins_with(sk, :prefix)', { ':prefix': 'ev' }],
      ['pk = :p AND sk > :v', { ':v': '\uffff' }],
      ['pk = :p AND sk < :v', { ':v': 'évt' }],
      ['pk = :p AND sk BETWEEN :low AND :high', { ':low': 'evt#002', ':high': 'other#001' }],
    ] as const) {
      await expectSame(pair, () => new QueryCommand({ TableName: pair.names.Named, KeyConditionExpression: condition, ExpressionAttributeValues: { ':p': 'p', ...extra }, ScanIndexForward: false }));
    }
  });

  it('pages alike: Limit counts items before the filter, LastEvaluatedKey resumes, COUNT and projections', async () => {
    const pair = await createPair([letters, named]);
    await seed(pair);
    for (const limit of [1, 4, 5, 14, 15]) {
      for (const isForward of [true, false]) {
        const pages = await expectSamePages(pair, (startKey) =>
          new QueryCommand({ TableName: pair.names.Letters, KeyConditionExpression: 'subscription = :s', FilterExpression: 'kind = :x', ExpressionAttributeValues: { ':s': 'sub-a', ':x': 'x' }, Limit: limit, ScanIndexForward: isForward, ExclusiveStartKey: startKey }),
        );
        expect(pages).toBeGreaterThanOrEqual(Math.ceil(14 / limit));
      }
    }
    await expectSamePages(pair, (startKey) =>
      new QueryCommand({ TableName: pair.names.Named, KeyConditionExpression: 'pk = :p AND begins_with(sk, :prefix)', FilterExpression: 'kind = :x', ExpressionAttributeValues: { ':p': 'p', ':prefix': 'evt', ':x': 'x' }, Limit: 2, ExclusiveStartKey: startKey }),
    );
    await expectSamePages(pair, (startKey) =>
      new QueryCommand({ TableName: pair.names.Letters, KeyConditionExpression: 'subscription = :s', FilterExpression: 'kind = :x', ExpressionAttributeValues: { ':s': 'sub-a', ':x': 'x' }, Select: 'COUNT', Limit: 6, ExclusiveStartKey: startKey }),
    );
    await expectSame(pair, () => new QueryCommand({ TableName: pair.names.Letters, KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'sub-a' }, ProjectionExpression: 'reason, #at', ExpressionAttributeNames: { '#at': 'at' }, Limit: 3 }));
    await expectSame(pair, () => new QueryCommand({ TableName: pair.names.Letters, KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'sub-a' }, Select: 'SPECIFIC_ATTRIBUTES', ProjectionExpression: 'kind' }));
    await expectSame(pair, () => new QueryCommand({ TableName: pair.names.Letters, KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'nobody' } }));
    await expectSamePages(pair, (startKey) => new ScanCommand({ TableName: pair.names.Letters, FilterExpression: 'kind = :x', ExpressionAttributeValues: { ':x': 'x' }, Limit: 4, ExclusiveStartKey: startKey }), { isUnordered: true });
    await expectSamePages(pair, (startKey) => new ScanCommand({ TableName: pair.names.Named, Select: 'COUNT', Limit: 5, ExclusiveStartKey: startKey }), { isUnordered: true });
  });

  it('refuses the same invalid queries and scans', async () => {
    const pair = await createPair([letters, named, { name: 'Indexed', partitionKey: 'id', indexes: [{ name: 'by-owner', partitionKey: 'owner' }] }]);
    await seed(pair);
    const table = pair.names.Letters ?? '';
    const invalid: [string, () => DocumentCommand][] = [
      ['Limit 0', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'sub-a' }, Limit: 0 })],
      ['no partition condition', () => new QueryCommand({ TableName: table, KeyConditionExpression: '#at = :v', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':v': 1 } })],
      ['a range on the partition key', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription > :s', ExpressionAttributeValues: { ':s': 'sub-a' } })],
      ['OR in a key condition', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s OR #at = :v', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':s': 'sub-a', ':v': 1 } })],
      ['<> on the sort key', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s AND #at <> :v', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':s': 'sub-a', ':v': 1 } })],
      ['a non-key attribute', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s AND kind = :v', ExpressionAttributeValues: { ':s': 'sub-a', ':v': 'x' } })],
      ['a sort value of the wrong type', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s AND #at > :v', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':s': 'sub-a', ':v': 'one' } })],
      ['begins_with on a number', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s AND begins_with(#at, :v)', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':s': 'sub-a', ':v': 1 } })],
      ['a filter on the sort key', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s', FilterExpression: '#at > :v', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':s': 'sub-a', ':v': 1 } })],
      ['a start key without its sort key', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'sub-a' }, ExclusiveStartKey: { subscription: 'sub-a' } })],
      ['a start key of another partition', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'sub-a' }, ExclusiveStartKey: { subscription: 'sub-b', at: 1 } })],
      ['a start key outside the sort condition', () => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s AND #at > :v', ExpressionAttributeNames: { '#at': 'at' }, ExpressionAttributeValues: { ':s': 'sub-a', ':v': 50 }, ExclusiveStartKey: { subscription: 'sub-a', at: 5 } })],
      ['an unknown index', () => new QueryCommand({ TableName: table, IndexName: 'nope', KeyConditionExpression: 'subscription = :s', ExpressionAttributeValues: { ':s': 'sub-a' } })],
      ['a consistent read of an index', () => new QueryCommand({ TableName: pair.names.Indexed, IndexName: 'by-owner', KeyConditionExpression: '#owner = :o', ExpressionAttributeNames: { '#owner': 'owner' }, ExpressionAttributeValues: { ':o': 'o' }, ConsistentRead: true })],
      ['a scan with Limit 0', () => new ScanCommand({ TableName: table, Limit: 0 })],
      ['a scan with a bad start key', () => new ScanCommand({ TableName: table, ExclusiveStartKey: { subscription: 'sub-a' } })],
    ];
    for (const [what, build] of invalid) expect(await expectSame(pair, build), what).toEqual({ error: 'ValidationException' });
  });

  it('stops a page at 1 MB read, before any filter, and resumes after it', async () => {
    const pair = await createPair([letters]);
    const table = pair.names.Letters ?? '';
    for (let at = 1; at <= 5; at += 1) {
      await expectSame(pair, () => new PutCommand({ TableName: table, Item: { subscription: 'big', at, kind: 'y', data: 'd'.repeat(300_000) } }));
    }
    const pages = await expectSamePages(pair, (startKey) => new QueryCommand({ TableName: table, KeyConditionExpression: 'subscription = :s', FilterExpression: 'kind = :x', ExpressionAttributeValues: { ':s': 'big', ':x': 'x' }, ExclusiveStartKey: startKey }));
    expect(pages).toBe(2);
    expect(await expectSamePages(pair, (startKey) => new ScanCommand({ TableName: table, Select: 'COUNT', ExclusiveStartKey: startKey }), { isUnordered: true })).toBe(2);
  });

  it('keeps sparse indexes alike: items enter and leave with their index key, pages carry the table and index keys', async () => {
    const indexed: ModelTableDefinition = {
      name: 'Indexed',
      partitionKey: 'id',
      indexes: [
        { name: 'by-owner', partitionKey: 'owner', sortKey: { name: 'at', type: 'S' } },
        { name: 'by-shard', partitionKey: 'shard' },
        { name: 'by-rank', partitionKey: 'owner', sortKey: { name: 'rank', type: 'N' } },
      ],
    };
    const pair = await createPair([indexed]);
    const table = pair.names.Indexed ?? '';
    for (let index = 0; index < 12; index += 1) {
      const item = { id: `id-${index}`, ...(index % 4 === 3 ? {} : { owner: index % 2 === 0 ? 'o1' : 'o2', at: `2026-01-${String(10 + index)}` }), shard: `s${index % 2}`, rank: 100 - index, v: index };
      await expectSame(pair, () => new PutCommand({ TableName: table, Item: item }));
    }
    const byOwner = (owner: string, limit?: number) => (startKey: Record<string, unknown> | undefined) =>
      new QueryCommand({ TableName: table, IndexName: 'by-owner', KeyConditionExpression: '#owner = :o', ExpressionAttributeNames: { '#owner': 'owner' }, ExpressionAttributeValues: { ':o': owner }, Limit: limit, ExclusiveStartKey: startKey });
    // Six items, two a page: the third page ends on the Limit, so a fourth, empty one follows.
    expect(await expectSamePages(pair, byOwner('o1', 2))).toBe(4);
    await expectSamePages(pair, byOwner('o2'));
    await expectSamePages(pair, (startKey) => new QueryCommand({ TableName: table, IndexName: 'by-rank', KeyConditionExpression: '#owner = :o AND #rank < :r', ExpressionAttributeNames: { '#owner': 'owner', '#rank': 'rank' }, ExpressionAttributeValues: { ':o': 'o1', ':r': 99 }, Limit: 2, ScanIndexForward: false, ExclusiveStartKey: startKey }));
    // Leaving the index, entering it, moving within it.
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-0' }, UpdateExpression: 'REMOVE #owner', ExpressionAttributeNames: { '#owner': 'owner' } }));
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-3' }, UpdateExpression: 'SET #owner = :o, #at = :at', ExpressionAttributeNames: { '#owner': 'owner', '#at': 'at' }, ExpressionAttributeValues: { ':o': 'o1', ':at': '2026-01-01' } }));
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-7' }, UpdateExpression: 'SET #owner = :o', ExpressionAttributeNames: { '#owner': 'owner' }, ExpressionAttributeValues: { ':o': 'o1' } }));
    await expectSame(pair, () => new DeleteCommand({ TableName: table, Key: { id: 'id-2' } }));
    await expectSamePages(pair, byOwner('o1', 2));
    // An index without a sort key orders ties as it likes: compare what the pages hold together.
    await expectSamePages(pair, (startKey) => new QueryCommand({ TableName: table, IndexName: 'by-shard', KeyConditionExpression: '#shard = :s', ExpressionAttributeNames: { '#shard': 'shard' }, FilterExpression: 'v > :v', ExpressionAttributeValues: { ':s': 's0', ':v': 2 }, Limit: 2, ExclusiveStartKey: startKey }), { isUnordered: true });
    await expectSamePages(pair, (startKey) => new ScanCommand({ TableName: table, IndexName: 'by-owner', Limit: 3, ExclusiveStartKey: startKey }), { isUnordered: true });
    await expectSameTables(pair);
  });
  it('answers a key-only index with the table and index keys alone, filtering and projecting on them, as items enter, move and leave', async () => {
    const keyed: ModelTableDefinition = {
      name: 'Keyed',
      partitionKey: 'id',
      indexes: [
        { name: 'shard-keys', partitionKey: 'shard', projection: 'KEYS_ONLY' },
        { name: 'owner-keys', partitionKey: 'owner', sortKey: { name: 'at', type: 'S' }, projection: 'KEYS_ONLY' },
      ],
    };
    const pair = await createPair([keyed]);
    const table = pair.names.Keyed ?? '';
    for (let index = 0; index < 10; index += 1) {
      const item = { id: `id-${index}`, shard: `s${index % 2}`, ...(index % 3 === 0 ? {} : { owner: 'o1', at: `2026-01-${String(10 + index)}` }), v: index, pad: 'x'.repeat(200), keys: new Set(['a', 'b']) };
      await expectSame(pair, () => new PutCommand({ TableName: table, Item: item }));
    }
    const byShard = (shard: string, extra: Partial<QueryCommand['input']> = {}) => (startKey: Record<string, unknown> | undefined) =>
      new QueryCommand({ TableName: table, IndexName: 'shard-keys', KeyConditionExpression: '#shard = :s', ExpressionAttributeNames: { '#shard': 'shard' }, ExpressionAttributeValues: { ':s': shard }, Limit: 2, ExclusiveStartKey: startKey, ...extra });
    const items = async (client: DynamoDBDocumentClient, shard: string) => sortedItems((await client.send(byShard(shard)(undefined))).Items);
    // dynalite honours KEYS_ONLY: the table's key and the index's key, nothing else.
    for (const client of [pair.real, pair.model]) {
      const page = await items(client, 's0');
      expect(page).toHaveLength(2);
      for (const item of page) expect(Object.keys(item as object).sort()).toEqual(['id', 'shard']);
    }
    await expectSamePages(pair, byShard('s0'), { isUnordered: true });
    await expectSamePages(pair, byShard('s1', { Select: 'ALL_PROJECTED_ATTRIBUTES' }), { isUnordered: true });
    // A filter or a projection sees only what the index holds: the item's other attributes are absent.
    await expectSamePages(pair, byShard('s1', { FilterExpression: 'attribute_exists(v)' }), { isUnordered: true });
    await expectSamePages(pair, byShard('s1', { FilterExpression: 'attribute_not_exists(v)' }), { isUnordered: true });
    await expectSamePages(pair, byShard('s0', { ProjectionExpression: 'id, v' }), { isUnordered: true });
    await expectSamePages(pair, byShard('s0', { Select: 'COUNT' }), { isUnordered: true });
    const byOwner = (startKey: Record<string, unknown> | undefined) =>
      new QueryCommand({ TableName: table, IndexName: 'owner-keys', KeyConditionExpression: '#owner = :o', ExpressionAttributeNames: { '#owner': 'owner' }, ExpressionAttributeValues: { ':o': 'o1' }, Limit: 3, ExclusiveStartKey: startKey });
    await expectSamePages(pair, byOwner);
    // A change of attributes the index does not hold; leaving it; moving within it; entering it.
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-1' }, UpdateExpression: 'ADD v :one', ExpressionAttributeValues: { ':one': 1 } }));
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-2' }, UpdateExpression: 'REMOVE shard' }));
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-4' }, UpdateExpression: 'SET shard = :s', ExpressionAttributeValues: { ':s': 's1' } }));
    await expectSame(pair, () => new UpdateCommand({ TableName: table, Key: { id: 'id-new' }, UpdateExpression: 'SET shard = :s, v = :d', ExpressionAttributeValues: { ':s': 's0', ':d': 7 } }));
    await expectSame(pair, () => new DeleteCommand({ TableName: table, Key: { id: 'id-6' } }));
    await expectSamePages(pair, byShard('s0'), { isUnordered: true });
    await expectSamePages(pair, byShard('s1'), { isUnordered: true });
    await expectSamePages(pair, byOwner);
    await expectSamePages(pair, (startKey) => new ScanCommand({ TableName: table, IndexName: 'shard-keys', Limit: 4, ExclusiveStartKey: startKey }), { isUnordered: true });
    await expectSameTables(pair);
  });
});

describe('DynamoModel against dynalite: batches', () => {
  it('writes and reads batches alike across tables, with projections and missing keys', async () => {
    const other: ModelTableDefinition = { name: 'Other', partitionKey: 'id', sortKey: { name: 'n', type: 'N' } };
    const pair = await createPair([things, other]);
    const [table, otherTable] = [pair.names.Things ?? '', pair.names.Other ?? ''];
    await expectSame(pair, () =>
      new BatchWriteCommand({
        RequestItems: {
          [table]: [1, 2, 3, 4].map((index) => ({ PutRequest: { Item: { pk: `p${index}`, v: index, m: { deep: index } } } })),
          [otherTable]: [{ PutRequest: { Item: { id: 'a', n: 1, tags: new Set(['t']) } } }, { PutRequest: { Item: { id: 'a', n: 2 } } }],
        },
      }),
    );
    await expectSame(pair, () => new BatchWriteCommand({ RequestItems: { [table]: [{ DeleteRequest: { Key: { pk: 'p2' } } }, { DeleteRequest: { Key: { pk: 'absent' } } }, { PutRequest: { Item: { pk: 'p5' } } }] } }));
    await expectSame(
      pair,
      () =>
        new BatchGetCommand({
          RequestItems: {
            [table]: { Keys: ['p1', 'p2', 'p3', 'p5'].map((pk) => ({ pk })), ProjectionExpression: '#pk, m.deep', ExpressionAttributeNames: { '#pk': 'pk' }, ConsistentRead: true },
            [otherTable]: { Keys: [{ id: 'a', n: 1 }, { id: 'a', n: 2 }, { id: 'b', n: 1 }] },
          },
        }),
      unordered,
    );
    const invalid: [string, () => DocumentCommand][] = [
      ['101 keys', () => new BatchGetCommand({ RequestItems: { [table]: { Keys: Array.from({ length: 101 }, (_, index) => ({ pk: `k${index}` })) } } })],
      ['duplicate keys', () => new BatchGetCommand({ RequestItems: { [table]: { Keys: [{ pk: 'p1' }, { pk: 'p1' }] } } })],
      ['26 writes', () => new BatchWriteCommand({ RequestItems: { [table]: Array.from({ length: 26 }, (_, index) => ({ PutRequest: { Item: { pk: `k${index}` } } })) } })],
      ['two writes of one key', () => new BatchWriteCommand({ RequestItems: { [table]: [{ PutRequest: { Item: { pk: 'p1' } } }, { DeleteRequest: { Key: { pk: 'p1' } } }] } })],
      ['a write without its key', () => new BatchWriteCommand({ RequestItems: { [table]: [{ PutRequest: { Item: { pk: 'p9' } } }, { PutRequest: { Item: { v: 1 } } }] } })],
      ['a bad key among good ones', () => new BatchGetCommand({ RequestItems: { [table]: { Keys: [{ pk: 'p1' }, { pk: 1 }] } } })],
    ];
    for (const [what, build] of invalid) expect(await expectSame(pair, build), what).toEqual({ error: 'ValidationException' });
    await expectSameTables(pair);
  });
});

describe('DynamoModel alone, where dynalite differs from DynamoDB', () => {
  const model = () => {
    const state = new DynamoModel([things]);
    return { state, client: createModelDocumentClient(state) };
  };

  it('puts the old item, in wire format, on a ConditionalCheckFailedException when asked (ReturnValuesOnConditionCheckFailure, which dynalite ignores)', async () => {
    // AWS API reference, UpdateItem: ReturnValuesOnConditionCheckFailure ALL_OLD returns the item
    // as it was; the DocumentClient leaves the exception's Item marshalled (aws-sdk-js-v3 #6723).
    const { client } = model();
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'p', n: 1, tags: new Set(['a']), m: { l: [true, null] } } }));
    const refuse = (returnValues: 'ALL_OLD' | 'NONE', pk = 'p') => client.send(new UpdateCommand({ TableName: 'Things', Key: { pk }, UpdateExpression: 'SET n = :two', ConditionExpression: 'n = :two', ExpressionAttributeValues: { ':two': 2 }, ReturnValuesOnConditionCheckFailure: returnValues }));
    await expect(refuse('ALL_OLD')).rejects.toMatchObject({ name: 'ConditionalCheckFailedException', Item: { pk: { S: 'p' }, n: { N: '1' }, tags: { SS: ['a'] }, m: { M: { l: { L: [{ BOOL: true }, { NULL: true }] } } } } });
    const withoutItem = await refuse('NONE').catch((error: unknown) => error);
    expect(withoutItem).toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(withoutItem).not.toHaveProperty('Item', expect.anything());
    const absent = await refuse('ALL_OLD', 'absent').catch((error: unknown) => error);
    expect(absent).not.toHaveProperty('Item', expect.anything());
    expect((await client.send(new GetCommand({ TableName: 'Things', Key: { pk: 'p' } }))).Item).toMatchObject({ n: 1 });
  });

  it('compares strings in conditions by their UTF-8 bytes (dynalite compares UTF-16 units)', async () => {
    // "String value comparisons for greater than, equals, or less than are based on Unicode with
    // UTF-8 binary encoding" (API reference, Condition). U+1F600 sorts after U+FFFF in UTF-8.
    const { client } = model();
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'emoji', s: '😀' } }));
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'bmp', s: '\uffff' } }));
    const below = await client.send(new ScanCommand({ TableName: 'Things', FilterExpression: 's < :v', ExpressionAttributeValues: { ':v': '😀' } }));
    expect(below.Items?.map((item) => item.pk)).toEqual(['bmp']);
  });

  it('sees false and empty strings as values in IN and attribute_type (dynalite takes them for absent)', async () => {
    // attribute_type is "true if the attribute at the specified path is of a particular data type"
    // (condition expression functions); a false BOOL is a BOOL.
    const { client } = model();
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'p', b: false, e: '' } }));
    const matching = async (filter: string, values: Record<string, unknown>) => (await client.send(new ScanCommand({ TableName: 'Things', FilterExpression: filter, ExpressionAttributeValues: values }))).Count;
    expect(await matching('attribute_type(b, :t)', { ':t': 'BOOL' })).toBe(1);
    expect(await matching('b IN (:f, :t)', { ':f': false, ':t': true })).toBe(1);
    expect(await matching('e IN (:e)', { ':e': '' })).toBe(1);
  });

  it('refuses an empty string as an index key (dynalite stores it)', async () => {
    // "the String and Binary key attributes of local or global secondary indexes also require
    // non-empty values" (What's New, 2020-05-18: empty values for non-key attributes).
    const state = new DynamoModel([{ name: 'Indexed', partitionKey: 'id', indexes: [{ name: 'by-owner', partitionKey: 'owner' }] }]);
    const client = createModelDocumentClient(state);
    await expect(client.send(new PutCommand({ TableName: 'Indexed', Item: { id: 'a', owner: '' } }))).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(client.send(new UpdateCommand({ TableName: 'Indexed', Key: { id: 'a' }, UpdateExpression: 'SET #owner = :e', ExpressionAttributeNames: { '#owner': 'owner' }, ExpressionAttributeValues: { ':e': '' } }))).rejects.toMatchObject({ name: 'ValidationException' });
    await client.send(new PutCommand({ TableName: 'Indexed', Item: { id: 'a', other: '' } }));
    expect(state.execute('Scan', { TableName: 'Indexed' })).toMatchObject({ Count: 1 });
  });

  it('removes list elements named by their positions before the update (dynalite removes them one after the other)', async () => {
    // Developer Guide, update expressions, REMOVE: "REMOVE RelatedItems[1], RelatedItems[2]" removes
    // those two elements; checked against DynamoDB in
    // https://github.com/getmoto/moto/issues/5748.
    const { client } = model();
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'p', l: ['a', 'b', 'c', 'd'] } }));
    const output = await client.send(new UpdateCommand({ TableName: 'Things', Key: { pk: 'p' }, UpdateExpression: 'REMOVE l[1], l[2], l[9]', ReturnValues: 'ALL_NEW' }));
    expect(output.Attributes).toEqual({ pk: 'p', l: ['a', 'd'] });
  });

  it('refuses Select with a ProjectionExpression unless it is SPECIFIC_ATTRIBUTES (dynalite does not check)', async () => {
    // API reference, Query and Scan, Select: Select and ProjectionExpression go together only as SPECIFIC_ATTRIBUTES.
    const { state } = model();
    state.execute('Put', { TableName: 'Things', Item: { pk: 'p', kind: 'x' } });
    for (const select of ['COUNT', 'ALL_ATTRIBUTES']) {
      expect(() => state.execute('Scan', { TableName: 'Things', Select: select, ProjectionExpression: 'kind' }), select).toThrow(expect.objectContaining({ name: 'ValidationException' }));
    }
    expect(state.execute('Scan', { TableName: 'Things', Select: 'SPECIFIC_ATTRIBUTES', ProjectionExpression: 'kind' })).toEqual({ Count: 1, ScannedCount: 1, Items: [{ kind: 'x' }] });
  });

  it('compares maps, lists and sets by value with = (dynalite compares them by reference)', async () => {
    // "EQ: Equal. EQ is supported for all data types, including lists and maps" (API reference, Condition).
    const { client } = model();
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'p', m: { a: [1, { b: 'c' }] }, l: [1, 2], ns: new Set([1, 2]) } }));
    const matching = async (filter: string, values: Record<string, unknown>) => (await client.send(new ScanCommand({ TableName: 'Things', FilterExpression: filter, ExpressionAttributeValues: values }))).Count;
    expect(await matching('m = :m', { ':m': { a: [1, { b: 'c' }] } })).toBe(1);
    expect(await matching('m = :m', { ':m': { a: [1, { b: 'd' }] } })).toBe(0);
    expect(await matching('l = :l', { ':l': [1, 2] })).toBe(1);
    expect(await matching('l = :l', { ':l': [2, 1] })).toBe(0);
    expect(await matching('ns = :s', { ':s': new Set([2, 1]) })).toBe(1);
    expect(await matching('ns <> :s', { ':s': new Set([2]) })).toBe(1);
  });
});

describe('DynamoModel alone: TTL, which dynalite does not have', () => {
  // The table's TTL attribute as the deployed table declares it (TABLES.events.ttlAttribute).
  const events: ModelTableDefinition = { name: 'Events', partitionKey: 'id', ttlAttribute: 'expires_at', indexes: [{ name: 'by-shard', partitionKey: 'shard' }] };
  const at = Date.UTC(2026, 0, 1);

  it('keeps an expired item readable, queryable and in conditions until the sweep removes it, then removes it from its indexes too', async () => {
    const state = new DynamoModel([events]);
    const client = createModelDocumentClient(state);
    const expiresAt = at / 1000 + 60;
    await client.send(new PutCommand({ TableName: 'Events', Item: { id: 'e1', shard: 's', expires_at: expiresAt } }));
    // Not expired at its second: "less than the current time" (UpdateTimeToLive).
    expect(state.expiredItems(expiresAt * 1000)).toEqual([]);
    const later = expiresAt * 1000 + 1;
    expect(state.expiredItems(later)).toEqual([{ table: 'Events', primaryKey: 'e1', expiresAtSeconds: expiresAt }]);
    // Expired, not yet deleted: reads, queries and conditions still see it.
    expect((await client.send(new GetCommand({ TableName: 'Events', Key: { id: 'e1' } }))).Item).toMatchObject({ id: 'e1' });
    expect((await client.send(new QueryCommand({ TableName: 'Events', IndexName: 'by-shard', KeyConditionExpression: '#shard = :s', ExpressionAttributeNames: { '#shard': 'shard' }, ExpressionAttributeValues: { ':s': 's' } }))).Items).toHaveLength(1);
    await expect(client.send(new PutCommand({ TableName: 'Events', Item: { id: 'e1' }, ConditionExpression: 'attribute_not_exists(id)' }))).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    // The sweep takes what the caller says is due, and nothing else.
    expect(state.sweepExpired(later, () => false)).toEqual([]);
    expect(state.sweepExpired(later, (item) => item.primaryKey === 'e1')).toEqual([{ table: 'Events', primaryKey: 'e1', expiresAtSeconds: expiresAt, removedAtMs: later }]);
    expect((await client.send(new GetCommand({ TableName: 'Events', Key: { id: 'e1' } }))).Item).toBeUndefined();
    expect((await client.send(new QueryCommand({ TableName: 'Events', IndexName: 'by-shard', KeyConditionExpression: '#shard = :s', ExpressionAttributeNames: { '#shard': 'shard' }, ExpressionAttributeValues: { ':s': 's' } }))).Items).toEqual([]);
    expect(state.removedByTtl()).toHaveLength(1);
  });

  it('never expires an item whose TTL attribute is not a Number, is in the future, or in a table without TTL', async () => {
    const state = new DynamoModel([events, things]);
    const client = createModelDocumentClient(state);
    await client.send(new PutCommand({ TableName: 'Events', Item: { id: 'text', expires_at: String(at / 1000) } }));
    await client.send(new PutCommand({ TableName: 'Events', Item: { id: 'future', expires_at: at / 1000 + 3_600 } }));
    await client.send(new PutCommand({ TableName: 'Events', Item: { id: 'none' } }));
    await client.send(new PutCommand({ TableName: 'Things', Item: { pk: 'p', expires_at: 0 } }));
    expect(state.sweepExpired(at + 1_000, () => true)).toEqual([]);
    // Written again with a later TTL before the sweep came: not expired any more, kept.
    await client.send(new PutCommand({ TableName: 'Events', Item: { id: 'e2', expires_at: at / 1000 - 10 } }));
    await client.send(new UpdateCommand({ TableName: 'Events', Key: { id: 'e2' }, UpdateExpression: 'SET expires_at = :later', ExpressionAttributeValues: { ':later': at / 1000 + 3_600 } }));
    expect(state.sweepExpired(at + 1_000, () => true)).toEqual([]);
    expect(state.execute('Scan', { TableName: 'Events' })).toMatchObject({ Count: 4 });
  });
});

describe('DynamoModel alone: copies, the gate and the parse cache', () => {
  it('shares no object with its callers, in or out', async () => {
    const state = new DynamoModel([things]);
    const client = createModelDocumentClient(state);
    const item = { pk: 'p', m: { list: [1] }, tags: new Set(['a']) };
    await client.send(new PutCommand({ TableName: 'Things', Item: item }));
    item.m.list.push(2);
    item.tags.add('b');
    const first = await client.send(new GetCommand({ TableName: 'Things', Key: { pk: 'p' } }));
    expect(first.Item).toEqual({ pk: 'p', m: { list: [1] }, tags: new Set(['a']) });
    (first.Item?.m as { list: number[] }).list.push(3);
    (first.Item?.tags as Set<string>).add('z');
    const second = await client.send(new GetCommand({ TableName: 'Things', Key: { pk: 'p' } }));
    expect(second.Item).toEqual({ pk: 'p', m: { list: [1] }, tags: new Set(['a']) });
    expect(second.$metadata).toMatchObject({ httpStatusCode: 200 });
  });

  it('passes each call through the gate, which decides whether and when the model applies it', async () => {
    const calls: { service: string; operation: string; input: unknown }[] = [];
    let isDown = false;
    const gate: CallGate = async (call, apply) => {
      calls.push(call);
      if (isDown) throw Object.assign(new Error('injected'), { name: 'InternalServerError' });
      return apply();
    };
    const state = new DynamoModel([things]);
    const client = createModelDocumentClient(state, gate);
    await client.send(new UpdateCommand({ TableName: 'Things', Key: { pk: 'p' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } }));
    isDown = true;
    await expect(client.send(new UpdateCommand({ TableName: 'Things', Key: { pk: 'p' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } }))).rejects.toThrow('injected');
    expect(calls.map((call) => [call.service, call.operation])).toEqual([
      ['dynamodb', 'Update'],
      ['dynamodb', 'Update'],
    ]);
    expect(calls[0]?.input).toMatchObject({ Key: { pk: 'p' } });
    expect(state.execute('Get', { TableName: 'Things', Key: { pk: 'p' } })).toEqual({ Item: { pk: 'p', n: 1 } });
  });

  it('parses each distinct expression once, across models that share a parser', async () => {
    const parser = new ExpressionParser();
    for (let seed = 0; seed < 20; seed += 1) {
      const state = new DynamoModel([things], { parser });
      for (let index = 0; index < 5; index += 1) {
        state.execute('Update', { TableName: 'Things', Key: { pk: `p${index}` }, UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one', ConditionExpression: 'attribute_not_exists(n) OR n < :max', ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': 10 } });
      }
      state.execute('Scan', { TableName: 'Things', FilterExpression: 'n = :one', ExpressionAttributeValues: { ':one': 1 } });
    }
    expect(parser.parseCount).toBe(3);
  });

  it('refuses what it does not model instead of answering wrongly', async () => {
    const state = new DynamoModel([things]);
    const client = createModelDocumentClient(state);
    await expect(client.send(new TransactWriteCommand({ TransactItems: [] }))).rejects.toBeInstanceOf(DynamoModelUnsupportedError);
    expect(() => state.execute('Get', { TableName: 'Things', Key: { pk: 'p' }, AttributesToGet: ['a'] })).toThrow(DynamoModelUnsupportedError);
    expect(() => state.execute('PutItem', { TableName: 'Things', Item: { pk: 'p' } })).toThrow(DynamoModelUnsupportedError);
    // Binary values are modelled as Uint8Array (what the DocumentClient gives back), nothing else.
    expect(() => state.execute('Put', { TableName: 'Things', Item: { pk: 'p', b: new Float32Array([1]) } })).toThrow(DynamoModelUnsupportedError);
    state.execute('Put', { TableName: 'Things', Item: { pk: 'p', b: Buffer.from([1, 2, 3]) } });
    expect(state.execute('Get', { TableName: 'Things', Key: { pk: 'p' } })).toEqual({ Item: { pk: 'p', b: new Uint8Array([1, 2, 3]) } });
    // A global secondary index that does not hold every attribute cannot answer ALL_ATTRIBUTES
    // from the table (dynalite fetches them, as a local secondary index would).
    const keyed = new DynamoModel([{ name: 'Keyed', partitionKey: 'id', indexes: [{ name: 'shard-keys', partitionKey: 'shard', projection: 'KEYS_ONLY' }] }]);
    expect(() => keyed.execute('Query', { TableName: 'Keyed', IndexName: 'shard-keys', KeyConditionExpression: '#shard = :s', ExpressionAttributeNames: { '#shard': 'shard' }, ExpressionAttributeValues: { ':s': 's0' }, Select: 'ALL_ATTRIBUTES' })).toThrow(DynamoModelUnsupportedError);
  });
});

/**
 * The tables of TABLES (lambda/resources.ts) in the embedded DynamoDB: named `localName`, keyed by
 * their string partition key, on demand. TTL is not set: dynalite has no UpdateTimeToLive and
 * never expires items, so locally event records are kept until DATA_DIR is removed.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  UpdateTableCommand,
  type AttributeDefinition,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLES, type IndexDefinition, type TableDefinition } from '../lambda/resources.js';

/** Longest wait for a new table to become ACTIVE; dynalite makes it so at once when told to. */
const TABLE_ACTIVE_TIMEOUT_SECONDS = 10;

/**
 * Between two checks of a new table's status. dynalite marks it ACTIVE a timer tick after
 * answering CreateTable; the SDK's waiter would check once at once and then only after a second,
 * which, with dynalite in process (in-process-http.ts), cost every start a second per table.
 */
const TABLE_ACTIVE_POLL_MS = 5;

/** Resolves once the table is ACTIVE. */
async function waitUntilActive(dynamo: DynamoDBDocumentClient, tableName: string): Promise<void> {
  const deadline = Date.now() + TABLE_ACTIVE_TIMEOUT_SECONDS * 1000;
  for (;;) {
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() > deadline) throw new Error(`Table ${tableName} is not ACTIVE ${TABLE_ACTIVE_TIMEOUT_SECONDS} s after its creation`);
    await new Promise((resolve) => setTimeout(resolve, TABLE_ACTIVE_POLL_MS));
  }
}

async function listTableNames(dynamo: DynamoDBDocumentClient): Promise<Set<string>> {
  const names = new Set<string>();
  let start: string | undefined;
  do {
    const output = await dynamo.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
    for (const name of output.TableNames ?? []) names.add(name);
    start = output.LastEvaluatedTableName;
  } while (start !== undefined);
  return names;
}

/** The string attributes a table's key and indexes are made of. */
function attributeDefinitions(table: TableDefinition): AttributeDefinition[] {
  const names = new Set([
    table.partitionKey,
    ...(table.sortKey === undefined ? [] : [table.sortKey]),
    ...(table.indexes ?? []).flatMap((index) => [index.partitionKey, ...(index.sortKey === undefined ? [] : [index.sortKey])]),
  ]);
  return [...names].map((name) => ({ AttributeName: name, AttributeType: 'S' }));
}

/** The table's key: its partition key, and its sort key when it has one. */
function keySchema(table: TableDefinition): KeySchemaElement[] {
  return [
    { AttributeName: table.partitionKey, KeyType: 'HASH' },
    ...(table.sortKey === undefined ? [] : [{ AttributeName: table.sortKey, KeyType: 'RANGE' as const }]),
  ];
}

function toGlobalSecondaryIndex(index: IndexDefinition): GlobalSecondaryIndex {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' },
      ...(index.sortKey === undefined ? [] : [{ AttributeName: index.sortKey, KeyType: 'RANGE' as const }]),
    ],
    Projection: { ProjectionType: index.projection },
  };
}

async function createTable(dynamo: DynamoDBDocumentClient, table: TableDefinition): Promise<void> {
  const indexes = (table.indexes ?? []).map(toGlobalSecondaryIndex);
  await dynamo.send(
    new CreateTableCommand({
      TableName: table.localName,
      AttributeDefinitions: attributeDefinitions(table),
      KeySchema: keySchema(table),
      BillingMode: 'PAY_PER_REQUEST',
      ...(indexes.length === 0 ? {} : { GlobalSecondaryIndexes: indexes }),
    }),
  );
  await waitUntilActive(dynamo, table.localName);
}

/**
 * Creates the tables that do not exist yet and checks that existing ones (a restart on the same
 * DATA_DIR) have the key the code relies on.
 */
export async function ensureTables(dynamo: DynamoDBDocumentClient): Promise<void> {
  const existing = await listTableNames(dynamo);
  for (const table of Object.values<TableDefinition>(TABLES)) {
    if (!existing.has(table.localName)) {
      await createTable(dynamo, table);
      continue;
    }
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: table.localName }));
    const key = (Table?.KeySchema ?? []).map((element) => `${element.KeyType}:${element.AttributeName}`).join(', ');
    const expected = keySchema(table).map((element) => `${element.KeyType}:${element.AttributeName}`).join(', ');
    if (key !== expected) {
      throw new Error(`Table ${table.localName} in DATA_DIR is keyed by "${key}", not "${expected}": remove DATA_DIR or use another one`);
    }
    // A DATA_DIR made by an older version may lack an index added since.
    const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    for (const index of table.indexes ?? []) {
      if (present.has(index.name)) continue;
      await dynamo.send(
        new UpdateTableCommand({
          TableName: table.localName,
          AttributeDefinitions: attributeDefinitions(table),
          GlobalSecondaryIndexUpdates: [{ Create: toGlobalSecondaryIndex(index) }],
        }),
      );
    }
  }
}

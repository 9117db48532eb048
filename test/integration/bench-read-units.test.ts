/**
 * The bench's read units come from what dynalite reports (bench/meter.ts): an eventually
 * consistent read must count half a unit, as AWS bills it, or the bench would hide what the
 * eventually consistent reads of the cost work save.
 */
import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchContext, installMeter, type Meter } from '../../bench/meter.js';
import { BENCH_ROOT } from '../../bench/workers.js';
import { TABLES } from '../../lambda/resources.js';
import { uniquePrefix } from './support/api.js';
import { startDynaliteTables, type DynaliteTables } from './support/dynalite.js';

describe('bench meter read units', { timeout: 30_000 }, () => {
  let tables: DynaliteTables;
  let meter: Meter;

  beforeAll(async () => {
    // Installed in this test file's own worker: it wraps the SDK's send for the whole process.
    meter = installMeter(BENCH_ROOT);
    tables = await startDynaliteTables();
  });

  afterAll(async () => {
    await tables?.stop();
  });

  it('counts an eventually consistent read at half the units of a strongly consistent one', async () => {
    const table = TABLES.settings.localName;
    const keys = [uniquePrefix('units'), uniquePrefix('units')].map((id) => ({ [TABLES.settings.partitionKey]: id }));
    for (const key of keys) await benchContext.run('bench', () => tables.dynamo.send(new PutCommand({ TableName: table, Item: { ...key, value: 1 } })));
    meter.measureUnits = true;
    meter.reset();
    await benchContext.run('consumer', async () => {
      await tables.dynamo.send(new GetCommand({ TableName: table, Key: keys[0], ConsistentRead: false }));
      await tables.dynamo.send(new GetCommand({ TableName: table, Key: keys[0], ConsistentRead: true }));
    });
    await benchContext.run('ingest', async () => {
      await tables.dynamo.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: false } } }));
    });
    const units = (caller: string, operation: string): number | undefined => meter.snapshot(1).calls.find((call) => call.caller === caller && call.operation === operation)?.readUnits;
    expect(units('consumer', 'GetItem')).toBe(1.5);
    expect(units('ingest', 'BatchGetItem')).toBe(1);
  });
});

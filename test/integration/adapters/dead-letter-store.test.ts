/**
 * The dead-letter store contract against the DynamoDB adapter on dynalite. Payloads too large for
 * an item go to an in-memory payload store: the bucket is not what is under test here.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDeadLetterStore } from '../../../lambda/adapters/dead-letter-store.js';
import { TABLES } from '../../../lambda/resources.js';
import { describeDeadLetterStoreContract } from '../../support/contracts/dead-letter-store.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';
import { inMemoryPayloads } from '../support/payloads.js';

let tables: DynaliteTables;
const payloads = inMemoryPayloads();
const { objects } = payloads;

beforeAll(async () => {
  tables = await startDynaliteTables();
});

afterAll(async () => {
  await tables.stop();
});

describeDeadLetterStoreContract('DeadLetters adapter on dynalite', () => createDeadLetterStore(tables.dynamo, { tableName: TABLES.deadLetters.localName, ttlDays: 30, payloads }));

it('leaves no payload object behind once every large dead letter is removed', () => {
  expect([...objects.keys()]).toEqual([]);
});

/**
 * The dead-letter store contract against the DynamoDB adapter on dynalite. Payloads too large for
 * an item go to an in-memory payload store: the bucket is not what is under test here.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDeadLetterStore } from '../../../lambda/adapters/dead-letter-store.js';
import type { PayloadStore } from '../../../lambda/core/dead-letter.js';
import { TABLES } from '../../../lambda/resources.js';
import { describeDeadLetterStoreContract } from '../../support/contracts/dead-letter-store.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;
const objects = new Map<string, string>();

const payloads: PayloadStore = {
  put: async (key, body) => {
    objects.set(key, body);
  },
  get: async (key) => {
    const body = objects.get(key);
    if (body === undefined) throw new Error(`no object ${key}`);
    return body;
  },
  remove: async (key) => {
    objects.delete(key);
  },
};

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

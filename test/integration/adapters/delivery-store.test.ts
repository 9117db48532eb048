/**
 * The delivery store contract against the DynamoDB adapters on dynalite, composed as the consumer
 * composes them (lambda/handlers/consumer.ts, createDeliveryPorts): the Events table's store and
 * the OrderingKeys table's store side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventStore } from '../../../lambda/adapters/event-store.js';
import { createOrderingKeyStore } from '../../../lambda/adapters/ordering-key-store.js';
import { TABLES } from '../../../lambda/resources.js';
import { describeDeliveryStoreContract, type ContractDeliveryStore } from '../../support/contracts/delivery-store.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;

beforeAll(async () => {
  tables = await startDynaliteTables();
});

afterAll(async () => {
  await tables.stop();
});

describeDeliveryStoreContract('Events and OrderingKeys adapters on dynalite', (): ContractDeliveryStore => ({
  ...createEventStore(tables.dynamo, { tableName: TABLES.events.localName, ttlDays: 30 }),
  ...createOrderingKeyStore(tables.dynamo, TABLES.orderingKeys.localName),
}));

describe('OrderingKeys adapter: a batch’s numbers for the backstop import', () => {
  it('keeps the numbers of a batch’s later events findable until a second head from outside it', async () => {
    const keys = createOrderingKeyStore(tables.dynamo, TABLES.orderingKeys.localName);
    const key = `batch-key-${process.pid}-${Date.now()}`;
    await keys.beginBatch({ orderingKey: key, events: [{ eventId: 'e1' }, { eventId: 'e2' }, { eventId: 'e3' }] });
    const sorted = async () => [...((await keys.findHead(key))?.numberedAhead ?? [])].sort((a, b) => a.sequence - b.sequence);
    expect(await sorted()).toEqual([{ eventId: 'e2', sequence: 2 }, { eventId: 'e3', sequence: 3 }]);
    await keys.beginAttempt({ orderingKey: key, eventId: 'e4', maxAttempts: 3 });
    expect(await sorted()).toEqual([{ eventId: 'e2', sequence: 2 }, { eventId: 'e3', sequence: 3 }]);
    await keys.beginAttempt({ orderingKey: key, eventId: 'e5', maxAttempts: 3 });
    expect(await sorted()).toEqual([]);
    expect((await keys.findHead(key))?.sequence).toBe(5);
  });

  it('takes an event out of the batch’s numbers when it begins alone, keeping it as the head', async () => {
    const keys = createOrderingKeyStore(tables.dynamo, TABLES.orderingKeys.localName);
    const key = `batch-alone-${process.pid}-${Date.now()}`;
    await keys.beginBatch({ orderingKey: key, events: [{ eventId: 'e1' }, { eventId: 'e2' }, { eventId: 'e3' }] });
    await keys.beginAttempt({ orderingKey: key, eventId: 'e1', maxAttempts: 3 });
    const second = await keys.beginAttempt({ orderingKey: key, eventId: 'e2', maxAttempts: 3 });
    expect(second).toMatchObject({ kind: 'attempt', sequence: 2, attempts: 1, previous: { eventId: 'e1', sequence: 1 } });
    const head = await keys.findHead(key);
    expect(head).toMatchObject({ eventId: 'e2', sequence: 2, numberedAhead: [{ eventId: 'e3', sequence: 3 }] });
  });
});

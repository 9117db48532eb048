/**
 * The delivery store contract against the DynamoDB adapters on dynalite, composed as the consumer
 * composes them (lambda/handlers/consumer.ts, createDeliveryPorts): the Events table's store and
 * the OrderingKeys table's store side by side.
 */
import { afterAll, beforeAll } from 'vitest';
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

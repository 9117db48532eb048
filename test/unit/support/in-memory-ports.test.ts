/**
 * The in-memory fakes the unit tests use, held to the same contracts as the DynamoDB adapters
 * (test/integration/adapters/*-store.test.ts run these suites on dynalite).
 */
import { describeDeliveryStoreContract } from '../../support/contracts/delivery-store.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

describeDeliveryStoreContract('InMemoryDeliveryStore', () => new InMemoryDeliveryStore());

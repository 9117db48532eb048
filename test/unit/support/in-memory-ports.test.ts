/**
 * The in-memory fakes the unit tests use, held to the same contracts as the DynamoDB adapters
 * (test/integration/adapters/*-store.test.ts run these suites on dynalite).
 */
import { describeDeadLetterStoreContract } from '../../support/contracts/dead-letter-store.js';
import { describeDeliveryStoreContract } from '../../support/contracts/delivery-store.js';
import { InMemoryDeadLetterStore, InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

describeDeliveryStoreContract('InMemoryDeliveryStore', () => new InMemoryDeliveryStore());
describeDeadLetterStoreContract('InMemoryDeadLetterStore', () => new InMemoryDeadLetterStore());

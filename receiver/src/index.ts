/**
 * @ordered-webhooks/receiver: check, as a receiver, that an ordering key's events arrive in order
 * and complete. See README.md.
 */
export { createReceiver, storeKeyOf, type Receiver, type ReceiverAnswer, type ReceiverOptions, type RawRequest } from './receiver.js';
export { createMemoryStore, type ReceiverStore, type StoredKey } from './store.js';
export { judge, isMissing, Verdict, MAX_LISTED_NUMBERS, type KeyState, type OrderReport, type Place } from './order.js';
export { readEvents, type ReceivedEvent } from './body.js';

/** Limits of the contract and of SQS, each written once. */

/** docs/api.md#events: a request body is at most 1 MiB. */
export const MAX_REQUEST_BYTES = 1_048_576;

/** docs/api.md#events: a batch holds 1 to 100 events. */
export const MAX_EVENTS_PER_REQUEST = 100;

/** SQS: a message body, and the sum of the bodies in one SendMessageBatch, are at most 1 MiB. */
export const MAX_SQS_MESSAGE_BYTES = 1_048_576;

/**
 * The most events of one key in one SQS message (a pack), whatever the configuration: as many as
 * SQS hands out messages per receive. The configuration may set fewer (`maxEventsPerMessage`).
 */
export const MAX_EVENTS_PER_MESSAGE = 10;
/** SQS: SendMessageBatch and ChangeMessageVisibilityBatch take at most 10 entries. */
export const MAX_SQS_BATCH_ENTRIES = 10;

/** DynamoDB: BatchGetItem reads at most 100 keys per call. */
export const MAX_BATCH_GET_KEYS = 100;

/**
 * Largest queued event body: SQS's limit less room for the dead-letter attributes (reason,
 * attempts, sequence), so that any event that was queued can also be dead-lettered whole.
 */
export const MAX_QUEUED_EVENT_BYTES = MAX_SQS_MESSAGE_BYTES - 4096;

/**
 * An event's payload nests objects and arrays at most this deep (the payload object itself is
 * level 1). Deeper input is refused as `invalid_request`: serializing it (JSON.stringify recurses)
 * would overflow the stack and answer a bad request as our fault.
 */
export const MAX_PAYLOAD_DEPTH = 64;

/**
 * An ordering key is at most this many bytes of UTF-8: DynamoDB's limit on a partition key value
 * (2048 bytes), as the key is the OrderingKeys table's. A subscription id (128 characters, at most
 * 384 bytes) never comes near it; a resource key (see `partitionKey`) can, when JSON escapes
 * control characters of a 256-character resource id six bytes each, and is refused beyond it.
 */
export const MAX_ORDERING_KEY_BYTES = 2048;

/** SQS's longest message group id: a longer one names no group of this service. */
export const MAX_MESSAGE_GROUP_ID_LENGTH = 128;

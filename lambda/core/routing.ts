/**
 * The ordering contract (docs/api.md#routing-ordering-key-to-message-group): which events are ordered relative to each other, and the
 * SQS message group that carries them. BLAKE2b, never a seeded hash: the same key must map to the
 * same group in every process, on every machine, in every language (see the CPython vectors).
 */
import { blake2b } from '@noble/hashes/blake2.js';
import * as z from 'zod';

/**
 * What a subscription orders its events by (its `ordering` field): `subscription`, all its events
 * in one order (the default, and the only mode before there was a choice), or `resource`, one
 * order per `resource_id`, so that different resources of one endpoint are delivered concurrently.
 */
export const Ordering = { subscription: 'subscription', resource: 'resource' } as const;
export type Ordering = (typeof Ordering)[keyof typeof Ordering];

/** A subscription stored before `ordering` existed orders as it always did: by subscription. */
export const DEFAULT_ORDERING: Ordering = Ordering.subscription;

/** The fields of an event that routing may read. */
export interface RoutableEvent {
  readonly subscription_id: string;
  readonly resource_id?: string | undefined;
}

/**
 * Subscription ids are 1 to 128 characters (UTF-16 code units, as the schema counts them): a key
 * at least one longer can never be a subscription's own key.
 */
const MIN_RESOURCE_KEY_LENGTH = 129;

/** Thrown when an event without `resource_id` is routed by resource: ingest refuses such an event before it routes. */
export class MissingResourceIdError extends Error {
  constructor(subscriptionId: string) {
    super(`an event of subscription ${subscriptionId}, which orders by resource, has no resource_id`);
    this.name = 'MissingResourceIdError';
  }
}

/**
 * The ordering key of an event: everything that shares it is delivered in order, nothing else is.
 * This function is the whole ordering contract; changing it re-routes keys, which is safe only
 * with the queue empty (see docs/configuration.md on changing PARTITION_COUNT, and docs/guarantees.md on `ordering`).
 *
 * By subscription, the key is the subscription id. By resource, it is the JSON array text
 * `["<subscription_id>","<resource_id>"]` (JSON.stringify), right-padded with spaces to 129
 * characters when shorter. JSON makes it unambiguous: two different pairs never give one text,
 * whatever characters the ids hold (a separator character would need escaping of its own), and
 * it reads back as the pair (`subscriptionOfKey`; JSON ignores the trailing spaces). The padding
 * makes it longer than any subscription id, so that it never equals a subscription's own key:
 * ids may hold any characters, so any shorter form could be some other subscription's id, and
 * that subscription's events would share this key's order and sequence numbers.
 * @throws MissingResourceIdError by resource, for an event without `resource_id` (the caller refuses it first)
 */
export function partitionKey(event: RoutableEvent, ordering: Ordering): string {
  if (ordering === Ordering.subscription) return event.subscription_id;
  if (event.resource_id === undefined) throw new MissingResourceIdError(event.subscription_id);
  return JSON.stringify([event.subscription_id, event.resource_id]).padEnd(MIN_RESOURCE_KEY_LENGTH, ' ');
}

const resourceKeySchema = z.tuple([z.string(), z.string()]);

/**
 * The subscription an ordering key belongs to: the key itself when it is a subscription's own
 * key, or the first member of a resource key (see {@link partitionKey}). A key too long to be a
 * subscription id that is not a resource key (none is ever made) belongs to no subscription.
 */
export function subscriptionOfKey(key: string): string | undefined {
  if (key.length < MIN_RESOURCE_KEY_LENGTH) return key;
  let json: unknown;
  try {
    json = JSON.parse(key);
  } catch {
    return undefined;
  }
  const pair = resourceKeySchema.safeParse(json);
  return pair.success ? pair.data[0] : undefined;
}

const encoder = new TextEncoder();

/** The BLAKE2b digest of the key's UTF-8 bytes, `lengthBytes` long (a parameter of BLAKE2b, not a truncation). */
export function blake2bDigest(key: string, lengthBytes: number): Uint8Array {
  return blake2b(encoder.encode(key), { dkLen: lengthBytes });
}

function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** The partition of a key: the 8-byte digest read as a big-endian unsigned 64-bit integer, modulo `partitionCount`. */
export function partitionFor(key: string, partitionCount: number): number {
  const value = Buffer.from(blake2bDigest(key, 8)).readBigUInt64BE(0);
  return Number(value % BigInt(partitionCount));
}

/**
 * The SQS message group id of an ordering key. Per-key mode (no partition count): the 16-byte
 * digest as 32 lowercase hex characters, one group per key. Partition mode: `partition-<p>`.
 * Both fit SQS's 128-character group-id alphabet.
 */
export function messageGroupIdFor(key: string, partitionCount: number | undefined): string {
  if (partitionCount === undefined) return toHex(blake2bDigest(key, 16));
  return `partition-${partitionFor(key, partitionCount)}`;
}

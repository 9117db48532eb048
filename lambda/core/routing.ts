/**
 * The ordering contract (CONTRACT §1): which events are ordered relative to each other, and the
 * SQS message group that carries them. BLAKE2b, never a seeded hash: the same key must map to the
 * same group in every process, on every machine, in every language (see the CPython vectors).
 */
import { blake2b } from '@noble/hashes/blake2.js';

/** The fields of an event that routing may read. */
export interface RoutableEvent {
  readonly subscription_id: string;
}

/**
 * The ordering key of an event: everything that shares it is delivered in order, nothing else is.
 * This function is the whole ordering contract; changing it re-routes keys, which is safe only
 * with the queue empty (see the README on changing PARTITION_COUNT).
 */
export function partitionKey(event: RoutableEvent): string {
  return event.subscription_id;
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

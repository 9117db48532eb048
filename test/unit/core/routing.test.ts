import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { blake2bDigest, messageGroupIdFor, MissingResourceIdError, Ordering, partitionFor, partitionKey, subscriptionOfKey } from '../../../lambda/core/routing.js';

const vectorsSchema = z.object({
  vectors: z.array(
    z.object({
      key: z.string(),
      blake2b_64_hex: z.string().regex(/^[0-9a-f]{16}$/),
      blake2b_128_hex: z.string().regex(/^[0-9a-f]{32}$/),
      uint64: z.string().regex(/^\d+$/),
      partition_16: z.number().int(),
      partition_64: z.number().int(),
      partition_1000: z.number().int(),
    }),
  ),
});

// Reference values computed with CPython's hashlib.blake2b (copied from the design's vectors).
const { vectors } = vectorsSchema.parse(
  JSON.parse(readFileSync(new URL('../../fixtures/blake2b-routing.json', import.meta.url), 'utf8')),
);

describe('routing vectors', () => {
  it('holds the reference rows, including the empty and non-ASCII keys', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(20);
    expect(vectors.map((v) => v.key)).toContain('');
  });

  it.each(vectors)('reproduces CPython for key %j', (vector) => {
    expect(Buffer.from(blake2bDigest(vector.key, 8)).toString('hex')).toBe(vector.blake2b_64_hex);
    expect(Buffer.from(blake2bDigest(vector.key, 16)).toString('hex')).toBe(vector.blake2b_128_hex);
    expect(Buffer.from(blake2bDigest(vector.key, 8)).readBigUInt64BE(0)).toBe(BigInt(vector.uint64));
    expect(partitionFor(vector.key, 16)).toBe(vector.partition_16);
    expect(partitionFor(vector.key, 64)).toBe(vector.partition_64);
    expect(partitionFor(vector.key, 1000)).toBe(vector.partition_1000);
    expect(messageGroupIdFor(vector.key, undefined)).toBe(vector.blake2b_128_hex);
    expect(messageGroupIdFor(vector.key, 16)).toBe(`partition-${vector.partition_16}`);
    expect(messageGroupIdFor(vector.key, 1000)).toBe(`partition-${vector.partition_1000}`);
  });
});

describe('partitionKey', () => {
  it('is the subscription id, whatever else the event holds, when ordering by subscription', () => {
    expect(partitionKey({ subscription_id: 'sub_42' }, Ordering.subscription)).toBe('sub_42');
    const a = { subscription_id: 'sub_1', tenant_id: 't1', resource_id: 'r1' };
    const b = { subscription_id: 'sub_1', tenant_id: 't2', resource_id: 'r2' };
    expect(partitionKey(a, Ordering.subscription)).toBe(partitionKey(b, Ordering.subscription));
  });

  it('is the JSON array of the subscription and resource ids, padded to 129 characters, when ordering by resource', () => {
    const key = partitionKey({ subscription_id: 'sub_1', resource_id: 'order-7' }, Ordering.resource);
    expect(key).toBe(`["sub_1","order-7"]${' '.repeat(129 - 19)}`);
    expect(JSON.parse(key)).toEqual(['sub_1', 'order-7']);
    const long = partitionKey({ subscription_id: 's'.repeat(128), resource_id: 'r'.repeat(256) }, Ordering.resource);
    expect(long).toBe(JSON.stringify(['s'.repeat(128), 'r'.repeat(256)]));
  });

  // Pairs a naive joining would merge: a separator inside an id, quotes, escapes, and a pair that
  // reads like another pair's JSON.
  const pairs: readonly (readonly [string, string])[] = [
    ['a', 'b'],
    ['a,b', 'c'],
    ['a', 'b,c'],
    ['a"', 'b'],
    ['a', '"b'],
    ['a\\', 'b'],
    ['a', '\\b'],
    ['["a","b"]', 'c'],
    ['a', 'b '],
    ['a ', 'b'],
    ['ключ', '🦄'],
    ['a\u0000', 'b'],
    ['a', '\u0000b'],
  ];

  it('gives different keys for different pairs', () => {
    const keys = pairs.map(([subscription_id, resource_id]) => partitionKey({ subscription_id, resource_id }, Ordering.resource));
    expect(new Set(keys).size).toBe(pairs.length);
  });

  it.each(pairs)('never gives a key a subscription id could be, for (%j, %j)', (subscriptionId, resourceId) => {
    const key = partitionKey({ subscription_id: subscriptionId, resource_id: resourceId }, Ordering.resource);
    // Subscription ids are 1 to 128 characters: the key is longer than any of them.
    expect(key.length).toBeGreaterThan(128);
    expect(subscriptionOfKey(key)).toBe(subscriptionId);
  });

  it('reads a resource key back as the pair it was made of, JSON ignoring the padding', () => {
    const key = partitionKey({ subscription_id: 'sub "quoted"', resource_id: 'r\n1' }, Ordering.resource);
    expect(JSON.parse(key)).toEqual(['sub "quoted"', 'r\n1']);
  });

  it('throws for an event without resource_id when ordering by resource', () => {
    expect(() => partitionKey({ subscription_id: 'sub_1' }, Ordering.resource)).toThrow(MissingResourceIdError);
  });
});

describe('subscriptionOfKey', () => {
  it.each([
    ['a subscription key', 'sub_1', 'sub_1'],
    ['a subscription key that looks like a pair', '["x","y"]', '["x","y"]'],
    ['the longest subscription key', 'x'.repeat(128), 'x'.repeat(128)],
    ['a resource key', `["sub_1","r"]${' '.repeat(116)}`, 'sub_1'],
    ['a long text that is no pair', 'x'.repeat(129), undefined],
    ['a long JSON text of another shape', JSON.stringify(['a', 'b', 'c'.repeat(130)]), undefined],
  ])('names the subscription of %s', (_what, key, subscriptionId) => {
    expect(subscriptionOfKey(key)).toBe(subscriptionId);
  });
});

describe('messageGroupIdFor', () => {
  it('gives SQS-valid group ids in both modes', () => {
    for (const key of ['sub_0', '', 'ключ', 'x'.repeat(128)]) {
      expect(messageGroupIdFor(key, undefined)).toMatch(/^[0-9a-f]{32}$/);
      expect(messageGroupIdFor(key, 7)).toMatch(/^partition-[0-6]$/);
    }
  });

  it('puts every key in partition 0 when there is one partition', () => {
    expect(messageGroupIdFor('sub_42', 1)).toBe('partition-0');
  });
});

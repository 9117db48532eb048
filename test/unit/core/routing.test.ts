import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { blake2bDigest, messageGroupIdFor, partitionFor, partitionKey } from '../../../lambda/core/routing.js';

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
  it('is the subscription id, whatever else the event holds', () => {
    expect(partitionKey({ subscription_id: 'sub_42' })).toBe('sub_42');
    const a = { subscription_id: 'sub_1', tenant_id: 't1', resource_id: 'r1' };
    const b = { subscription_id: 'sub_1', tenant_id: 't2', resource_id: 'r2' };
    expect(partitionKey(a)).toBe(partitionKey(b));
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

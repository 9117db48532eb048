import { describe, expect, it } from 'vitest';
import { indexWriteUnits, itemSize, numberSize, readUnits, tableWriteUnits, valueSize, writeUnits, type IndexKeys, type Item } from '../../../bench/dynamo-units.js';

describe('numberSize', () => {
  it.each([
    [0, 2],
    [7, 2],
    [12, 2],
    [123, 3],
    [1000, 2],
    [-12.5, 3],
    [1234567890, 6],
  ])('counts one byte per two significant digits plus one when the number is %s', (value, expected) => {
    expect(numberSize(value)).toBe(expected);
  });
});

describe('valueSize', () => {
  it.each<[string, unknown, number]>([
    ['an ASCII string', 'abc', 3],
    ['a multi-byte string', 'é€', 5],
    ['a boolean', true, 1],
    ['null', null, 1],
    ['bytes', new Uint8Array(10), 10],
    ['a list', ['ab', 1], 3 + (1 + 2) + (1 + 2)],
    ['a map', { a: 'xy' }, 3 + 1 + 1 + 2],
    ['a string set', new Set(['ab', 'cde']), 5],
  ])('sizes %s by DynamoDB rules', (_name, value, expected) => {
    expect(valueSize(value)).toBe(expected);
  });
});

describe('itemSize', () => {
  it('adds every attribute name and value when the item is flat', () => {
    expect(itemSize({ id: 'abc', n: 12 })).toBe(2 + 3 + 1 + 2);
  });

  it('skips undefined attributes when the document client would remove them', () => {
    expect(itemSize({ id: 'abc', gone: undefined })).toBe(5);
  });
});

describe('writeUnits and readUnits', () => {
  it.each([
    [0, 1],
    [1, 1],
    [1024, 1],
    [1025, 2],
    [4096, 4],
  ])('bills %s bytes written as %s write units', (bytes, units) => {
    expect(writeUnits(bytes)).toBe(units);
  });

  it.each<[number, boolean, number]>([
    [0, true, 1],
    [4096, true, 1],
    [4097, true, 2],
    [100, false, 0.5],
    [8192, false, 1],
  ])('bills %s bytes read (consistent: %s) as %s read units', (bytes, isConsistent, units) => {
    expect(readUnits(bytes, isConsistent)).toBe(units);
  });
});

describe('tableWriteUnits', () => {
  const small: Item = { id: 'a' };
  const large: Item = { id: 'a', body: 'x'.repeat(3000) };

  it.each<[string, Item | undefined, Item | undefined, number]>([
    ['a new small item', undefined, small, 1],
    ['a new large item', undefined, large, 3],
    ['shrinking a large item', large, small, 3],
    ['deleting a large item', large, undefined, 3],
    ['a refused write on nothing', undefined, undefined, 1],
  ])('bills the larger of before and after for %s', (_name, before, after, units) => {
    expect(tableWriteUnits(before, after)).toBe(units);
  });
});

describe('indexWriteUnits', () => {
  const index: IndexKeys = { partitionKey: 'shard' };
  const out: Item = { id: 'g', depth: 0 };
  const inA: Item = { id: 'g', depth: 1, shard: 'a' };
  const inA2: Item = { id: 'g', depth: 2, shard: 'a' };
  const inB: Item = { id: 'g', depth: 1, shard: 'b' };

  it.each<[string, Item | undefined, Item | undefined, number]>([
    ['an item that never carries the index key', out, { ...out, depth: 3 }, 0],
    ['an item entering the index', out, inA, 1],
    ['an item leaving the index', inA, out, 1],
    ['an indexed item whose other attributes change', inA, inA2, 1],
    ['an indexed item whose index key changes', inA, inB, 2],
    ['an indexed item written unchanged', inA, { ...inA }, 0],
    ['a new item in the index', undefined, inA, 1],
    ['a deleted indexed item', inA, undefined, 1],
  ])('counts the index writes of %s', (_name, before, after, units) => {
    expect(indexWriteUnits(before, after, index)).toBe(units);
  });

  it('needs the sort key too when the index has one', () => {
    expect(indexWriteUnits(undefined, inA, { partitionKey: 'shard', sortKey: 'position' })).toBe(0);
  });

  it('projects everything when no projection is given, as a checkout from before projections', () => {
    expect(indexWriteUnits(inA, inA2, index)).toBe(indexWriteUnits(inA, inA2, { ...index, projection: 'ALL' }));
  });
});

describe('indexWriteUnits of a key-only index', () => {
  const keysOnly: IndexKeys = { partitionKey: 'shard', projection: 'KEYS_ONLY', tableKeys: ['id'] };
  const out: Item = { id: 'g', depth: 0 };
  const inA: Item = { id: 'g', depth: 1, shard: 'a', oldest: '2026-12-03T00:00:00Z' };
  const big = 'x'.repeat(3000);

  it.each<[string, Item | undefined, Item | undefined, number]>([
    ['an item that never carries the index key', out, { ...out, depth: 3 }, 0],
    ['an item entering the index', out, inA, 1],
    ['an item leaving the index', inA, out, 1],
    ['an indexed item whose other attributes change', inA, { ...inA, depth: 2, oldest: '2026-12-03T00:00:01Z' }, 0],
    ['an indexed item losing an attribute the index does not hold', inA, { id: 'g', shard: 'a', depth: 1 }, 0],
    ['an indexed item whose index key changes', inA, { ...inA, shard: 'b' }, 2],
    ['an indexed item written unchanged', inA, { ...inA }, 0],
    // The index holds the keys alone: a 3 KB item enters it for one unit, not three.
    ['a large item entering the index', out, { ...inA, pad: big }, 1],
    ['a new item in the index', undefined, inA, 1],
    ['a deleted indexed item', inA, undefined, 1],
  ])('counts the index writes of %s', (_name, before, after, units) => {
    expect(indexWriteUnits(before, after, keysOnly)).toBe(units);
  });

  it('bills a large item on what the index holds, where projecting everything bills the whole item', () => {
    const large: Item = { ...inA, pad: big };
    expect(indexWriteUnits(out, large, { partitionKey: 'shard', projection: 'ALL' })).toBe(3);
    expect(indexWriteUnits(out, large, keysOnly)).toBe(1);
  });
});

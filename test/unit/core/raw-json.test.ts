import { describe, expect, it } from 'vitest';
import { RawJson, stringifyJson } from '../../../lambda/core/raw-json.js';

describe('stringifyJson', () => {
  it.each([
    ['scalars', [1, 'a', true, null, -0, 1e21]],
    ['nested objects and arrays', { a: [1, { b: 'c' }, []], d: {}, e: 'ü 😀 \u2028 \ud800 \u0000' }],
    ['undefined members and items, and functions, as JSON.stringify leaves or nulls them', { a: undefined, b: [undefined, () => 1], c: () => 2 }],
    ['a Date, through its toJSON', { at: new Date('2026-12-02T12:00:00.000Z') }],
    ['an own "__proto__" key', JSON.parse('{"__proto__":{"x":1},"y":2}') as unknown],
  ])('writes %s as JSON.stringify does', (_label, value) => {
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it('writes a RawJson member as its text, and no string that looks like one', () => {
    const text = '{"n":9007199254740993,"f":1e400, "neg":-0}';
    expect(stringifyJson({ items: [{ payload: new RawJson(text), note: '{"n":1}' }], raw: new RawJson('1.0') })).toBe(`{"items":[{"payload":${text},"note":"{\\"n\\":1}"}],"raw":1.0}`);
  });
});

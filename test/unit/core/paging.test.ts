import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { DEFAULT_PAGE_LIMIT, encodeCursor, MAX_PAGE_LIMIT, parsePageQuery, takePage, type PageRequest } from '../../../lambda/core/paging.js';

/** A list's position for these tests: a number, tagged as lag cursors are. */
const positionSchema = z.strictObject({ list: z.literal('numbers'), n: z.number().int() });
type Position = z.infer<typeof positionSchema>;
const positionOf = (n: number): Position => ({ list: 'numbers', n });
const compare = (a: Position, b: Position) => a.n - b.n;

const LIMIT_DETAIL = { path: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_LIMIT}` };
const CURSOR_DETAIL = { path: 'cursor', message: 'is not a cursor this API gave out; start again without it' };
const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** The request a cursor of an answer stands for, as the next request would be read. */
function nextRequest(limit: number, cursor: string): PageRequest<Position> {
  const parsed = parsePageQuery({ limit: String(limit), cursor }, positionSchema);
  if (!parsed.ok) throw new Error(`the cursor ${cursor} was refused`);
  return parsed.value;
}

/** Every page of `sorted`, following each next cursor until it is null. */
function readAllPages(sorted: readonly number[], limit: number): number[][] {
  const pages: number[][] = [];
  let request: PageRequest<Position> = { limit, after: undefined };
  for (;;) {
    const page = takePage(sorted, request, positionOf, compare);
    pages.push(page.items);
    if (page.nextCursor === null) return pages;
    request = nextRequest(limit, page.nextCursor);
  }
}

describe('parsePageQuery', () => {
  it.each([
    { query: undefined, limit: DEFAULT_PAGE_LIMIT },
    { query: {}, limit: DEFAULT_PAGE_LIMIT },
    { query: { limit: '1' }, limit: 1 },
    { query: { limit: '1000' }, limit: 1000 },
    { query: { limit: '250', subscription_id: 'sub_1' }, limit: 250 },
  ])('reads limit $limit from $query, from the start', ({ query, limit }) => {
    expect(parsePageQuery(query, positionSchema)).toEqual({ ok: true, value: { limit, after: undefined } });
  });

  it('reads back the position a cursor was made from', () => {
    expect(parsePageQuery({ cursor: encodeCursor(positionOf(42)) }, positionSchema)).toEqual({ ok: true, value: { limit: DEFAULT_PAGE_LIMIT, after: positionOf(42) } });
  });

  it('makes cursors of URL-safe characters only', () => {
    expect(encodeCursor({ list: 'numbers', n: 1, text: '~~~???>>>' })).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each(['0', '1001', '-1', '1.5', '1e2', '0x10', ' 5', '05', '', 'ten', '100,200'])('refuses limit=%j as invalid_request', (limit) => {
    const parsed = parsePageQuery({ limit }, positionSchema);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.refusal).toEqual({ code: 'invalid_request', message: 'The paging parameters are not valid.', details: [LIMIT_DETAIL] });
    }
  });

  it.each([
    { case: 'empty', cursor: '' },
    { case: 'not base64url', cursor: 'a+b/c=' },
    { case: 'not JSON', cursor: base64url('not json') },
    { case: 'truncated', cursor: encodeCursor(positionOf(7)).slice(0, -3) },
    { case: 'JSON of another shape', cursor: base64url('[1,2,3]') },
    { case: 'a field tampered with', cursor: encodeCursor({ list: 'numbers', n: 1.5 }) },
    { case: 'a field added', cursor: encodeCursor({ ...positionOf(7), admin: true }) },
    { case: 'another list’s', cursor: encodeCursor({ list: 'lag', n: 7 }) },
    { case: 'too long', cursor: encodeCursor({ list: 'numbers', n: 7, padding: 'x'.repeat(2000) }) },
  ])('refuses a cursor that is $case as invalid_request', ({ cursor }) => {
    const parsed = parsePageQuery({ cursor }, positionSchema);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.refusal).toMatchObject({ code: 'invalid_request', details: [CURSOR_DETAIL] });
  });

  it('names both parameters when both are wrong', () => {
    const parsed = parsePageQuery({ limit: '0', cursor: 'nope' }, positionSchema);
    expect(parsed.ok ? undefined : parsed.refusal).toMatchObject({ details: [LIMIT_DETAIL, CURSOR_DETAIL] });
  });
});

describe('takePage', () => {
  const list = [1, 2, 3, 4, 5, 6, 7];

  it.each([1, 2, 3, 6, 7, 8, 100])('reads %i at a time into pages that concatenate to the whole list', (limit) => {
    const pages = readAllPages(list, limit);
    expect(pages.flat()).toEqual(list);
    expect(pages.every((page) => page.length <= limit)).toBe(true);
    expect(pages).toHaveLength(Math.max(1, Math.ceil(list.length / limit)));
  });

  it.each([
    { case: 'the list fits the page', sorted: list, limit: 7, expected: { items: list, nextCursor: null } },
    { case: 'the list is empty', sorted: [], limit: 3, expected: { items: [], nextCursor: null } },
    { case: 'the list is longer', sorted: list, limit: 3, expected: { items: [1, 2, 3], nextCursor: encodeCursor(positionOf(3)) } },
  ])('gives a next cursor only when items remain: $case', ({ sorted, limit, expected }) => {
    expect(takePage(sorted, { limit, after: undefined }, positionOf, compare)).toEqual(expected);
  });

  it.each([
    { case: 'its last item is gone', sorted: [1, 2, 4, 5], after: 3, expected: [4, 5] },
    { case: 'an item before it is gone', sorted: [2, 3, 4, 5], after: 3, expected: [4, 5] },
    { case: 'an item was added before it', sorted: [0, 1, 2, 3, 4, 5], after: 3, expected: [4, 5] },
    { case: 'everything after it is gone', sorted: [1, 2, 3], after: 3, expected: [] },
  ])('continues strictly after the cursor’s position when $case', ({ sorted, after, expected }) => {
    expect(takePage(sorted, { limit: 10, after: positionOf(after) }, positionOf, compare)).toEqual({ items: expected, nextCursor: null });
  });
});

import { describe, expect, it } from 'vitest';
import { parseDeadLettersQuery, toDeadLettersCursor } from '../../../lambda/core/dead-letter.js';
import { DEFAULT_PAGE_LIMIT, encodeCursor } from '../../../lambda/core/paging.js';

describe('parseDeadLettersQuery', () => {
  it('reads a first page of the subscription named', () => {
    expect(parseDeadLettersQuery({ subscription_id: 'sub_1' })).toEqual({ ok: true, value: { subscriptionId: 'sub_1', after: undefined, limit: DEFAULT_PAGE_LIMIT } });
  });

  it('reads back the position of a cursor it gave out for the same subscription', () => {
    const cursor = toDeadLettersCursor('sub_1', 'p1') ?? '';
    expect(parseDeadLettersQuery({ subscription_id: 'sub_1', cursor, limit: '5' })).toEqual({ ok: true, value: { subscriptionId: 'sub_1', after: 'p1', limit: 5 } });
  });

  it('refuses a cursor of another subscription as invalid_request on cursor', () => {
    const cursor = toDeadLettersCursor('sub_1', 'p1') ?? '';
    expect(parseDeadLettersQuery({ subscription_id: 'sub_2', cursor })).toEqual({
      ok: false,
      refusal: { code: 'invalid_request', message: 'The paging parameters are not valid.', details: [{ path: 'cursor', message: 'belongs to another subscription; start again without it' }] },
    });
  });

  it.each([
    { case: 'of another list', query: { subscription_id: 'sub_1', cursor: encodeCursor({ list: 'lag', subscription_id: 'sub_1', position: 'p1' }) }, path: 'cursor' },
    { case: 'a bad limit', query: { subscription_id: 'sub_1', limit: '0' }, path: 'limit' },
    { case: 'no subscription_id', query: undefined, path: 'subscription_id' },
    { case: 'an empty subscription_id, before a bad limit', query: { subscription_id: '', limit: '0' }, path: 'subscription_id' },
  ])('refuses a query with $case as invalid_request on $path', ({ query, path }) => {
    const parsed = parseDeadLettersQuery(query);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.refusal.code).toBe('invalid_request');
      expect(parsed.refusal.details?.map((detail) => detail.path)).toEqual([path]);
    }
  });
});

describe('toDeadLettersCursor', () => {
  it('gives no cursor after the last page', () => {
    expect(toDeadLettersCursor('sub_1', undefined)).toBeNull();
  });
});

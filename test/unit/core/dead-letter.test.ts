import { describe, expect, it } from 'vitest';
import { stringifyJson } from '../../../lambda/core/raw-json.js';
import {
  MAX_PAYLOAD_PAGE_BYTES,
  MAX_PAYLOAD_PAGE_LIMIT,
  parseDeadLettersQuery,
  positionOf,
  toDeadLettersCursor,
  toPayloadRows,
  type StoredDeadLetter,
} from '../../../lambda/core/dead-letter.js';
import { fanOutEventId } from '../../../lambda/core/fan-out-id.js';
import { DEFAULT_PAGE_LIMIT, encodeCursor } from '../../../lambda/core/paging.js';

describe('parseDeadLettersQuery', () => {
  it('reads a first page of the subscription named', () => {
    expect(parseDeadLettersQuery({ subscription_id: 'sub_1' })).toEqual({ ok: true, value: { subscriptionId: 'sub_1', after: undefined, limit: DEFAULT_PAGE_LIMIT, withPayloads: false } });
  });

  it('reads back the position of a cursor it gave out for the same subscription', () => {
    const cursor = toDeadLettersCursor('sub_1', 'p1') ?? '';
    expect(parseDeadLettersQuery({ subscription_id: 'sub_1', cursor, limit: '5' })).toEqual({ ok: true, value: { subscriptionId: 'sub_1', after: 'p1', limit: 5, withPayloads: false } });
  });

  it('reads include=payload with its own default and ceiling of rows', () => {
    expect(parseDeadLettersQuery({ subscription_id: 'sub_1', include: 'payload' })).toEqual({ ok: true, value: { subscriptionId: 'sub_1', after: undefined, limit: MAX_PAYLOAD_PAGE_LIMIT, withPayloads: true } });
    expect(parseDeadLettersQuery({ subscription_id: 'sub_1', include: 'payload', limit: '3' })).toMatchObject({ ok: true, value: { limit: 3, withPayloads: true } });
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
    { case: 'an include other than payload', query: { subscription_id: 'sub_1', include: 'event' }, path: 'include' },
    { case: 'more rows with payloads than a page takes', query: { subscription_id: 'sub_1', include: 'payload', limit: String(MAX_PAYLOAD_PAGE_LIMIT + 1) }, path: 'limit' },
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

describe('toPayloadRows', () => {
  const letterOf = (n: number, payload: Record<string, unknown>, eventId = `evt_${n}`): StoredDeadLetter => {
    const queued = {
      version: 1 as const,
      event: { event_id: eventId, tenant_id: 't', subscription_id: 'sub_1', type: 'order.paid', payload_json: JSON.stringify(payload) },
      ordering_key: 'sub_1',
      message_group_id: 'g1',
      accepted_at: '2026-12-02T12:00:00.000Z',
      ...(eventId === `evt_${n}` ? {} : { fan_out: { event_id: `evt_${n}` } }),
    };
    return { queued, sequence: n, attempts: 3, reason: 'HTTP 500', deadLetteredAt: '2026-12-02T12:01:00.000Z', subscriptionId: 'sub_1', position: positionOf({ queued, sequence: n }), orderingKey: 'sub_1', messageGroupId: 'g1' };
  };

  it('gives each row its event’s public id, type and payload, and the store’s next position', () => {
    const letters = [letterOf(1, { order: 1 }), letterOf(2, { note: '<script>alert(1)</script>' }, fanOutEventId('evt_2', 'sub_1'))];
    const page = toPayloadRows(letters, 'after-2');
    expect(page.nextAfter).toBe('after-2');
    expect(page.rows.map(({ event_id, type, payload, sequence }) => ({ event_id, type, payload: JSON.parse(payload.text) as unknown, sequence }))).toEqual([
      { event_id: 'evt_1', type: 'order.paid', payload: { order: 1 }, sequence: 1 },
      { event_id: 'evt_2', type: 'order.paid', payload: { note: '<script>alert(1)</script>' }, sequence: 2 },
    ]);
  });

  it('counts a payload’s bytes as Lambda’s answer carries them, escaped twice: quotes count four times over', () => {
    // 10 rows of 410 KB of stringified JSON (all quotes): 4 MB of payloads, 7 MB in Lambda's answer.
    const quoted = { text: '"'.repeat(410 * 1024) };
    const page = toPayloadRows(Array.from({ length: 10 }, (_, n) => letterOf(n + 1, quoted)), undefined);
    const answerBytes = Buffer.byteLength(JSON.stringify(stringifyJson({ items: page.rows, next_cursor: 'x'.repeat(200) })));
    expect(answerBytes).toBeLessThan(6 * 1000 * 1000);
    expect(page.rows.length).toBeLessThan(10);
    expect(page.nextAfter).toBe(positionOf({ queued: letterOf(page.rows.length, quoted).queued, sequence: page.rows.length }));
  });

  it('stops before the payloads pass the page’s bytes, continuing after the last row kept, and always keeps one', () => {
    const big = 'x'.repeat(MAX_PAYLOAD_PAGE_BYTES / 2);
    const letters = [letterOf(1, { big }), letterOf(2, { big }), letterOf(3, { small: true })];
    const page = toPayloadRows(letters, undefined);
    expect(page.rows.map((row) => row.sequence)).toEqual([1]);
    expect(page.nextAfter).toBe(letters[0]?.position);
    const huge = toPayloadRows([letterOf(1, { huge: 'y'.repeat(MAX_PAYLOAD_PAGE_BYTES + 10) })], undefined);
    expect(huge.rows).toHaveLength(1);
    expect(huge.nextAfter).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { toIngestResponse } from '../../../lambda/handlers/responses.js';

const results = [{ event_id: '1', status: 'failed', message_group_id: 'g' }] as const;

describe('toIngestResponse', () => {
  it.each([
    [{ kind: 'accepted', results: [] }, { statusCode: 202, body: { results: [] } }],
    [{ kind: 'paused', retryAfterSeconds: 5 }, { statusCode: 503, headers: { 'retry-after': '5' }, body: { error: { code: 'ingest_paused' } } }],
    [{ kind: 'refused', reason: 'unknown_subscription', details: [{ path: 'subscription_id', message: 'm' }] }, { statusCode: 422, body: { error: { code: 'unknown_subscription', details: [{ path: 'subscription_id' }] } } }],
    [{ kind: 'refused', reason: 'payload_too_large', details: [{ path: 'payload', message: 'm' }] }, { statusCode: 413, body: { error: { code: 'payload_too_large' } } }],
    [{ kind: 'partly_enqueued', results, retryAfterSeconds: 1 }, { statusCode: 503, headers: { 'retry-after': '1' }, body: { error: { code: 'enqueue_failed' }, results } }],
  ] as const)('answers %o in the contract’s shape', (outcome, expected) => {
    expect(toIngestResponse(outcome)).toMatchObject(expected);
  });
});

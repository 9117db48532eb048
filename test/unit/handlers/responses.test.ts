import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ErrorCode } from '../../../lambda/core/api-error.js';
import { parseEventsRequest, readJsonBody } from '../../../lambda/core/event.js';
import { parsePageQuery } from '../../../lambda/core/paging.js';
import { checkRedrive } from '../../../lambda/core/redrive.js';
import { ERROR_STATUS_CODES, errorResponse, toIngestResponse, toRedriveRefusalResponse, type ErrorBody } from '../../../lambda/handlers/responses.js';

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

describe('errorResponse', () => {
  it.each([
    { name: 'a body over 1 MiB', parsed: readJsonBody(JSON.stringify({ pad: 'x'.repeat(1_048_576) }), false), statusCode: 413, code: 'payload_too_large' },
    { name: 'a body that is not JSON', parsed: readJsonBody('{"a":', false), statusCode: 400, code: 'invalid_json' },
    { name: 'an event that does not match the schema', parsed: parseEventsRequest({ event_id: '' }), statusCode: 400, code: 'invalid_request' },
    { name: 'a bad paging parameter', parsed: parsePageQuery({ limit: '0' }, z.never()), statusCode: 400, code: 'invalid_request' },
  ])('answers the core’s refusal of $name with $statusCode $code', ({ parsed, statusCode, code }) => {
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      const response = errorResponse(parsed.refusal);
      expect(response).toMatchObject({ statusCode, body: { error: { code, message: parsed.refusal.message } } });
      expect((response.body as ErrorBody).error.details).toEqual(parsed.refusal.details);
    }
  });

  it.each([
    ['invalid_json', 400], ['invalid_request', 400], ['not_found', 404], ['method_not_allowed', 405],
    ['no_failing_head', 409], ['head_changed', 409], ['not_paused', 409], ['pause_too_recent', 409], ['queue_not_empty', 409], ['version_conflict', 409], ['tenant_mismatch', 409],
    ['payload_too_large', 413], ['unknown_subscription', 422], ['endpoint_not_allowed', 422], ['internal_error', 500], ['enqueue_failed', 503], ['ingest_paused', 503],
  ] as const)('answers %s with %i', (code, statusCode) => {
    expect(errorResponse({ code, message: 'm' })).toEqual({ statusCode, body: { error: { code, message: 'm' } } });
  });

  it('gives every error code a status', () => {
    expect(Object.keys(ERROR_STATUS_CODES).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('answers with the status a route chooses, and leaves out empty details', () => {
    expect(errorResponse({ code: 'ingest_paused', message: 'm', details: [] }, 409)).toEqual({ statusCode: 409, body: { error: { code: 'ingest_paused', message: 'm' } } });
  });
});

describe('toRedriveRefusalResponse', () => {
  it('answers a redrive refused while paused with 409 ingest_paused, where ingest answers 503', () => {
    const refusal = checkRedrive({ isPaused: true });
    expect(refusal).toBeDefined();
    if (refusal !== undefined) {
      expect(toRedriveRefusalResponse(refusal)).toEqual({ statusCode: 409, body: { error: { code: 'ingest_paused', message: refusal.message } } });
      expect(errorResponse(refusal).statusCode).toBe(503);
    }
  });
});

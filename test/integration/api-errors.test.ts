/**
 * Every refusal of docs/api.md#errors at the local HTTP API, in the contract's error shape, with nothing
 * enqueued and no event recorded. The consumer is off, so anything enqueued would stay in the queue.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { TABLES } from '../../lambda/resources.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { BODY_CAP_BYTES } from '../../local/http-api.js';
import { call, makeEvent, uniquePrefix, type ApiAnswer } from './support/api.js';
import { useTestStack } from './support/stack-and-receiver.js';

/** A public address: allowed when private endpoints are not, and never contacted (nothing is delivered). */
const PUBLIC_ENDPOINT = 'http://93.184.216.34/hooks';

function errorOf(answer: ApiAnswer): { code: string; message: string; details?: { path: string; message: string }[] } {
  const body = answer.body as { error: { code: string; message: string; details?: { path: string; message: string }[] } };
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

describe('local stack API errors', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('errors');
  const subscription = `${prefix}-sub`;
  const tenant = 'tenant-errors';
  const stack = useTestStack({ ALLOW_PRIVATE_ENDPOINTS: 'false' }, { isConsumerEnabled: false });

  beforeAll(async () => {
    const created = await call(stack().url, 'PUT', `/v1/subscriptions/${subscription}`, { tenant_id: tenant, url: PUBLIC_ENDPOINT });
    expect(created.status).toBe(201);
  });

  /** Runs a refused request and checks that it left the queue and the Events table as they were. */
  async function expectNothingEnqueued(eventIds: readonly string[], request: () => Promise<ApiAnswer>): Promise<ApiAnswer> {
    const depthBefore = await stack().queueDepth();
    const answer = await request();
    expect(await stack().queueDepth()).toBe(depthBefore);
    for (const eventId of eventIds) expect(await stack().eventItem(eventId), `record of ${eventId}`).toBeUndefined();
    return answer;
  }

  it('answers 400 invalid_json when the body is not JSON', async () => {
    const answer = await expectNothingEnqueued([], () => call(stack().url, 'POST', '/v1/events', '{"event_id": '));
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('invalid_json');
  });

  it('answers 400 invalid_json when the body is not UTF-8 (passed to the handler base64-encoded)', async () => {
    const answer = await expectNothingEnqueued([], () => call(stack().url, 'POST', '/v1/events', new Uint8Array([0xff, 0xfe, 0x7b])));
    expect(answer.status).toBe(400);
    expect(errorOf(answer).code).toBe('invalid_json');
  });

  it('answers 400 invalid_request naming each field path when events are malformed', async () => {
    const valid = makeEvent(subscription, `${prefix}-ok`, tenant);
    const spaced = makeEvent(subscription, `${prefix}-bad id`, tenant);
    const { type: _type, ...untyped } = makeEvent(subscription, `${prefix}-untyped`, tenant);
    const extra = { ...makeEvent(subscription, `${prefix}-extra`, tenant), colour: 'red' };
    const answer = await expectNothingEnqueued([valid.event_id, spaced.event_id, untyped.event_id, extra.event_id], () =>
      call(stack().url, 'POST', '/v1/events', { events: [valid, spaced, untyped, extra] }),
    );
    expect(answer.status).toBe(400);
    const error = errorOf(answer);
    expect(error.code).toBe('invalid_request');
    expect(error.details?.map((detail) => detail.path)).toEqual(['events[1].event_id', 'events[2].type', 'events[3]']);
  });

  it('answers 400 invalid_request when a batch is empty or a single event lacks its payload', async () => {
    const empty = await expectNothingEnqueued([], () => call(stack().url, 'POST', '/v1/events', { events: [] }));
    expect(empty.status).toBe(400);
    expect(errorOf(empty).details?.map((detail) => detail.path)).toEqual(['events']);
    const { payload: _payload, ...bare } = makeEvent(subscription, `${prefix}-bare`, tenant);
    const single = await expectNothingEnqueued([bare.event_id], () => call(stack().url, 'POST', '/v1/events', bare));
    expect(single.status).toBe(400);
    expect(errorOf(single).details?.map((detail) => detail.path)).toEqual(['payload']);
  });

  it('answers 413 payload_too_large when the body exceeds 1 MiB', async () => {
    const event = makeEvent(subscription, `${prefix}-huge`, tenant);
    const body = JSON.stringify({ ...event, payload: { blob: 'x'.repeat(BODY_CAP_BYTES + 4096) } });
    const answer = await expectNothingEnqueued([event.event_id], () => call(stack().url, 'POST', '/v1/events', body));
    expect(answer.status).toBe(413);
    expect(errorOf(answer).code).toBe('payload_too_large');
  });

  it('answers 422 unknown_subscription naming the offending events, for another tenant too', async () => {
    const known = makeEvent(subscription, `${prefix}-known`, tenant);
    const unknown = makeEvent(`${prefix}-missing`, `${prefix}-unknown`, tenant);
    const foreign = makeEvent(subscription, `${prefix}-foreign`, 'another-tenant');
    const answer = await expectNothingEnqueued([known.event_id, unknown.event_id, foreign.event_id], () =>
      call(stack().url, 'POST', '/v1/events', { events: [known, unknown, foreign] }),
    );
    expect(answer.status).toBe(422);
    const error = errorOf(answer);
    expect(error.code).toBe('unknown_subscription');
    expect(error.details?.map((detail) => detail.path)).toEqual(['events[1].subscription_id', 'events[2].subscription_id']);
  });

  it('answers 422 endpoint_not_allowed for loopback and metadata endpoints when private endpoints are not allowed', async () => {
    for (const [index, url] of ['http://127.0.0.1:4000/hooks', 'http://169.254.169.254/latest', 'http://[::1]/hooks', 'http://[::a9fe:a9fe]/latest'].entries()) {
      const id = `${prefix}-private-${index}`;
      const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${id}`, { tenant_id: tenant, url });
      expect(answer.status, url).toBe(422);
      const error = errorOf(answer);
      expect(error.code).toBe('endpoint_not_allowed');
      expect(error.details?.map((detail) => detail.path)).toEqual(['url']);
      expect((await call(stack().url, 'GET', `/v1/subscriptions/${id}`)).status, `${url} not stored`).toBe(404);
    }
  });

  it('answers 400 invalid_request naming the field when a subscription is malformed, and changes nothing', async () => {
    // The item itself, secret included: GET hides the secret, so it could not show a changed one.
    const readItem = async () =>
      (await stack().clients.dynamo.send(new GetCommand({ TableName: stack().resources.subscriptionsTable, Key: { [TABLES.subscriptions.partitionKey]: subscription }, ConsistentRead: true }))).Item;
    const before = await readItem();
    expect(before).toBeDefined();
    const cases: [unknown, string][] = [
      [{ url: PUBLIC_ENDPOINT }, 'tenant_id'],
      [{ tenant_id: tenant, url: 'ftp://example.com/hooks' }, 'url'],
      [{ tenant_id: tenant, url: 'http://user:pass@93.184.216.34/hooks' }, 'url'],
      [{ tenant_id: tenant, url: 'http://user@93.184.216.34/hooks' }, 'url'],
      [{ tenant_id: tenant, url: PUBLIC_ENDPOINT, secret: 'not-a-secret' }, 'secret'],
    ];
    for (const [body, path] of cases) {
      const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${subscription}`, body);
      expect(answer.status, path).toBe(400);
      expect(errorOf(answer).details?.map((detail) => detail.path)).toEqual([path]);
    }
    const invalidJson = await call(stack().url, 'PUT', `/v1/subscriptions/${subscription}`, '{');
    expect(invalidJson.status).toBe(400);
    expect(errorOf(invalidJson).code).toBe('invalid_json');
    expect(await readItem()).toEqual(before);
    const stored = await call(stack().url, 'GET', `/v1/subscriptions/${subscription}`);
    expect(stored.body).toMatchObject({ subscription_id: subscription, tenant_id: tenant, url: PUBLIC_ENDPOINT });
    expect(stored.body).not.toHaveProperty('secret');
  });

  it('answers 404 not_found for an unknown subscription and an unknown path, and 405 for a wrong method', async () => {
    const missing = await call(stack().url, 'GET', `/v1/subscriptions/${prefix}-nobody`);
    expect(missing.status).toBe(404);
    expect(errorOf(missing).code).toBe('not_found');
    const unknownPath = await expectNothingEnqueued([], () => call(stack().url, 'POST', '/v1/event', makeEvent(subscription, `${prefix}-typo`, tenant)));
    expect(unknownPath.status).toBe(404);
    expect(errorOf(unknownPath).code).toBe('not_found');
    const wrongMethod = await call(stack().url, 'DELETE', `/v1/subscriptions/${subscription}`);
    expect(wrongMethod.status).toBe(405);
    expect(errorOf(wrongMethod).code).toBe('method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toBe('PUT, GET');
  });

  it('enqueues and records an accepted event, so the checks above can see one', async () => {
    const event = makeEvent(subscription, `${prefix}-accepted`, tenant);
    const answer = await expectNothingEnqueued([], () => call(stack().url, 'GET', '/health'));
    expect(answer.body).toEqual({ status: 'ok' });
    const depthBefore = await stack().queueDepth();
    expect((await call(stack().url, 'POST', '/v1/events', event)).status).toBe(202);
    expect(await stack().queueDepth()).toBe(depthBefore + 1);
    expect(await stack().eventItem(event.event_id)).toMatchObject({ status: 'accepted', subscription_id: subscription });
  });
});

import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../../lambda/core/enqueue-plan.js';
import { createIngestHandler } from '../../../lambda/handlers/ingest.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { apiEvent, jsonOf } from '../../support/api-event.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

function setup() {
  const store = new InMemoryDeliveryStore();
  const queue: OutgoingMessage[] = [];
  const handler = createIngestHandler({
    ports: {
      findSubscriptionTenants: async (ids) => new Map(ids.filter((id) => id === 'sub_1').map((id) => [id, 'tenant_1'] as const)),
      findKnownEventIds: store.findKnownEventIds,
      recordAccepted: store.recordAccepted,
      recordGroupIntake: async () => undefined,
      sendBatch: async (entries) => {
        queue.push(...entries);
        return new Set();
      },
      now: () => new Date('2026-12-02T12:00:00Z'),
    },
    readSettings: async () => ({ partitionCount: undefined }),
    logger: createLogger('test', 'SILENT'),
  });
  const post = (body: string, isBase64Encoded = false) => handler(apiEvent({ routeKey: 'POST /v1/events', body, isBase64Encoded }));
  return { store, queue, handler, post };
}

const event = { event_id: 'evt_1', tenant_id: 'tenant_1', subscription_id: 'sub_1', type: 'a.b', payload: {} };

describe('ingest handler', () => {
  it('answers GET /health', async () => {
    const { handler } = setup();
    const result = await handler(apiEvent({ routeKey: 'GET /health' }));
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({ status: 'ok' });
  });

  it('accepts one event with 202 and JSON', async () => {
    const { post, queue } = setup();
    const result = await post(JSON.stringify(event));
    expect(result.statusCode).toBe(202);
    expect(result.headers).toMatchObject({ 'content-type': 'application/json' });
    expect(jsonOf(result)).toMatchObject({ results: [{ event_id: 'evt_1', status: 'accepted' }] });
    expect(queue).toHaveLength(1);
  });

  it.each([
    { name: 'a body that is not JSON', body: '{"event_id":', status: 400, code: 'invalid_json' },
    { name: 'an empty body', body: '', status: 400, code: 'invalid_json' },
    { name: 'a missing field', body: JSON.stringify({ ...event, type: undefined }), status: 400, code: 'invalid_request', path: 'type' },
    { name: 'a bad field in a batch', body: JSON.stringify({ events: [event, { ...event, event_id: 'evt 2' }] }), status: 400, code: 'invalid_request', path: 'events[1].event_id' },
    { name: 'a body over 1 MiB', body: JSON.stringify({ ...event, payload: { pad: 'x'.repeat(1_048_576) } }), status: 413, code: 'payload_too_large' },
    { name: 'an unknown subscription', body: JSON.stringify({ events: [event, { ...event, event_id: 'evt_2', subscription_id: 'sub_9' }] }), status: 422, code: 'unknown_subscription', path: 'events[1].subscription_id' },
  ])('refuses $name with $status $code and enqueues and writes nothing', async ({ body, status, code, path }) => {
    const { post, queue, store } = setup();
    const result = await post(body);
    expect(result.statusCode).toBe(status);
    const json = jsonOf(result) as { error: { code: string; message: string; details?: { path: string }[] } };
    expect(json.error.code).toBe(code);
    expect(json.error.message.length).toBeGreaterThan(10);
    if (path !== undefined) expect(json.error.details?.map((d) => d.path)).toContain(path);
    expect(queue).toHaveLength(0);
    expect(store.writes).toHaveLength(0);
  });

  it('reads base64-encoded bodies as API Gateway passes them', async () => {
    const { post } = setup();
    const result = await post(Buffer.from(JSON.stringify(event)).toString('base64'), true);
    expect(result.statusCode).toBe(202);
  });

  it('answers an unknown route with 404 in the contract shape', async () => {
    const { handler } = setup();
    const result = await handler(apiEvent({ routeKey: 'DELETE /v1/events' }));
    expect(result.statusCode).toBe(404);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'not_found' } });
  });

  it('answers a fault with 500 internal_error and no detail of it', async () => {
    const handler = createIngestHandler({
      ports: {
        findSubscriptionTenants: async () => {
          throw new Error('secret internal detail');
        },
        findKnownEventIds: async () => new Set(),
        recordAccepted: async () => 'recorded',
        recordGroupIntake: async () => undefined,
        sendBatch: async () => new Set(),
        now: () => new Date(),
      },
      readSettings: async () => ({ partitionCount: undefined }),
      logger: createLogger('test', 'SILENT'),
    });
    const result = await handler(apiEvent({ routeKey: 'POST /v1/events', body: JSON.stringify(event) }));
    expect(result.statusCode).toBe(500);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'internal_error' } });
    expect(result.body).not.toContain('secret internal detail');
  });
});

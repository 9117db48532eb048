import { QueueDoesNotExist, SendMessageBatchCommand, SQSClient, SQSServiceException } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDeliveryQueue } from '../../../lambda/adapters/delivery-queue.js';
import type { OutgoingMessage } from '../../../lambda/core/enqueue-plan.js';
import { publicEventIdOf, readQueuedMessage } from '../../../lambda/core/event.js';
import { createIngestHandler } from '../../../lambda/handlers/ingest.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { apiEvent, jsonOf } from '../../support/api-event.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';
import { NO_FAN_OUTS } from '../../support/no-fan-outs.js';

function setup() {
  const store = new InMemoryDeliveryStore();
  const queue: OutgoingMessage[] = [];
  const handler = createIngestHandler({
    ports: {
      ...NO_FAN_OUTS,
      findSubscriptionRouting: async (ids) => new Map(ids.filter((id) => id === 'sub_1').map((id) => [id, { tenantId: 'tenant_1', ordering: 'subscription' }] as const)),
      recordAccepted: store.recordAccepted,
      recordGroupIntake: async () => undefined,
      sendBatch: async (entries) => {
        queue.push(...entries);
        return { refused: new Map(), sequenceNumbers: new Map() };
      },
      now: () => new Date('2026-12-02T12:00:00Z'),
      uniqueId: () => 'request',
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
        ...NO_FAN_OUTS,
        findSubscriptionRouting: async () => {
          throw new Error('secret internal detail');
        },
        recordAccepted: async () => 'recorded',
        recordGroupIntake: async () => undefined,
        sendBatch: async () => ({ refused: new Map(), sequenceNumbers: new Map() }),
        now: () => new Date(),
        uniqueId: () => 'request',
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

describe('ingest handler with SQS refusing', () => {
  const sqs = mockClient(SQSClient);
  beforeEach(() => sqs.reset());

  /** The handler on the real delivery queue adapter, its SQS client mocked to give a specific answer. */
  function setupWithQueue() {
    const store = new InMemoryDeliveryStore();
    const logger = createLogger('test', 'SILENT');
    const queue = createDeliveryQueue(new SQSClient({ region: 'us-east-1' }), 'https://sqs.us-east-1.amazonaws.com/123456789012/delivery.fifo', logger);
    const handler = createIngestHandler({
      ports: {
        ...NO_FAN_OUTS,
        findSubscriptionRouting: async (ids) => new Map(ids.filter((id) => id === 'sub_1' || id === 'sub_2').map((id) => [id, { tenantId: 'tenant_1', ordering: 'subscription' }] as const)),
        recordAccepted: store.recordAccepted,
        recordGroupIntake: async () => undefined,
        sendBatch: queue.sendBatch,
        now: () => new Date('2026-12-02T12:00:00Z'),
        uniqueId: () => 'request',
      },
      readSettings: async () => ({ partitionCount: undefined }),
      logger,
    });
    return { store, post: (body: unknown) => handler(apiEvent({ routeKey: 'POST /v1/events', body: JSON.stringify(body) })) };
  }

  /** The event ids an entry's message holds, in order: one, or a pack's. */
  function idsOf(body: string | undefined): string[] {
    const read = readQueuedMessage(body ?? '');
    if ('reason' in read) throw new Error(read.reason);
    return read.items.map((item) => ('queued' in item ? publicEventIdOf(item.queued) : item.reason));
  }

  /** SQS refuses the entry whose message holds `eventId` with `code`, and takes the rest. */
  function refuseEntry(eventId: string, code: string, isSenderFault: boolean) {
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string; MessageBody: string }[] }) => ({
      Successful: input.Entries.filter((entry) => !idsOf(entry.MessageBody).includes(eventId)).map((entry) => ({ Id: entry.Id, MessageId: `m-${entry.Id}`, MD5OfMessageBody: '' })),
      Failed: input.Entries.filter((entry) => idsOf(entry.MessageBody).includes(eventId)).map((entry) => ({ Id: entry.Id, Code: code, SenderFault: isSenderFault })),
      $metadata: { attempts: 1 },
    }));
  }

  /**
   * An event of 200 KB in the request and 600 KB in the queue, which writes each emoji as two
   * `\uXXXX` escapes (see encodeQueuedEvent): two of them do not fit one message, so that a key
   * of a request within 1 MiB needs several messages.
   */
  const wide = (eventId: string) => ({ ...event, event_id: eventId, payload: { text: '😀'.repeat(50_000) } });

  // sub_1's messages: [a1], [a2, a3], [a4]; sub_2's: [b1].
  const events = [wide('a1'), wide('a2'), { ...event, event_id: 'a3' }, wide('a4'), { ...event, event_id: 'b1', subscription_id: 'sub_2' }];

  it('answers 400 invalid_request naming each event of the message SQS refuses for its contents, enqueues nothing later of its key, and tells what was enqueued', async () => {
    const { post } = setupWithQueue();
    refuseEntry('a2', 'InvalidMessageContents', true);
    const result = await post({ events });
    expect(result.statusCode).toBe(400);
    expect(jsonOf(result)).toEqual({
      error: {
        code: 'invalid_request',
        message: expect.stringContaining('change them'),
        details: [
          { path: 'events[1].event_id', message: expect.stringContaining('event a2 is refused by the queue on every retry (SQS InvalidMessageContents)') },
          { path: 'events[2].event_id', message: expect.stringContaining('event a3 is refused by the queue on every retry (SQS InvalidMessageContents)') },
        ],
      },
      results: [
        { event_id: 'a1', status: 'accepted', message_group_id: expect.any(String) },
        { event_id: 'a2', status: 'failed', message_group_id: expect.any(String) },
        { event_id: 'a3', status: 'failed', message_group_id: expect.any(String) },
        { event_id: 'a4', status: 'not_enqueued', message_group_id: expect.any(String) },
        { event_id: 'b1', status: 'accepted', message_group_id: expect.any(String) },
      ],
    });
    const sent = sqs.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries?.map((entry) => idsOf(entry.MessageBody)) ?? []);
    expect(sent).toEqual([['a1'], ['b1'], ['a2', 'a3']]);
  });

  it.each([
    ['QueueDoesNotExist', () => new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: { httpStatusCode: 400 } })],
    ['AccessDenied', () => new SQSServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'Access to the resource is denied.' })],
  ])('answers 500 internal_error, never 503, when SQS refuses the call with %s', async (code, error) => {
    const { post, store } = setupWithQueue();
    sqs.on(SendMessageBatchCommand).rejects(error());
    const result = await post({ events });
    expect(result.statusCode).toBe(500);
    const json = jsonOf(result) as { error: { code: string; message: string; details: { path: string }[] }; results: { status: string }[] };
    expect(json.error.code).toBe('internal_error');
    expect(json.error.message).not.toContain(code);
    expect(json.error.details.map((detail) => detail.path)).toEqual(['events[0].event_id', 'events[4].event_id']);
    expect(json.results.map((r) => r.status)).toEqual(['failed', 'not_enqueued', 'not_enqueued', 'not_enqueued', 'failed']);
    expect(store.writes).toHaveLength(0);
  });

  it('answers 500 when an entry is refused for AccessDenied (a KMS key or a grant), even beside a refused event', async () => {
    const { post } = setupWithQueue();
    sqs.on(SendMessageBatchCommand).resolves({
      $metadata: { attempts: 1 },
      Successful: [],
      Failed: [
        { Id: '0', Code: 'InvalidMessageContents', SenderFault: true },
        { Id: '4', Code: 'KmsAccessDenied', SenderFault: true },
      ],
    });
    const result = await post({ events });
    expect(result.statusCode).toBe(500);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'internal_error', details: [{ path: 'events[4].event_id' }] } });
    expect(jsonOf(result)).toHaveProperty('error.details.length', 1);
  });

  it('still answers 503 enqueue_failed, retrying being safe, when SQS is throttling or failing inside', async () => {
    const { post } = setupWithQueue();
    refuseEntry('a2', 'InternalError', false);
    const entryFailure = await post({ events });
    expect(entryFailure.statusCode).toBe(503);
    expect(jsonOf(entryFailure)).toMatchObject({ error: { code: 'enqueue_failed' } });
    sqs.reset();
    sqs.on(SendMessageBatchCommand).rejects(new SQSServiceException({ name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 }, message: 'Rate exceeded' }));
    const throttled = await post({ events: [{ ...event, event_id: 'c1' }] });
    expect(throttled.statusCode).toBe(503);
  });
});

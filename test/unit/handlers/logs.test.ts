import type { SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { SERVICE_NAMES, type FunctionName } from '../../../lambda/config.js';
import { CONSUMER_METRICS } from '../../../lambda/core/consumer-metrics.js';
import { AttemptResultKind, type DeliveryPorts } from '../../../lambda/core/delivery.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { SendFailureKind, type SendBatch } from '../../../lambda/core/enqueue-plan.js';
import { LAG_METRICS } from '../../../lambda/core/lag.js';
import type { RetryPolicy } from '../../../lambda/core/retry-policy.js';
import { WebhookHeader, type WebhookRequest } from '../../../lambda/core/webhook.js';
import { createConsumerHandler } from '../../../lambda/handlers/consumer.js';
import { HTTP_LOG_CONTEXT } from '../../../lambda/handlers/http.js';
import { createIngestHandler } from '../../../lambda/handlers/ingest.js';
import { createLogger, withLambdaContext } from '../../../lambda/handlers/logger.js';
import { wiringFromEnvironment } from '../../../lambda/handlers/wiring.js';
import { RESOURCE_ENV_VARS } from '../../../lambda/resources.js';
import { apiEvent } from '../../support/api-event.js';
import { captureLogs, lambdaContext, linesSaying } from '../../support/captured-logs.js';
import { sqsRecordOf } from '../../support/sqs-record.js';
import { InMemoryDeadLetterStore, InMemoryDeliveryStore } from '../../support/in-memory-ports.js';
import { NO_FAN_OUTS } from '../../support/no-fan-outs.js';

/** In every payload: it must never reach a log line. */
const PAYLOAD_MARKER = 'payload-marker-4f9e2c71';
/** Every subscription's secret: it must never reach a log line either. */
const SECRET_BYTES = Buffer.from('the-secret-bytes-nobody-may-read');
const SECRET = `whsec_${SECRET_BYTES.toString('base64')}`;

const SUBSCRIPTION = 'sub_logs';

function sqsRecord(eventId: string, group: string, subscriptionId = SUBSCRIPTION): SQSRecord {
  const queued: QueuedEvent = {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: subscriptionId, type: 'order.updated', payload_json: JSON.stringify({ note: PAYLOAD_MARKER }) },
    ordering_key: subscriptionId,
    message_group_id: group,
    accepted_at: '2026-12-03T12:00:00.000Z',
  };
  return sqsRecordOf(queued, `msg-${eventId}`);
}

const POLICY: RetryPolicy = { maxDeliveryAttempts: 2, retryBaseSeconds: 5, retryMaxSeconds: 900, onExhausted: 'dead_letter', visibilityCeilingSeconds: 43_070 };

/** The consumer as its Lambda entry runs it, logging at DEBUG so that every line it can write is seen. */
function consumer(options: { readonly failing?: ReadonlySet<string>; readonly faulty?: ReadonlySet<string> } = {}) {
  const sent: WebhookRequest[] = [];
  const deadLetters = new InMemoryDeadLetterStore();
  const ports: DeliveryPorts = {
    store: new InMemoryDeliveryStore(),
    findTarget: async (subscriptionId) => {
      if (options.faulty?.has(subscriptionId) === true) throw new Error('DynamoDB unavailable');
      return { url: 'https://receiver.example/hooks', secret: SECRET, batchSize: 1 };
    },
    send: async (_url, request) => {
      sent.push(request);
      const eventId = request.headers[WebhookHeader.id] ?? '';
      return { kind: AttemptResultKind.response, statusCode: options.failing?.has(eventId) === true ? 503 : 200 };
    },
    deadLetters,
    countDeadLetter: async () => undefined,
    quarantine: async () => undefined,
    pause: async () => undefined,
    now: () => new Date('2026-12-03T12:00:01.000Z'),
    random: () => 0,
  };
  const logger = createLogger(SERVICE_NAMES.consumer, 'DEBUG');
  const handler = withLambdaContext(
    logger,
    createConsumerHandler({
      ports,
      policy: POLICY,
      recordTimeBudgetMs: 15_000,
      changeVisibility: async () => undefined,
      publishPauseNotice: async () => undefined,
      recordGroupProgress: async () => undefined,
      holds: { isPaused: async () => false, letGo: async () => 0, forgetHold: async () => undefined },
      publishCounts: () => undefined,
      logger,
    }),
  );
  return { handler, sent, deadLetters };
}

/** What must never be logged: the payload, the secret (whole or its key), and every signature and body sent. */
function expectNothingSecret(text: string, sent: readonly WebhookRequest[]): void {
  expect(text).not.toContain(PAYLOAD_MARKER);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(SECRET_BYTES.toString('base64'));
  for (const request of sent) {
    expect(text).not.toContain(request.headers[WebhookHeader.signature]);
    expect(text).not.toContain(request.body);
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('consumer logs', () => {
  it('names each group’s delivered events and their sequences in one line, beside the Lambda context', async () => {
    const { handler, sent } = consumer();
    const batch = { Records: [sqsRecord('evt_a1', 'g-a'), sqsRecord('evt_b1', 'g-b', 'sub_other'), sqsRecord('evt_a2', 'g-a')] };
    const { lines, text } = await captureLogs(() => handler(batch, lambdaContext('request-a')));

    const summaries = linesSaying(lines, 'events delivered');
    expect(summaries).toHaveLength(2);
    expect(summaries.find((line) => line.message_group_id === 'g-a')).toMatchObject({
      level: 'INFO',
      service: SERVICE_NAMES.consumer,
      function_request_id: 'request-a',
      delivered: 2,
      event_ids: ['evt_a1', 'evt_a2'],
      sequences: [1, 2],
      duplicates: 0,
    });
    expect(summaries.find((line) => line.message_group_id === 'g-b')).toMatchObject({ delivered: 1, event_ids: ['evt_b1'], sequences: [1] });
    expectNothingSecret(text, sent);
  });

  it('names the event, subscription, message group, sequence and attempt of a delivered record at DEBUG, beside the Lambda context', async () => {
    const { handler, sent } = consumer();
    const { lines, text } = await captureLogs(() => handler({ Records: [sqsRecord('evt_a1', 'g-a')] }, lambdaContext('request-a')));

    const [delivered] = linesSaying(lines, 'event delivered');
    expect(delivered).toMatchObject({
      level: 'DEBUG',
      service: SERVICE_NAMES.consumer,
      function_request_id: 'request-a',
      function_name: 'ordered-webhooks-function',
      cold_start: expect.any(Boolean),
      message_id: 'msg-evt_a1',
      message_group_id: 'g-a',
      event_id: 'evt_a1',
      subscription_id: SUBSCRIPTION,
      sequence: 1,
      attempt: 1,
    });
    // The line names what the receiver got: its webhook-id and webhook-sequence.
    expect(sent.map((request) => [request.headers[WebhookHeader.id], request.headers[WebhookHeader.sequence]])).toEqual([['evt_a1', '1']]);
    expectNothingSecret(text, sent);
  });

  it('names the record on its retry, dead-letter and fault lines, as the dead letter names it', async () => {
    const { handler, sent, deadLetters } = consumer({ failing: new Set(['evt_b1']), faulty: new Set(['sub_faulty']) });
    const batch = { Records: [sqsRecord('evt_b1', 'g-b'), sqsRecord('evt_c1', 'g-c', 'sub_faulty')] };
    const first = await captureLogs(() => handler(batch, lambdaContext('request-1')));
    const second = await captureLogs(() => handler({ Records: [sqsRecord('evt_b1', 'g-b')] }, lambdaContext('request-2')));

    const [retry] = linesSaying(first.lines, 'delivery failed; retrying later');
    expect(retry).toMatchObject({
      function_request_id: 'request-1',
      message_id: 'msg-evt_b1',
      message_group_id: 'g-b',
      event_id: 'evt_b1',
      subscription_id: SUBSCRIPTION,
      sequence: 1,
      attempt: 1,
      reason: 'HTTP 503',
    });
    const [fault] = linesSaying(first.lines, 'record failed with a fault; it stays queued');
    expect(fault).toMatchObject({
      level: 'ERROR',
      function_request_id: 'request-1',
      message_id: 'msg-evt_c1',
      message_group_id: 'g-c',
      event_id: 'evt_c1',
      subscription_id: 'sub_faulty',
      error: expect.objectContaining({ message: 'DynamoDB unavailable' }),
    });

    const [deadLettered] = linesSaying(second.lines, 'event dead-lettered');
    const [letter] = deadLetters.all(SUBSCRIPTION);
    expect(deadLettered).toMatchObject({
      level: 'WARN',
      function_request_id: 'request-2',
      message_id: 'msg-evt_b1',
      message_group_id: 'g-b',
      event_id: letter?.queued.event.event_id,
      subscription_id: letter?.subscriptionId,
      sequence: letter?.sequence,
      attempt: letter?.attempts,
      reason: letter?.reason,
    });
    expect(deadLettered).toMatchObject({ event_id: 'evt_b1', sequence: 1, attempt: 2 });
    expectNothingSecret(first.text + second.text, sent);
  });

  it('names each record it sends back unstarted for lack of time', async () => {
    const { handler, sent } = consumer();
    const { lines, text } = await captureLogs(() =>
      handler({ Records: [sqsRecord('evt_d1', 'g-d'), sqsRecord('evt_d2', 'g-d')] }, lambdaContext('request-d', 1_000)),
    );
    const unstarted = linesSaying(lines, 'too little time left to start this record; it goes back to the queue at once');
    expect(unstarted.map((line) => [line.message_id, line.event_id, line.subscription_id, line.message_group_id])).toEqual([
      ['msg-evt_d1', 'evt_d1', SUBSCRIPTION, 'g-d'],
      ['msg-evt_d2', 'evt_d2', SUBSCRIPTION, 'g-d'],
    ]);
    expectNothingSecret(text, sent);
  });
});

describe('withLambdaContext', () => {
  it('marks only the first invocation as a cold start, and keeps no key of one invocation on the next', async () => {
    // As Lambda sets it for an on-demand execution environment, before the function's code loads.
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    const logger = createLogger('test', 'INFO');
    const handler = withLambdaContext(logger, async (event: { readonly isTagged: boolean }) => {
      if (event.isTagged) logger.appendKeys({ tag: 'first invocation only' });
      logger.info('handled');
    });

    const { lines } = await captureLogs(async () => {
      await handler({ isTagged: true }, lambdaContext('request-1'));
      await handler({ isTagged: false }, lambdaContext('request-2'));
    });

    expect(lines.map((line) => [line.function_request_id, line.cold_start, line.tag])).toEqual([
      ['request-1', true, 'first invocation only'],
      ['request-2', false, undefined],
    ]);
  });

  it('drops the invocation’s keys when the handler throws', async () => {
    const logger = createLogger('test', 'INFO');
    const handler = withLambdaContext(logger, async (event: { readonly shouldThrow: boolean }) => {
      logger.info('handled');
      if (event.shouldThrow) throw new Error('fault');
    }, { correlationIdOf: () => 'correlation-1' });

    const { lines } = await captureLogs(async () => {
      await expect(handler({ shouldThrow: true }, lambdaContext('request-1'))).rejects.toThrow('fault');
      logger.info('between invocations');
    });

    expect(lines.map((line) => [line.message, line.correlation_id])).toEqual([
      ['handled', 'correlation-1'],
      ['between invocations', undefined],
    ]);
  });
});

describe('ingest logs', () => {
  function ingest(sendBatch: SendBatch = async () => ({ refused: new Map(), sequenceNumbers: new Map() })) {
    const store = new InMemoryDeliveryStore();
    const logger = createLogger(SERVICE_NAMES.ingest, 'DEBUG');
    return withLambdaContext(
      logger,
      createIngestHandler({
        ports: {
          ...NO_FAN_OUTS,
          findSubscriptionRouting: async (ids) => new Map(ids.filter((id) => id === SUBSCRIPTION).map((id) => [id, { tenantId: 'tenant_1', ordering: 'subscription' }] as const)),
          recordAccepted: store.recordAccepted,
          recordGroupIntake: async () => undefined,
          sendBatch,
          now: () => new Date('2026-12-03T12:00:00Z'),
          uniqueId: () => 'request',
        },
        readSettings: async () => ({ partitionCount: undefined }),
        logger,
      }),
      HTTP_LOG_CONTEXT,
    );
  }
  const eventOf = (eventId: string, subscriptionId = SUBSCRIPTION) => ({
    event_id: eventId,
    tenant_id: 'tenant_1',
    subscription_id: subscriptionId,
    type: 'order.updated',
    payload: { note: PAYLOAD_MARKER },
  });
  const post = (body: unknown) => apiEvent({ routeKey: 'POST /v1/events', body: JSON.stringify(body) });

  it('names the events of a request it refuses, and not their payloads', async () => {
    const handler = ingest();
    const { result, lines, text } = await captureLogs(() => handler(post({ events: [eventOf('evt_1'), eventOf('evt_2', 'sub_unknown')] }), lambdaContext('request-i')));
    expect(result.statusCode).toBe(422);
    expect(linesSaying(lines, 'events refused')).toEqual([
      expect.objectContaining({ function_request_id: 'request-i', correlation_id: 'request-1', code: 'unknown_subscription', event_ids: ['evt_1', 'evt_2'] }),
    ]);
    expect(text).not.toContain(PAYLOAD_MARKER);
  });

  it('names each event it could not enqueue with its subscription and message group', async () => {
    // SQS refuses the first entry of every batch.
    const handler = ingest(async () => ({ refused: new Map([[0, { kind: SendFailureKind.transient, code: 'ServiceUnavailable' }]]), sequenceNumbers: new Map() }));
    const { result, lines, text } = await captureLogs(() => handler(post({ events: [eventOf('evt_1'), eventOf('evt_2')] }), lambdaContext('request-e')));
    expect(result.statusCode).toBe(503);
    const body = z.object({ results: z.array(z.object({ event_id: z.string(), status: z.string(), message_group_id: z.string() })) }).parse(JSON.parse(result.body ?? '{}'));
    expect(linesSaying(lines, 'event not enqueued').map((line) => [line.event_id, line.subscription_id, line.message_group_id, line.status])).toEqual(
      body.results.filter((r) => r.status !== 'accepted').map((r) => [r.event_id, SUBSCRIPTION, r.message_group_id, r.status]),
    );
    expect(linesSaying(lines, 'event not enqueued').length).toBeGreaterThan(0);
    expect(text).not.toContain(PAYLOAD_MARKER);
  });

  it('logs the code of a body it cannot read, never the body', async () => {
    const handler = ingest();
    const unreadable = apiEvent({ routeKey: 'POST /v1/events', body: `{"note": "${PAYLOAD_MARKER}"` });
    const { result, lines, text } = await captureLogs(() => handler(unreadable, lambdaContext('request-j')));
    expect(result.statusCode).toBe(400);
    expect(linesSaying(lines, 'events refused')).toEqual([expect.objectContaining({ code: 'invalid_json', function_request_id: 'request-j' })]);
    expect(text).not.toContain(PAYLOAD_MARKER);
  });
});

describe('service names', () => {
  it('names each function’s logger after its entry in SERVICE_NAMES, the consumer and lag job as their metrics', async () => {
    const names = Object.keys(SERVICE_NAMES) as FunctionName[];
    const { lines } = await captureLogs(async () => {
      for (const name of names) wiringFromEnvironment(name, []).logger.info('wired');
    });
    expect(lines.map((line) => line.service)).toEqual(names.map((name) => SERVICE_NAMES[name]));
    expect(SERVICE_NAMES.consumer).toBe(CONSUMER_METRICS.service);
    expect(SERVICE_NAMES.lagMetrics).toBe(LAG_METRICS.service);
  });

  it('gives the ingest entry its service name and Lambda’s context on every line, a cold start once', async () => {
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    vi.stubEnv('AWS_REGION', 'us-east-1');
    for (const variable of Object.values(RESOURCE_ENV_VARS)) vi.stubEnv(variable, `test-${variable.toLowerCase()}`);
    // A fresh module: its entry is wired, and its logger created, on this test's first invocation.
    vi.resetModules();
    const { handler } = await import('../../../lambda/handlers/ingest.js');
    // Refused before any call to AWS: the entry's wiring and logging are all that runs.
    const unreadable = (apiRequestId: string) => {
      const event = apiEvent({ routeKey: 'POST /v1/events', body: `{"note": "${PAYLOAD_MARKER}"` });
      return { ...event, requestContext: { ...event.requestContext, requestId: apiRequestId } };
    };

    const { lines, text } = await captureLogs(async () => {
      await handler(unreadable('api-request-1'), lambdaContext('lambda-request-1'));
      await handler(unreadable('api-request-2'), lambdaContext('lambda-request-2'));
    });

    expect(lines.map((line) => [line.message, line.service, line.function_request_id, line.cold_start, line.correlation_id])).toEqual([
      ['events refused', SERVICE_NAMES.ingest, 'lambda-request-1', true, 'api-request-1'],
      ['events refused', SERVICE_NAMES.ingest, 'lambda-request-2', false, 'api-request-2'],
    ]);
    expect(text).not.toContain(PAYLOAD_MARKER);
  });
});

import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LAG_METRICS, type GroupLag } from '../../../lambda/core/lag.js';
import { createLagMetricsHandler, publishWithPowertools } from '../../../lambda/handlers/lag-metrics.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { createOperationsHandler } from '../../../lambda/handlers/operations.js';
import { apiEvent, jsonOf } from '../../support/api-event.js';

const now = new Date('2026-12-02T12:10:00.000Z');
const stuck: GroupLag = {
  messageGroupId: 'g1',
  depth: 2,
  oldestAcceptedAt: '2026-12-02T12:00:00.000Z',
  headAttempts: 3,
  lastError: 'HTTP 500',
  headFailingSince: '2026-12-02T12:00:05.000Z',
  deadLettered: 0,
  keysAffected: 1,
};

function setup() {
  const asked: string[] = [];
  const handler = createOperationsHandler({
    listActiveGroups: async () => [stuck],
    listDeadLetters: async (subscriptionId) => {
      asked.push(subscriptionId);
      return [];
    },
    now: () => now,
    logger: createLogger('test', 'SILENT'),
  });
  return { handler, asked };
}

describe('operations handler', () => {
  it('answers GET /v1/lag with the lag view', async () => {
    const { handler } = setup();
    const result = await handler(apiEvent({ routeKey: 'GET /v1/lag' }));
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({
      groups: [{ message_group_id: 'g1', depth: 2, oldest_wait_seconds: 600, keys_affected: 1, head_attempts: 3, last_error: 'HTTP 500', dead_lettered: 0 }],
    });
  });

  it('answers GET /v1/dead-letters for the subscription asked', async () => {
    const { handler, asked } = setup();
    const event = { ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_1' } };
    const result = await handler(event);
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({ items: [] });
    expect(asked).toEqual(['sub_1']);
  });

  it.each([{ query: undefined }, { query: { subscription_id: '' } }, { query: { subscription_id: 's'.repeat(129) } }])(
    'refuses dead letters without a valid subscription_id ($query)',
    async ({ query }) => {
      const { handler, asked } = setup();
      const event = { ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), ...(query === undefined ? {} : { queryStringParameters: query }) };
      const result = await handler(event);
      expect(result.statusCode).toBe(400);
      expect(jsonOf(result)).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'subscription_id' }] } });
      expect(asked).toEqual([]);
    },
  );
});

describe('lag job', () => {
  afterEach(() => vi.restoreAllMocks());

  it('publishes the summary of the active groups', async () => {
    const published: unknown[] = [];
    const handler = createLagMetricsHandler({
      listActiveGroups: async () => [stuck, { ...stuck, messageGroupId: 'g2', depth: 5, oldestAcceptedAt: '2026-12-02T12:09:00.000Z', headFailingSince: undefined }],
      publish: (summary) => published.push(summary),
      stallThresholdSeconds: 300,
      now: () => now,
      logger: createLogger('test', 'SILENT'),
    });
    expect(await handler()).toEqual({ maxOldestWaitSeconds: 600, stalledGroups: 1, backlog: 7 });
    expect(published).toEqual([{ maxOldestWaitSeconds: 600, stalledGroups: 1, backlog: 7 }]);
  });

  it('writes one EMF record in the namespace and dimension the alarms watch', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    publishWithPowertools(new Metrics({ namespace: LAG_METRICS.namespace, serviceName: LAG_METRICS.service }))({ maxOldestWaitSeconds: 42, stalledGroups: 2, backlog: 9 });
    vi.restoreAllMocks();
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    const record = records[0] as { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } } & Record<string, unknown>;
    const [directive] = record._aws.CloudWatchMetrics;
    expect(directive?.Namespace).toBe('OrderedWebhooks');
    expect(directive?.Dimensions).toEqual([['service']]);
    expect(directive?.Metrics).toEqual([
      { Name: 'MaxOldestWaitSeconds', Unit: 'Seconds' },
      { Name: 'StalledGroups', Unit: 'Count' },
      { Name: 'Backlog', Unit: 'Count' },
    ]);
    expect(record).toMatchObject({ service: 'lag', MaxOldestWaitSeconds: 42, StalledGroups: 2, Backlog: 9 });
  });
});

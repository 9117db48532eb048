import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeadLetterRow, StoredDeadLetter } from '../../../lambda/core/dead-letter.js';
import { FALLING_BEHIND_MESSAGE, IDLE_GROUP_MINUTES, LAG_METRICS, NEAR_RETENTION_MESSAGE, type GroupLag } from '../../../lambda/core/lag.js';
import { planBucketUpdate, RateCounter } from '../../../lambda/core/group-rates.js';
import { createLagMetricsHandler, publishWithPowertools } from '../../../lambda/handlers/lag-metrics.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { PAUSE_GRACE_SECONDS, type PendingWork, type RoutingSettings } from '../../../lambda/core/routing-settings.js';
import { createOperationsHandler } from '../../../lambda/handlers/operations.js';
import { apiEvent, jsonOf } from '../../support/api-event.js';
import { captureLogs, linesSaying } from '../../support/captured-logs.js';

const now = new Date('2026-12-02T12:10:00.000Z');
const stuck: GroupLag = {
  messageGroupId: 'g1',
  depth: 2,
  oldestAcceptedAt: '2026-12-02T12:00:00.000Z',
  headAttempts: 3,
  lastError: 'HTTP 500',
  headFailingSince: '2026-12-02T12:00:05.000Z',
  headEventId: 'evt_1',
  headOrderingKey: 'sub_1',
  orderingKey: 'sub_1',
  deadLettered: 0,
  keysAffected: 1,
  rateBuckets: {},
};

const idle: GroupLag = { ...stuck, messageGroupId: 'g-idle', depth: 0, headAttempts: undefined, lastError: undefined, headFailingSince: undefined, headEventId: undefined, headOrderingKey: undefined };
const letter: DeadLetterRow = {
  event_id: 'e1',
  subscription_id: 'sub_1',
  message_group_id: 'g1',
  sequence: 2,
  attempts: 5,
  reason: 'HTTP 500',
  dead_lettered_at: '2026-12-02T12:05:00.000Z',
};

const storedQueued = {
  version: 1 as const,
  event: { event_id: 'e1', tenant_id: 't', subscription_id: 'sub_1', type: 'order.paid', payload_json: JSON.stringify({ note: '<b>bold</b>' }) },
  ordering_key: 'sub_1',
  message_group_id: 'g1',
  accepted_at: '2026-12-02T12:00:00.000Z',
};
const storedLetter: StoredDeadLetter = {
  queued: storedQueued,
  sequence: 2,
  attempts: 5,
  reason: 'HTTP 500',
  deadLetteredAt: '2026-12-02T12:05:00.000Z',
  subscriptionId: 'sub_1',
  position: 'p1',
  orderingKey: 'sub_1',
  messageGroupId: 'g1',
};

function setup(
  pending: PendingWork = { queued: 0, inFlight: 0, delayed: 0, groupsWithPending: 0 },
  activeGroups: readonly GroupLag[] = [stuck],
  logger = createLogger('test', 'SILENT'),
) {
  const asked: string[] = [];
  const skips: string[] = [];
  const replays: string[] = [];
  const metricsWindows: string[] = [];
  let routing: RoutingSettings = { version: 0, partitionCount: undefined, isPaused: false, pausedAt: undefined };
  const handler = createOperationsHandler({
    listActiveGroups: async () => [...activeGroups],
    getGroup: async (id) => {
      // As DynamoDB: a key past 2,048 bytes is a validation error, not a miss.
      if (id.length > 2048) throw new Error('ValidationException: key too long');
      return id === 'g1' ? stuck : id === 'g-idle' ? idle : undefined;
    },
    listDeadLetters: async ({ subscriptionId, after, limit }) => {
      asked.push(`${subscriptionId} ${after ?? '-'} ${limit}`);
      return after === undefined ? { rows: [letter], nextAfter: 'p1' } : { rows: [], nextAfter: undefined };
    },
    readDeadLetters: async ({ subscriptionId, after, limit }) => {
      asked.push(`read ${subscriptionId} ${after ?? '-'} ${limit}`);
      return { letters: [storedLetter], nextAfter: undefined };
    },
    // sub_changing's ordering change was begun a minute before now.
    findSubscription: async (subscriptionId) =>
      subscriptionId === 'sub_1' ? { orderingChange: undefined } : subscriptionId === 'sub_changing' ? { orderingChange: { ordering: 'resource', startedAt: new Date(now.getTime() - 60_000).toISOString() } } : undefined,
    requestSkip: async ({ eventId }) => {
      skips.push(eventId);
      return true;
    },
    redrive: async () => ({ redriven: [{ event_id: 'e1', sequence: 2 }], remaining: 0, isDone: true, refused: [] }),
    importBackstop: async () => ({ imported: [{ event_id: 'e9', subscription_id: 'sub_1', sequence: 4 }], unreadable: 1, isDone: true }),
    routing: {
      get: async () => routing,
      setPaused: async (isPaused, at) => (routing = { ...routing, isPaused, pausedAt: isPaused ? at : undefined }),
      switchRouting: async ({ expectedVersion, partitionCount }) => {
        if (expectedVersion !== routing.version) return false;
        routing = { ...routing, version: routing.version + 1, partitionCount };
        return true;
      },
      pendingWork: async () => pending,
    },
    replay: async (subscriptionId, window) => {
      replays.push(`${subscriptionId} ${window.since} ${window.until} ${String(window.isUntilGiven)}`);
      const state = { since: window.since, until: window.until, startedAt: now.toISOString(), replayed: 3, deadLettered: 1, notDelivered: 2, reached: window.until };
      if (subscriptionId === 'sub_replaying') return { kind: 'other_window', state: { ...state, since: '2026-12-02T11:00:00.000Z' } };
      if (subscriptionId === 'sub_refused') return { kind: 'stepped', state, isDone: false, refused: [{ event_id: 'e7', code: 'InvalidParameterValue' }] };
      return subscriptionId === 'sub_1' ? { kind: 'stepped', state, isDone: true, refused: [] } : { kind: 'not_found' };
    },
    cancelReplay: async (subscriptionId, at) => {
      if (subscriptionId === 'sub_replaying') return { isCancelled: true, state: { since: '2026-12-02T11:00:00.000Z', until: '2026-12-02T12:00:00.000Z', startedAt: '2026-12-02T12:01:00.000Z', replayed: 40, deadLettered: 0, notDelivered: 0, reached: '2026-12-02T11:30:00.000Z', cancelledAt: at } };
      return subscriptionId === 'sub_1' ? { isCancelled: false } : undefined;
    },
    // sub_ahead's newest event was accepted by an ingest clock 40 s ahead of this function's.
    newestAcceptedAt: async (subscriptionId) => (subscriptionId === 'sub_ahead' ? '2026-12-02T12:10:40.000Z' : subscriptionId === 'sub_1' ? '2026-12-02T12:09:00.000Z' : undefined),
    eventRetentionDays: 7,
    pauseGraceSeconds: PAUSE_GRACE_SECONDS,
    now: () => now,
    fallingBehindWaitSeconds: 120,
    metricsSource: {
      readConsumerSeries: async ({ since, until }) => {
        metricsWindows.push(`${since.toISOString()} ${until.toISOString()}`);
        return { delivered: [{ at: new Date('2026-12-02T12:09:00.000Z'), sum: 4 }], failedAttempts: [{ at: now, sum: 2 }], deadLettered: [], source: 'cloudwatch' };
      },
    },
    lagThresholds: { stallThresholdSeconds: 300, fallingBehindWaitSeconds: 120, heldAgeWarnSeconds: 86_400, retentionSeconds: 1_209_600 },
    logger,
  });
  const pause = (at: string) => (routing = { ...routing, isPaused: true, pausedAt: at });
  return { handler, asked, skips, replays, metricsWindows, pause, routingNow: () => routing };
}

/** `GET /v1/lag` with query parameters, as API Gateway passes them. */
const lagEvent = (query?: Record<string, string>) => ({ ...apiEvent({ routeKey: 'GET /v1/lag' }), ...(query === undefined ? {} : { queryStringParameters: query }) });

const post = (routeKey: string, body?: unknown, pathParameters?: Record<string, string>) =>
  apiEvent({ routeKey, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(pathParameters === undefined ? {} : { pathParameters }) });

describe('operations handler', () => {
  it('answers GET /v1/metrics with the source’s minutes, zero-filled, and the lag figures of the active groups now', async () => {
    const { handler, metricsWindows } = setup();
    const result = await handler({ ...apiEvent({ routeKey: 'GET /v1/metrics' }), queryStringParameters: { minutes: '3' } });
    expect(result.statusCode).toBe(200);
    // The window: the last 3 whole minutes, the current one (12:10) included.
    expect(metricsWindows).toEqual(['2026-12-02T12:08:00.000Z 2026-12-02T12:11:00.000Z']);
    expect(jsonOf(result)).toEqual({
      minutes: 3,
      period_seconds: 60,
      points: [
        { at: '2026-12-02T12:08:00.000Z', delivered: 0, failed_attempts: 0, dead_lettered: 0 },
        { at: '2026-12-02T12:09:00.000Z', delivered: 4, failed_attempts: 0, dead_lettered: 0 },
        { at: '2026-12-02T12:10:00.000Z', delivered: 0, failed_attempts: 2, dead_lettered: 0 },
      ],
      // The stuck group's head has failed since 12:00:05, longer than the 300 s threshold.
      stalled_groups: 1,
      max_oldest_wait_seconds: 600,
      backlog: 2,
      held_groups: 0,
      falling_behind_keys: 0,
      source: 'cloudwatch',
    });
  });

  it.each(['0', '181', 'abc', '1.5', '-3', ''])('refuses GET /v1/metrics?minutes=%s with invalid_request naming minutes, and reads nothing', async (minutes) => {
    const { handler, metricsWindows } = setup();
    const result = await handler({ ...apiEvent({ routeKey: 'GET /v1/metrics' }), queryStringParameters: { minutes } });
    expect(result.statusCode).toBe(400);
    expect(jsonOf(result)).toEqual({ error: { code: 'invalid_request', message: expect.any(String), details: [{ path: 'minutes', message: 'must be an integer from 1 to 180' }] } });
    expect(metricsWindows).toEqual([]);
  });

  it('answers GET /v1/lag with the lag view, on one page when it fits', async () => {
    const { handler } = setup();
    const result = await handler(lagEvent());
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({
      groups: [{ message_group_id: 'g1', depth: 2, oldest_wait_seconds: 600, keys_affected: 1, head_attempts: 3, last_error: 'HTTP 500', dead_lettered: 0, ordering_key: 'sub_1', accepted_per_minute: 0, delivered_per_minute: 0, is_falling_behind: false, is_paused: false, held_subscription_id: null, paused_at: null, pause_reason: null, subscription_id: 'sub_1', head_event_id: 'evt_1', head_failing_since: '2026-12-02T12:00:05.000Z', last_delivered_at: null }],
      next_cursor: null,
    });
  });

  it('answers GET /v1/groups/{message_group_id} with the group’s row, drained or not, and 404 for a group never seen', async () => {
    const { handler } = setup(undefined, [stuck, idle]);
    const groupEvent = (id: string) => apiEvent({ routeKey: 'GET /v1/groups/{message_group_id}', pathParameters: { message_group_id: id } });
    const failing = await handler(groupEvent('g1'));
    expect(failing.statusCode).toBe(200);
    expect(jsonOf(failing)).toEqual({ group: expect.objectContaining({ message_group_id: 'g1', depth: 2, head_attempts: 3, subscription_id: 'sub_1', head_event_id: 'evt_1' }) });
    expect(jsonOf(await handler(groupEvent('g-idle')))).toEqual({ group: expect.objectContaining({ message_group_id: 'g-idle', depth: 0, head_event_id: null, head_failing_since: null }) });
    const unknown = await handler(groupEvent('g-never'));
    expect(unknown.statusCode).toBe(404);
    expect(jsonOf(unknown)).toEqual({ error: { code: 'not_found', message: 'No message group g-never.' } });
    // Longer than SQS takes: no group, and DynamoDB (which refuses keys past 2,048 bytes) is not asked.
    for (const routeKey of ['GET /v1/groups/{message_group_id}', 'POST /v1/groups/{message_group_id}/skip']) {
      const tooLong = await handler(apiEvent({ routeKey, pathParameters: { message_group_id: 'g'.repeat(3000) } }));
      expect(tooLong.statusCode).toBe(404);
    }
  });

  it('pages GET /v1/lag by limit and cursor, worst first', async () => {
    const waiting = (n: number): GroupLag => ({ ...stuck, messageGroupId: `g-${n}`, oldestAcceptedAt: `2026-12-02T12:0${n}:00.000Z` });
    const { handler } = setup(undefined, [waiting(3), waiting(1), waiting(2)]);
    const pageOf = (result: { body?: string }) => jsonOf(result) as { groups: { message_group_id: string }[]; next_cursor: string | null };

    const first = pageOf(await handler(lagEvent({ limit: '2' })));
    expect(first.groups.map((row) => row.message_group_id)).toEqual(['g-1', 'g-2']);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = pageOf(await handler(lagEvent({ limit: '2', cursor: first.next_cursor ?? '' })));
    expect(second).toEqual({ groups: [expect.objectContaining({ message_group_id: 'g-3' })], next_cursor: null });
  });

  it('gives at most 100 rows and a cursor when no limit is asked for', async () => {
    const many = Array.from({ length: 101 }, (_, n): GroupLag => ({ ...stuck, messageGroupId: `g-${String(n).padStart(3, '0')}` }));
    const { handler } = setup(undefined, many);
    const page = jsonOf(await handler(lagEvent())) as { groups: unknown[]; next_cursor: string | null };
    expect(page.groups).toHaveLength(100);
    expect(page.next_cursor).toEqual(expect.any(String));
  });

  it.each<{ query: Record<string, string>; paths: string[] }>([
    { query: { limit: '0' }, paths: ['limit'] },
    { query: { limit: '1001' }, paths: ['limit'] },
    { query: { limit: 'all' }, paths: ['limit'] },
    { query: { cursor: 'not-a-cursor' }, paths: ['cursor'] },
    { query: { cursor: Buffer.from('{"list":"lag"}').toString('base64url') }, paths: ['cursor'] },
    { query: { limit: '-5', cursor: '%%%' }, paths: ['limit', 'cursor'] },
  ])('refuses GET /v1/lag with $query with 400 invalid_request', async ({ query, paths }) => {
    const { handler } = setup();
    const result = await handler(lagEvent(query));
    expect(result.statusCode).toBe(400);
    const body = jsonOf(result) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details.map((detail) => detail.path)).toEqual(paths);
  });

  it('answers GET /v1/dead-letters page by page for the subscription asked', async () => {
    const { handler, asked } = setup();
    const first = await handler({ ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_1' } });
    expect(first.statusCode).toBe(200);
    const { next_cursor: cursor, ...body } = jsonOf(first) as { next_cursor: string; items: unknown[] };
    expect(body).toEqual({ items: [letter] });
    expect(typeof cursor).toBe('string');
    const second = await handler({ ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_1', cursor, limit: '5' } });
    expect(jsonOf(second)).toEqual({ items: [], next_cursor: null });
    expect(asked).toEqual(['sub_1 - 100', 'sub_1 p1 5']);
  });

  it('answers GET /v1/dead-letters with each event’s type and payload when include=payload asks, reading the events only then', async () => {
    const { handler, asked } = setup();
    const result = await handler({ ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_1', include: 'payload' } });
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({ items: [{ ...letter, type: 'order.paid', payload: { note: '<b>bold</b>' } }], next_cursor: null });
    expect(asked).toEqual(['read sub_1 - 10']);
  });

  it('refuses a dead-letters cursor of another subscription', async () => {
    const { handler } = setup();
    const first = await handler({ ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_1' } });
    const { next_cursor: cursor } = jsonOf(first) as { next_cursor: string };
    const other = await handler({ ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_2', cursor } });
    expect(other.statusCode).toBe(400);
    expect(jsonOf(other)).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'cursor' }] } });
  });

  it.each([{ limit: '0' }, { limit: '1001' }, { limit: 'ten' }])('refuses dead letters with the page size $limit', async ({ limit }) => {
    const { handler, asked } = setup();
    const result = await handler({ ...apiEvent({ routeKey: 'GET /v1/dead-letters' }), queryStringParameters: { subscription_id: 'sub_1', limit } });
    expect(result.statusCode).toBe(400);
    expect(jsonOf(result)).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'limit' }] } });
    expect(asked).toEqual([]);
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

describe('operations handler: operator actions', () => {
  it('redrives a subscription’s dead letters step by step', async () => {
    const { handler } = setup();
    const result = await handler(post('POST /v1/dead-letters/redrive', { subscription_id: 'sub_1' }));
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({ subscription_id: 'sub_1', redriven: [{ event_id: 'e1', sequence: 2 }], remaining: 0, is_done: true });
  });

  it('imports the backstop queue step by step', async () => {
    const { handler } = setup();
    const result = await handler(post('POST /v1/dead-letters/import'));
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({ imported: [{ event_id: 'e9', subscription_id: 'sub_1', sequence: 4 }], unreadable: 1, is_done: true });
  });

  it('answers 404 to a redrive of an unknown subscription and a skip in an unknown group', async () => {
    const { handler, skips } = setup();
    const redrive = await handler(post('POST /v1/dead-letters/redrive', { subscription_id: 'sub_unknown' }));
    expect(redrive.statusCode).toBe(404);
    expect(jsonOf(redrive)).toMatchObject({ error: { code: 'not_found' } });
    const skip = await handler(post('POST /v1/groups/{message_group_id}/skip', { event_id: 'evt_1' }, { message_group_id: 'g-unknown' }));
    expect(skip.statusCode).toBe(404);
    expect(jsonOf(skip)).toMatchObject({ error: { code: 'not_found' } });
    expect(skips).toEqual([]);
  });

  it.each([{ body: {} }, { body: { subscription_id: '' } }, { body: { subscription_id: 's', extra: 1 } }])('refuses a redrive of $body with 400', async ({ body }) => {
    const { handler } = setup();
    expect((await handler(post('POST /v1/dead-letters/redrive', body))).statusCode).toBe(400);
  });

  it('refuses a redrive with 409 ingest_paused while ingest is paused, and redrives nothing', async () => {
    const { handler, pause } = setup();
    pause('2026-12-02T12:00:00.000Z');
    const result = await handler(post('POST /v1/dead-letters/redrive', { subscription_id: 'sub_1' }));
    expect(result.statusCode).toBe(409);
    expect(jsonOf(result)).toEqual({ error: { code: 'ingest_paused', message: 'Ingest is paused for a routing switch; redrive after it resumes.' } });
  });

  it('refuses a redrive or a replay with 409 ingest_paused while the subscription is changing its ordering', async () => {
    const { handler, replays } = setup();
    const redrive = await handler(post('POST /v1/dead-letters/redrive', { subscription_id: 'sub_changing' }));
    expect(redrive.statusCode).toBe(409);
    expect(jsonOf(redrive)).toMatchObject({ error: { code: 'ingest_paused', message: expect.stringContaining('changing its ordering') } });
    const replayed = await handler(post('POST /v1/subscriptions/{subscription_id}/replay', { since: '2026-12-02T12:00:00Z' }, { subscription_id: 'sub_changing' }));
    expect(replayed.statusCode).toBe(409);
    expect(jsonOf(replayed)).toMatchObject({ error: { code: 'ingest_paused', message: expect.stringContaining('replay after the change') } });
    expect(replays).toEqual([]);
  });

  it('skips a group’s failing head, and only the head the operator saw', async () => {
    const { handler, skips } = setup();
    const skipped = await handler(post('POST /v1/groups/{message_group_id}/skip', { event_id: 'evt_1' }, { message_group_id: 'g1' }));
    expect(skipped.statusCode).toBe(202);
    expect(jsonOf(skipped)).toEqual({ message_group_id: 'g1', event_id: 'evt_1', status: 'skip_requested' });
    const other = await handler(post('POST /v1/groups/{message_group_id}/skip', { event_id: 'evt_9' }, { message_group_id: 'g1' }));
    expect(other.statusCode).toBe(409);
    expect(jsonOf(other)).toMatchObject({ error: { code: 'head_changed' } });
    const idle = await handler(post('POST /v1/groups/{message_group_id}/skip', undefined, { message_group_id: 'g-idle' }));
    expect(jsonOf(idle)).toMatchObject({ error: { code: 'no_failing_head' } });
    expect(skips).toEqual(['evt_1']);
  });

  it('pauses, refuses to switch too early or while work is pending, switches, and resumes', async () => {
    const busy = setup({ queued: 1, inFlight: 0, delayed: 0, groupsWithPending: 1 });
    expect(jsonOf(await busy.handler(post('PUT /v1/routing', { partition_count: 16, expected_version: 0 })))).toMatchObject({ error: { code: 'not_paused' } });
    expect((await busy.handler(post('POST /v1/routing/pause'))).statusCode).toBe(200);
    expect(jsonOf(await busy.handler(post('PUT /v1/routing', { partition_count: 16, expected_version: 0 })))).toMatchObject({ error: { code: 'pause_too_recent' } });
    busy.pause('2026-12-02T12:00:00.000Z');
    expect(jsonOf(await busy.handler(post('PUT /v1/routing', { partition_count: 16, expected_version: 0 })))).toMatchObject({ error: { code: 'queue_not_empty' } });
    expect(busy.routingNow().version).toBe(0);

    const idle = setup();
    idle.pause('2026-12-02T12:00:00.000Z');
    expect(jsonOf(await idle.handler(post('PUT /v1/routing', { partition_count: 16, expected_version: 3 })))).toMatchObject({ error: { code: 'version_conflict' } });
    const switched = await idle.handler(post('PUT /v1/routing', { partition_count: 16, expected_version: 0 }));
    expect(switched.statusCode).toBe(200);
    expect(jsonOf(switched)).toMatchObject({ version: 1, partition_count: 16, is_paused: true, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } });
    expect(jsonOf(await idle.handler(post('POST /v1/routing/resume')))).toMatchObject({ version: 1, partition_count: 16, is_paused: false, paused_at: null });
  });
});

describe('operations handler: logs', () => {
  it('names the subscription, event and sequence of each event redriven or imported, and the group and event of a skip', async () => {
    const { handler } = setup(undefined, undefined, createLogger('operations', 'INFO'));
    const { lines } = await captureLogs(async () => {
      await handler(post('POST /v1/dead-letters/redrive', { subscription_id: 'sub_1' }));
      await handler(post('POST /v1/dead-letters/import'));
      await handler(post('POST /v1/groups/{message_group_id}/skip', { event_id: 'evt_1' }, { message_group_id: 'g1' }));
    });
    expect(linesSaying(lines, 'dead letter redriven')).toEqual([expect.objectContaining({ subscription_id: 'sub_1', event_id: 'e1', sequence: 2 })]);
    expect(linesSaying(lines, 'backstop message imported as a dead letter')).toEqual([
      expect.objectContaining({ subscription_id: 'sub_1', event_id: 'e9', sequence: 4 }),
    ]);
    expect(linesSaying(lines, 'skip requested')).toEqual([expect.objectContaining({ message_group_id: 'g1', event_id: 'evt_1' })]);
  });
});

describe('lag job', () => {
  afterEach(() => vi.restoreAllMocks());
  const NO_HOLDS = { isPaused: async () => true, letGo: async () => 0, forgetHold: async () => undefined };

  it('lets go the groups held for a subscription no longer paused, and only those', async () => {
    const hold = (subscriptionId: string, receiptHandle: string, heldAt = '2026-12-02T11:00:00.000Z') => ({ subscriptionId, receiptHandle, pausedAt: '2026-12-02T11:00:00.000Z', reason: 'r', heldAt, until: '2026-12-02T23:00:00.000Z' });
    const letGo: string[] = [];
    const forgotten: string[] = [];
    const handler = createLagMetricsHandler({
      listActiveForgettingIdle: async () => [
        { ...stuck, messageGroupId: 'resumed', hold: hold('sub_resumed', 'rh-1') },
        { ...stuck, messageGroupId: 'paused', hold: hold('sub_paused', 'rh-2') },
        // Made a moment ago: its consumer may still apply it, so it is let go again next minute.
        { ...stuck, messageGroupId: 'young', hold: hold('sub_resumed', 'rh-3', new Date(now.getTime() - 10_000).toISOString()) },
        stuck,
      ],
      publish: () => undefined,
      holds: {
        isPaused: async (subscriptionId) => subscriptionId === 'sub_paused',
        letGo: async (handles) => {
          letGo.push(...handles);
          return handles.length;
        },
        forgetHold: async (group, handle) => {
          forgotten.push(`${group}:${handle}`);
        },
      },
      consumerTimeoutSeconds: 130,
      thresholds: { stallThresholdSeconds: 300, fallingBehindWaitSeconds: 120, heldAgeWarnSeconds: 864_000, retentionSeconds: 1_209_600 },
      now: () => now,
      logger: createLogger('test', 'SILENT'),
    });
    await handler();
    expect(letGo).toEqual(['rh-1', 'rh-3']);
    expect(forgotten).toEqual(['resumed:rh-1']);
  });

  it('publishes the summary of the active groups', async () => {
    const published: unknown[] = [];
    const cutoffs: string[] = [];
    const handler = createLagMetricsHandler({
      listActiveForgettingIdle: async (idleBefore) => {
        cutoffs.push(idleBefore);
        return [stuck, { ...stuck, messageGroupId: 'g2', depth: 5, oldestAcceptedAt: '2026-12-02T12:09:00.000Z', headFailingSince: undefined }];
      },
      publish: (summary) => published.push(summary),
      holds: NO_HOLDS,
      consumerTimeoutSeconds: 130,
      thresholds: { stallThresholdSeconds: 300, fallingBehindWaitSeconds: 120, heldAgeWarnSeconds: 864_000, retentionSeconds: 1_209_600 },
      now: () => now,
      logger: createLogger('test', 'SILENT'),
    });
    const summary = { maxOldestWaitSeconds: 600, stalledGroups: 1, backlog: 7, fallingBehindKeys: 0, worstFallingBehind: [], heldGroups: 0, oldestHeldSeconds: 0, nearRetention: [] };
    expect(await handler()).toEqual(summary);
    expect(published).toEqual([summary]);
    // Groups idle for IDLE_GROUP_MINUTES leave the index as it is read.
    expect(cutoffs).toEqual([new Date(now.getTime() - IDLE_GROUP_MINUTES * 60_000).toISOString()]);
  });

  it('logs each key falling behind with its rates, worst first, without its ordering key', async () => {
    const lastMinute = Math.floor(now.getTime() / 60_000) - 1;
    const fedAt = (accepted: number, delivered: number) => {
      const buckets: Record<string, number> = {};
      for (const [counter, events] of [[RateCounter.accepted, accepted], [RateCounter.delivered, delivered]] as const) {
        const { add } = planBucketUpdate(counter, lastMinute, events);
        buckets[add.name] = add.base + events;
      }
      return buckets;
    };
    const flowing = { ...stuck, headAttempts: undefined, lastError: undefined, headFailingSince: undefined, headEventId: undefined, headOrderingKey: undefined };
    const handler = createLagMetricsHandler({
      listActiveForgettingIdle: async () => [
        { ...flowing, messageGroupId: 'whale-2', depth: 40, oldestAcceptedAt: '2026-12-02T12:06:00.000Z', rateBuckets: fedAt(300, 200) },
        { ...flowing, messageGroupId: 'whale-1', depth: 90, oldestAcceptedAt: '2026-12-02T12:01:00.000Z', rateBuckets: fedAt(600, 300) },
        { ...flowing, messageGroupId: 'catching-up', depth: 9, oldestAcceptedAt: '2026-12-02T12:00:00.000Z', rateBuckets: fedAt(10, 300) },
        stuck,
      ],
      publish: () => undefined,
      holds: NO_HOLDS,
      consumerTimeoutSeconds: 130,
      thresholds: { stallThresholdSeconds: 300, fallingBehindWaitSeconds: 120, heldAgeWarnSeconds: 864_000, retentionSeconds: 1_209_600 },
      now: () => now,
      logger: createLogger('lag', 'INFO'),
    });
    const { result, lines } = await captureLogs(handler);
    expect(result.fallingBehindKeys).toBe(2);
    const whales = linesSaying(lines, FALLING_BEHIND_MESSAGE);
    expect(whales).toEqual([
      expect.objectContaining({ level: 'WARN', rank: 1, message_group_id: 'whale-1', accepted_per_minute: 600, delivered_per_minute: 300, depth: 90, oldest_wait_seconds: 540 }),
      expect.objectContaining({ level: 'WARN', rank: 2, message_group_id: 'whale-2', accepted_per_minute: 300, delivered_per_minute: 200, depth: 40, oldest_wait_seconds: 240 }),
    ]);
    expect(whales.every((line) => !JSON.stringify(line).includes('sub_1'))).toBe(true);
  });

  it('warns, every run, of each held group whose oldest event nears SQS’s retention, ids and times only', async () => {
    const daysAgo = (days: number): string => new Date(now.getTime() - days * 86_400_000).toISOString();
    const held = (subscriptionId: string) => ({ subscriptionId, receiptHandle: 'rh', pausedAt: daysAgo(12), reason: 'r', heldAt: daysAgo(0.1), until: daysAgo(-0.4) });
    const handler = createLagMetricsHandler({
      listActiveForgettingIdle: async () => [
        { ...stuck, messageGroupId: 'held-11-days', oldestAcceptedAt: daysAgo(11), headFailingSince: undefined, hold: held('sub_old') },
        { ...stuck, messageGroupId: 'held-12-days', oldestAcceptedAt: daysAgo(12), headFailingSince: undefined, hold: held('sub_older') },
        { ...stuck, messageGroupId: 'held-2-days', oldestAcceptedAt: daysAgo(2), headFailingSince: undefined, hold: held('sub_young') },
        { ...stuck, messageGroupId: 'failing', oldestAcceptedAt: daysAgo(13) },
      ],
      publish: () => undefined,
      holds: { isPaused: async () => true, letGo: async () => 0, forgetHold: async () => undefined },
      consumerTimeoutSeconds: 130,
      thresholds: { stallThresholdSeconds: 300, fallingBehindWaitSeconds: 120, heldAgeWarnSeconds: 10 * 86_400, retentionSeconds: 14 * 86_400 },
      now: () => now,
      logger: createLogger('lag', 'INFO'),
    });
    const { result, lines } = await captureLogs(handler);
    expect(result).toMatchObject({ heldGroups: 3, oldestHeldSeconds: 12 * 86_400 });
    expect(linesSaying(lines, NEAR_RETENTION_MESSAGE)).toEqual([
      expect.objectContaining({ level: 'WARN', message_group_id: 'held-12-days', subscription_id: 'sub_older', oldest_wait_seconds: 12 * 86_400, seconds_left: 2 * 86_400 }),
      expect.objectContaining({ level: 'WARN', message_group_id: 'held-11-days', subscription_id: 'sub_old', oldest_wait_seconds: 11 * 86_400, seconds_left: 3 * 86_400 }),
    ]);
  });

  it('writes one EMF record in the namespace and dimension the alarms watch', () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    publishWithPowertools(new Metrics({ namespace: LAG_METRICS.namespace, serviceName: LAG_METRICS.service }))({
      maxOldestWaitSeconds: 42,
      stalledGroups: 2,
      backlog: 9,
      fallingBehindKeys: 3,
      worstFallingBehind: [],
      heldGroups: 4,
      oldestHeldSeconds: 86_400,
      nearRetention: [],
    });
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
      { Name: 'FallingBehindKeys', Unit: 'Count' },
      { Name: 'HeldGroups', Unit: 'Count' },
      { Name: 'OldestHeldSeconds', Unit: 'Seconds' },
    ]);
    expect(record).toMatchObject({ service: 'lag', MaxOldestWaitSeconds: 42, StalledGroups: 2, Backlog: 9, FallingBehindKeys: 3, HeldGroups: 4, OldestHeldSeconds: 86_400 });
  });
});

describe('POST /v1/subscriptions/{subscription_id}/replay', () => {
  const replay = (subscriptionId: string, body?: unknown) => post('POST /v1/subscriptions/{subscription_id}/replay', body, { subscription_id: subscriptionId });

  it('answers the replay as it stands after its step, the window in UTC, until now when not given', async () => {
    const { handler, replays } = setup();
    const result = await handler(replay('sub_1', { since: '2026-12-02T13:00:00+02:00' }));
    expect(result.statusCode).toBe(200);
    expect(jsonOf(result)).toEqual({
      subscription_id: 'sub_1',
      since: '2026-12-02T11:00:00.000Z',
      until: now.toISOString(),
      started_at: now.toISOString(),
      reached: now.toISOString(),
      replayed: 3,
      dead_lettered: 1,
      not_delivered: 2,
      is_done: true,
    });
    expect(replays).toEqual([`sub_1 2026-12-02T11:00:00.000Z ${now.toISOString()} false`]);
  });

  it('ends a window with no until at the newest acceptance when ingest’s clock stamped it after this function’s now, so the replay sends every event answered before it', async () => {
    const { handler, replays } = setup();
    await handler(replay('sub_ahead', { since: '2026-12-02T12:00:00Z' }));
    // Named: the window is what was asked, even if an event was stamped after it.
    await handler(replay('sub_ahead', { since: '2026-12-02T12:00:00Z', until: '2026-12-02T12:10:00Z' }));
    expect(replays).toEqual(['sub_ahead 2026-12-02T12:00:00.000Z 2026-12-02T12:10:40.000Z false', 'sub_ahead 2026-12-02T12:00:00.000Z 2026-12-02T12:10:00.000Z true']);
  });

  it('refuses a window with since after until, until in the future, or since older than the events kept, naming the field, and starts nothing', async () => {
    const { handler, replays } = setup();
    const refusal = async (body: unknown) => {
      const result = await handler(replay('sub_1', body));
      expect(result.statusCode).toBe(400);
      return (jsonOf(result) as { error: { code: string; details: { path: string; message: string }[] } }).error;
    };
    expect(await refusal({ since: '2026-12-02T12:05:00Z', until: '2026-12-02T12:00:00Z' })).toMatchObject({ code: 'invalid_request', details: [{ path: 'since', message: expect.stringMatching(/after until/) }] });
    expect(await refusal({ since: '2026-12-02T12:00:00Z', until: '2026-12-02T12:10:01Z' })).toMatchObject({ details: [{ path: 'until', message: expect.stringMatching(/in the future/) }] });
    expect(await refusal({ since: '2026-11-25T12:09:59Z' })).toMatchObject({ details: [{ path: 'since', message: expect.stringMatching(/older than the events kept \(EVENT_RETENTION_DAYS=7/) }] });
    expect(await refusal({ since: 'yesterday' })).toMatchObject({ details: [{ path: 'since' }] });
    expect(await refusal({ until: '2026-12-02T12:00:00Z' })).toMatchObject({ details: [{ path: 'since' }] });
    expect(replays).toEqual([]);
  });

  it('answers 404 for an unknown subscription, and 409 replay_in_progress naming the replay of another window under way', async () => {
    const { handler } = setup();
    const unknown = await handler(replay('sub_none', { since: '2026-12-02T12:00:00Z' }));
    expect(unknown.statusCode).toBe(404);
    const busy = await handler(replay('sub_replaying', { since: '2026-12-02T12:00:00Z' }));
    expect(busy.statusCode).toBe(409);
    expect(jsonOf(busy)).toMatchObject({ error: { code: 'replay_in_progress', message: expect.stringMatching(/2026-12-02T11:00:00.000Z to .*3 events replayed/) } });
  });

  it('answers 500 naming the events SQS refused for good, and 409 while ingest is paused for a routing switch', async () => {
    const { handler, pause } = setup();
    const refused = await handler(replay('sub_refused', { since: '2026-12-02T12:00:00Z' }));
    expect(refused.statusCode).toBe(500);
    expect(jsonOf(refused)).toMatchObject({ error: { code: 'internal_error', details: [{ path: 'event_id', message: 'e7: refused by SQS (InvalidParameterValue)' }] } });
    pause('2026-12-02T12:09:00.000Z');
    const paused = await handler(replay('sub_1', { since: '2026-12-02T12:00:00Z' }));
    expect(paused.statusCode).toBe(409);
    expect(jsonOf(paused)).toMatchObject({ error: { code: 'ingest_paused' } });
  });

  it('cancels the replay under way, answering it as it stood, and 404 when none is under way or the subscription is unknown', async () => {
    const { handler } = setup();
    const cancel = (subscriptionId: string) => handler(apiEvent({ routeKey: 'DELETE /v1/subscriptions/{subscription_id}/replay', pathParameters: { subscription_id: subscriptionId } }));
    const cancelled = await cancel('sub_replaying');
    expect(cancelled.statusCode).toBe(200);
    expect(jsonOf(cancelled)).toEqual({
      subscription_id: 'sub_replaying',
      since: '2026-12-02T11:00:00.000Z',
      until: '2026-12-02T12:00:00.000Z',
      started_at: '2026-12-02T12:01:00.000Z',
      reached: '2026-12-02T11:30:00.000Z',
      replayed: 40,
      dead_lettered: 0,
      not_delivered: 0,
      is_done: false,
      cancelled_at: now.toISOString(),
    });
    expect(jsonOf(await cancel('sub_1'))).toMatchObject({ error: { code: 'not_found', message: 'No replay of subscription sub_1 is under way.' } });
    expect((await cancel('sub_none')).statusCode).toBe(404);
  });
});

/**
 * The API document at the local stack: it serves `GET /openapi.json`, and the real answers of a
 * producer's and an operator's session, success and refusal, each match the document's schema for
 * its route and status.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { SendFailureKind } from '../../lambda/core/enqueue-plan.js';
import { buildApiDocument } from '../../lambda/api-document/document.js';
import { ROUTES } from '../../lambda/routes.js';
import { createAnswerChecker, type AnswerCheck, type SeenAnswer } from '../support/api-document.js';
import { call, makeEvent, uniquePrefix } from './support/api.js';
import { recordAnswers } from './support/answer-recorder.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** What the session reads of the lag view. */
const lagSchema = z.object({ groups: z.array(z.object({ message_group_id: z.string(), head_attempts: z.number() })) });

describe('local stack API document', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('openapi');
  /** Event ids the receiver refuses, and those SQS refuses at ingest. */
  const refusedByReceiver = new Set<string>();
  const refusedBySqs = new Set<string>();
  // So many attempts, 1 s apart, that only the operator's skip dead-letters a refused event.
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '100', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    {
      respond: (webhook) => (refusedByReceiver.has(webhook.webhookId ?? '') ? { statusCode: 500 } : undefined),
      wrapIngestPorts: (ports) => ({
        ...ports,
        sendBatch: async (entries) => {
          // A message is refused when it holds a refused event (a request's events of one key travel in one).
          const isRefused = (body: string): boolean => [...refusedBySqs].some((eventId) => body.includes(`"event_id":"${eventId}"`));
          const failed = new Map(entries.filter((entry) => isRefused(entry.body)).map((entry) => [entry.index, { kind: SendFailureKind.transient, code: 'ServiceUnavailable' }] as const));
          const taken = entries.filter((entry) => !failed.has(entry.index));
          const answer = taken.length === 0 ? { refused: new Map(), sequenceNumbers: new Map() } : await ports.sendBatch(taken);
          return { refused: new Map([...failed, ...answer.refused]), sequenceNumbers: answer.sequenceNumbers };
        },
      }),
      // No wait after a pause, so that the session can switch the routing and back.
      pauseGraceSeconds: 0,
    },
  );

  it('serves the document generated from the schemas at GET /openapi.json', async () => {
    const recorder = recordAnswers();
    const answer = await recorder.call(stack().url, 'GET', '/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(buildApiDocument())));
    expect(createAnswerChecker(answer.body)(recorder.answers()[0] as SeenAnswer).errors).toEqual([]);
  });

  /**
   * A session touching every route, with the refusals the contract names; every answer recorded,
   * and each one `expectStatus` sees checked against the document at once.
   */
  async function runSession(check: (answer: SeenAnswer) => AnswerCheck): Promise<readonly SeenAnswer[]> {
    const { call, answers } = recordAnswers();
    const url = stack().url;
    const key = `${prefix}-key`;
    const tenant = 'tenant-openapi';
    const expectStatus = async (status: number, answer: Promise<{ status: number; body: unknown }>): Promise<unknown> => {
      const { status: actual, body } = await answer;
      expect(actual, JSON.stringify(body)).toBe(status);
      const seen = answers().at(-1);
      expect(seen).toBeDefined();
      const result = seen === undefined ? undefined : check(seen);
      expect(result?.errors.join('; '), result?.describedBy).toBe('');
      return body;
    };

    await expectStatus(200, call(url, 'GET', '/openapi.json'));
    await expectStatus(200, call(url, 'GET', '/health'));
    await expectStatus(201, call(url, 'PUT', `/v1/subscriptions/${key}`, { tenant_id: tenant, url: receiver().endpointFor(key) }));
    await expectStatus(200, call(url, 'PUT', `/v1/subscriptions/${key}`, { tenant_id: tenant, url: receiver().endpointFor(key) }));
    await expectStatus(400, call(url, 'PUT', `/v1/subscriptions/${key}`, { tenant_id: tenant, url: 'ftp://example.com' }));
    await expectStatus(409, call(url, 'PUT', `/v1/subscriptions/${key}`, { tenant_id: 'another-tenant', url: receiver().endpointFor(key) }));
    await expectStatus(200, call(url, 'GET', `/v1/subscriptions/${key}`));
    await expectStatus(404, call(url, 'GET', `/v1/subscriptions/${prefix}-nobody`));
    await expectStatus(200, call(url, 'POST', `/v1/subscriptions/${key}/secret/rotate`, { grace_seconds: 3600 }));
    await expectStatus(400, call(url, 'POST', `/v1/subscriptions/${key}/secret/rotate`, { grace_seconds: -1 }));
    await expectStatus(404, call(url, 'POST', `/v1/subscriptions/${prefix}-nobody/secret/rotate`));
    // During the rotation's grace: the secret and the previous one; then an unknown subscription's.
    await expectStatus(200, call(url, 'GET', `/v1/subscriptions/${key}/secret`));
    await expectStatus(404, call(url, 'GET', `/v1/subscriptions/${prefix}-nobody/secret`));
    const paused = `${prefix}-paused`;
    await expectStatus(201, call(url, 'PUT', `/v1/subscriptions/${paused}`, { tenant_id: tenant, url: receiver().endpointFor(paused) }));
    await expectStatus(200, call(url, 'POST', `/v1/subscriptions/${paused}/pause`, { reason: 'maintenance' }));
    await expectStatus(200, call(url, 'GET', `/v1/subscriptions/${paused}`));
    await expectStatus(400, call(url, 'POST', `/v1/subscriptions/${paused}/pause`, { reason: '' }));
    await expectStatus(404, call(url, 'POST', `/v1/subscriptions/${prefix}-nobody/pause`));
    await expectStatus(200, call(url, 'POST', `/v1/subscriptions/${paused}/resume`));
    await expectStatus(404, call(url, 'POST', `/v1/subscriptions/${prefix}-nobody/resume`));
    // A change of ordering begun (nothing of the subscription is pending), then asked with bad input.
    await expectStatus(202, call(url, 'POST', `/v1/subscriptions/${paused}/ordering-change`, { ordering: 'resource' }));
    await expectStatus(400, call(url, 'POST', `/v1/subscriptions/${paused}/ordering-change`, { ordering: 'subscription' }));
    await expectStatus(404, call(url, 'POST', `/v1/subscriptions/${prefix}-nobody/ordering-change`, { ordering: 'resource' }));
    await expectStatus(200, call(url, 'GET', `/v1/subscriptions?tenant_id=${encodeURIComponent(tenant)}&limit=1`));
    await expectStatus(400, call(url, 'GET', '/v1/subscriptions?limit=1'));

    // Events: accepted, a duplicate, malformed, not JSON, of an unknown subscription, refused by SQS.
    refusedByReceiver.add(`${key}-1`);
    await expectStatus(202, call(url, 'POST', '/v1/events', { events: [makeEvent(key, `${key}-1`, tenant), makeEvent(key, `${key}-2`, tenant)] }));
    await expectStatus(202, call(url, 'POST', '/v1/events', makeEvent(key, `${key}-2`, tenant)));
    await expectStatus(400, call(url, 'POST', '/v1/events', { ...makeEvent(key, `${key}-bad`, tenant), colour: 'red' }));
    await expectStatus(400, call(url, 'POST', '/v1/events', '{"event_id": '));
    await expectStatus(422, call(url, 'POST', '/v1/events', makeEvent(`${prefix}-nobody`, `${key}-unknown`, tenant)));
    refusedBySqs.add(`${key}-3`);
    await expectStatus(503, call(url, 'POST', '/v1/events', { events: [makeEvent(key, `${key}-3`, tenant), makeEvent(key, `${key}-4`, tenant)] }));

    // The lag view shows the refused head failing; the operator skips it, and it is dead-lettered.
    const failing = await waitFor('the refused head failing in the lag view', async () => {
      const { groups } = lagSchema.parse((await call(url, 'GET', '/v1/lag')).body);
      return groups.find((row) => row.head_attempts > 0)?.message_group_id;
    });
    await expectStatus(200, call(url, 'GET', `/v1/groups/${failing}`));
    await expectStatus(404, call(url, 'GET', `/v1/groups/${'0'.repeat(32)}`));
    await expectStatus(409, call(url, 'POST', `/v1/groups/${failing}/skip`, { event_id: `${key}-2` }));
    await expectStatus(400, call(url, 'POST', `/v1/groups/${failing}/skip`, { event: 'x' }));
    await expectStatus(202, call(url, 'POST', `/v1/groups/${failing}/skip`, { event_id: `${key}-1` }));
    await waitFor('the skipped event dead-lettered', async () => {
      const { body } = await call(url, 'GET', `/v1/dead-letters?subscription_id=${key}&limit=10`);
      return JSON.stringify(body).includes(`"${key}-1"`);
    });
    await waitFor('the next event delivered', () => receiver().deliveredTo(key).length === 1);
    const lag = await expectStatus(200, call(url, 'GET', '/v1/lag'));
    expect(JSON.stringify(lag)).toContain('"dead_lettered":1');
    await expectStatus(400, call(url, 'GET', '/v1/lag?limit=0'));
    await expectStatus(200, call(url, 'GET', '/v1/metrics?minutes=5'));
    await expectStatus(400, call(url, 'GET', '/v1/metrics?minutes=0'));
    await expectStatus(400, call(url, 'GET', '/v1/dead-letters'));
    await expectStatus(200, call(url, 'GET', `/v1/dead-letters?subscription_id=${key}&include=payload`));
    await expectStatus(400, call(url, 'GET', `/v1/dead-letters?subscription_id=${key}&include=everything`));
    await expectStatus(409, call(url, 'POST', `/v1/groups/${failing}/skip`));
    await expectStatus(404, call(url, 'POST', `/v1/groups/${'0'.repeat(32)}/skip`));
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await expectStatus(200, call(url, 'POST', `/v1/subscriptions/${key}/replay`, { since: hourAgo }));
    await expectStatus(400, call(url, 'POST', `/v1/subscriptions/${key}/replay`, { since: new Date(Date.now() + 3_600_000).toISOString() }));
    await expectStatus(404, call(url, 'POST', `/v1/subscriptions/${prefix}-nobody/replay`, { since: hourAgo }));
    await expectStatus(404, call(url, 'DELETE', `/v1/subscriptions/${key}/replay`));
    // A replay a crash left half done: cancelled.
    await stack().clients.dynamo.send(
      new UpdateCommand({
        TableName: stack().resources.subscriptionsTable,
        Key: { subscription_id: key },
        UpdateExpression: 'SET #replay = :replay',
        ExpressionAttributeNames: { '#replay': 'replay' },
        ExpressionAttributeValues: { ':replay': { since: hourAgo, until: hourAgo, started_at: hourAgo, replayed: 0, dead_lettered: 0, not_delivered: 0 } },
      }),
    );
    await expectStatus(409, call(url, 'POST', `/v1/subscriptions/${key}/replay`, { since: new Date(Date.now() - 60_000).toISOString() }));
    await expectStatus(200, call(url, 'DELETE', `/v1/subscriptions/${key}/replay`));

    // The routing: a switch before a pause is refused; paused, ingest and redrive are; then switch and back.
    await expectStatus(200, call(url, 'GET', '/v1/routing'));
    await expectStatus(409, call(url, 'PUT', '/v1/routing', { partition_count: 4, expected_version: 0 }));
    await expectStatus(400, call(url, 'PUT', '/v1/routing', { partition_count: 0, expected_version: 0 }));
    await expectStatus(200, call(url, 'POST', '/v1/routing/pause'));
    await expectStatus(503, call(url, 'POST', '/v1/events', makeEvent(key, `${key}-paused`, tenant)));
    await expectStatus(409, call(url, 'POST', '/v1/dead-letters/redrive', { subscription_id: key }));
    await expectStatus(409, call(url, 'POST', `/v1/subscriptions/${key}/replay`, { since: new Date(Date.now() - 60_000).toISOString() }));
    await expectStatus(409, call(url, 'PUT', '/v1/routing', { partition_count: 4, expected_version: 7 }));
    // The queue's counts settle after the last delivery: until then the switch is refused (409 queue_not_empty).
    await waitFor('the switch to 4 partitions', async () => (await call(url, 'PUT', '/v1/routing', { partition_count: 4, expected_version: 0 })).status === 200);
    await expectStatus(200, call(url, 'PUT', '/v1/routing', { partition_count: null, expected_version: 1 }));
    await expectStatus(200, call(url, 'POST', '/v1/routing/resume'));

    // Redrive and the import of the backstop.
    refusedByReceiver.clear();
    await expectStatus(404, call(url, 'POST', '/v1/dead-letters/redrive', { subscription_id: `${prefix}-nobody` }));
    await expectStatus(400, call(url, 'POST', '/v1/dead-letters/redrive', {}));
    await waitFor('the redrive done', async () => {
      const body = await expectStatus(200, call(url, 'POST', '/v1/dead-letters/redrive', { subscription_id: key }));
      return JSON.stringify(body).includes('"is_done":true');
    });
    await expectStatus(200, call(url, 'POST', '/v1/dead-letters/import'));

    // Requests no route takes.
    await expectStatus(404, call(url, 'GET', '/v1/nothing'));
    await expectStatus(405, call(url, 'DELETE', '/v1/routing'));
    return answers();
  }

  it('answers every route, on success and refusal, as the document it serves describes', async () => {
    const check = createAnswerChecker((await call(stack().url, 'GET', '/openapi.json')).body);
    const answers = await runSession(check);
    const mismatches = answers.map((answer) => ({ answer, check: check(answer) })).filter(({ check: result }) => result.errors.length > 0);
    expect(mismatches.map(({ answer, check: result }) => `${result.describedBy}: ${result.errors.join('; ')} in ${JSON.stringify(answer.body)}`)).toEqual([]);

    // The session covered every route of ROUTES with a success, and the contract's refusals.
    const described = new Set(answers.map((answer) => check(answer).describedBy));
    for (const routeKey of Object.values(ROUTES).flat()) expect([...described].some((entry) => new RegExp(`^${routeKey.replace(/[{}]/g, '\\$&')} 2\\d\\d$`).test(entry)), routeKey).toBe(true);
    expect([...described]).toEqual(
      expect.arrayContaining([
        'POST /v1/events 400',
        'POST /v1/events 422',
        'POST /v1/events 503',
        'PUT /v1/subscriptions/{subscription_id} 201',
        'PUT /v1/subscriptions/{subscription_id} 409',
        'GET /v1/subscriptions/{subscription_id} 404',
        'GET /v1/subscriptions 400',
        'GET /v1/subscriptions/{subscription_id}/secret 404',
        'POST /v1/subscriptions/{subscription_id}/secret/rotate 400',
        'POST /v1/subscriptions/{subscription_id}/secret/rotate 404',
        'POST /v1/subscriptions/{subscription_id}/pause 400',
        'POST /v1/subscriptions/{subscription_id}/pause 404',
        'POST /v1/subscriptions/{subscription_id}/resume 404',
        'POST /v1/subscriptions/{subscription_id}/ordering-change 400',
        'POST /v1/subscriptions/{subscription_id}/ordering-change 404',
        'POST /v1/groups/{message_group_id}/skip 409',
        'POST /v1/dead-letters/redrive 409',
        'PUT /v1/routing 409',
        'RouteNotFound',
        'MethodNotAllowed',
      ]),
    );

    // A real answer with a field renamed, or one missing, does not match.
    const lagAnswer = answers.find((answer) => answer.path === '/v1/lag' && answer.status === 200);
    const redriveAnswer = answers.find((answer) => answer.path === '/v1/dead-letters/redrive' && answer.status === 200);
    expect(lagAnswer).toBeDefined();
    expect(redriveAnswer).toBeDefined();
    const renamed = (answer: SeenAnswer | undefined, from: string, to: string): SeenAnswer => {
      const body: unknown = JSON.parse(JSON.stringify(answer?.body).replaceAll(`"${from}":`, `"${to}":`));
      return { method: answer?.method ?? '', path: answer?.path ?? '', status: answer?.status ?? 0, body };
    };
    expect(check(renamed(lagAnswer, 'dead_lettered', 'dead_letters')).errors).not.toEqual([]);
    expect(check(renamed(redriveAnswer, 'is_done', 'done')).errors).not.toEqual([]);
  });
});

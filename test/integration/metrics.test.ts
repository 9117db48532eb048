/**
 * `GET /v1/metrics` on the local stack: the consumer's deliveries, failed attempts and dead letters
 * summed per minute by the local recorder, and the lag figures taken at the request, as the
 * operator console's overview reads them.
 */
import { describe, expect, it } from 'vitest';
import type { MetricsAnswer } from '../../lambda/core/metrics.js';
import { metricsAnswerSchema } from '../../lambda/core/answers.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack metrics', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('metrics');
  const refusing = `${prefix}-refusing`;
  const accepting = `${prefix}-accepting`;
  // Two attempts, 4 s apart, then a dead letter: a refused head fails for 4 s, longer than the
  // 1 s stall threshold, so its group shows as stalled while it waits for its retry.
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2', RETRY_BASE_SECONDS: '4', RETRY_MAX_SECONDS: '4', STALL_THRESHOLD_SECONDS: '1' },
    { respond: (webhook) => (webhook.path.slice(1) === refusing ? { statusCode: 500 } : undefined) },
  );

  const metrics = async (query = '?minutes=5'): Promise<MetricsAnswer> => {
    const answer = await call(stack().url, 'GET', `/v1/metrics${query}`);
    expect(answer.status).toBe(200);
    return metricsAnswerSchema.parse(answer.body);
  };
  const totals = (answer: MetricsAnswer) => ({
    delivered: answer.points.reduce((sum, point) => sum + point.delivered, 0),
    failed_attempts: answer.points.reduce((sum, point) => sum + point.failed_attempts, 0),
    dead_lettered: answer.points.reduce((sum, point) => sum + point.dead_lettered, 0),
  });

  it('answers zeros for every minute before anything was delivered, the last one the current minute', async () => {
    const before = Date.now();
    const answer = await metrics();
    expect(answer).toMatchObject({ minutes: 5, period_seconds: 60, source: 'local', stalled_groups: 0, backlog: 0 });
    expect(answer.points).toHaveLength(5);
    expect(totals(answer)).toEqual({ delivered: 0, failed_attempts: 0, dead_lettered: 0 });
    // One point per minute, oldest first; the last is the minute of the request.
    const starts = answer.points.map((point) => Date.parse(point.at));
    expect(starts.slice(1).map((start, index) => start - (starts[index] ?? 0))).toEqual([60_000, 60_000, 60_000, 60_000]);
    expect(starts.at(-1)).toBeGreaterThanOrEqual(Math.floor(before / 60_000) * 60_000);
    expect(starts.at(-1)).toBeLessThanOrEqual(Date.now());
    expect((await metrics('')).points).toHaveLength(60);
  });

  it('counts deliveries, failed attempts and dead letters per minute, and sees the stalled group while its head fails', async () => {
    await subscribe(stack().url, accepting, receiver().endpointFor(accepting));
    await subscribe(stack().url, refusing, receiver().endpointFor(refusing));
    await postEvents(stack().url, [1, 2, 3].map((n) => makeEvent(accepting, `${accepting}-${n}`)));
    await postEvents(stack().url, [1, 2].map((n) => makeEvent(refusing, `${refusing}-${n}`)));

    // The refused head waits 4 s for its retry, failing: stalled past the 1 s threshold.
    const stalled = await waitFor('the refused key’s group counted as stalled', async () => {
      const answer = await metrics();
      return answer.stalled_groups >= 1 ? answer : undefined;
    });
    expect(stalled.stalled_groups).toBe(1);
    expect(stalled.backlog).toBeGreaterThanOrEqual(1);
    expect(stalled.max_oldest_wait_seconds).toBeGreaterThanOrEqual(1);

    // 3 delivered; each refused event tried twice (4 failed attempts) and dead-lettered (2).
    const settled = await waitFor(
      'the sums to reach 3 delivered, 4 failed attempts, 2 dead letters',
      async () => {
        const answer = await metrics();
        expect(totals(answer)).toEqual({ delivered: 3, failed_attempts: 4, dead_lettered: 2 });
        return answer;
      },
      40_000,
    );
    expect(settled.points).toHaveLength(5);
    expect(receiver().deliveredTo(accepting)).toHaveLength(3);
    expect(receiver().attemptsOf(`${refusing}-1`)).toHaveLength(2);
    expect(receiver().attemptsOf(`${refusing}-2`)).toHaveLength(2);
    // Once both are dead letters, no head fails: nothing is stalled any more.
    await waitFor('no group stalled once the refused key is dead-lettered', async () => (await metrics()).stalled_groups === 0);
  });

  it('refuses a minutes value out of range with invalid_request naming minutes', async () => {
    for (const minutes of ['0', '181', 'x']) {
      const answer = await call(stack().url, 'GET', `/v1/metrics?minutes=${minutes}`);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: { code: 'invalid_request', message: expect.any(String), details: [{ path: 'minutes', message: 'must be an integer from 1 to 180' }] } });
    }
  });
});

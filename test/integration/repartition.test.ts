/**
 * Safe repartitioning on the local stack, under load: pause ingest (503 with Retry-After, nothing
 * lost), drain the queue, switch the routing (refused while anything is pending or too soon after
 * the pause), resume; every key delivered in order, numbered without a gap, never in two groups.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { messageGroupIdFor } from '../../lambda/core/routing.js';
import { call, makeEvent, subscribe, uniquePrefix, type EventResult } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

interface Routing {
  readonly version: number;
  readonly partition_count: number | null;
  readonly is_paused: boolean;
  readonly pending: { readonly queued: number; readonly in_flight: number; readonly delayed: number; readonly groups_with_pending: number };
}

const KEYS = 6;
const PARTITIONS = 3;

describe('local stack repartitioning', { timeout: 120_000 }, () => {
  const prefix = uniquePrefix('repart');
  const PAUSE_GRACE = 3;
  const keys = Array.from({ length: KEYS }, (_, k) => `${prefix}-k${k}`);
  // A short grace: the switch's refusal within it is tested, without waiting the deployed 30 s.
  const { stack, receiver } = useStackAndReceiver({}, { pauseGraceSeconds: PAUSE_GRACE });

  beforeAll(async () => {
    for (const key of keys) await subscribe(stack().url, key, receiver().endpointFor(key));
  });

  const routing = async (): Promise<Routing> => (await call(stack().url, 'GET', '/v1/routing')).body as Routing;

  it('drains, switches and resumes under load without losing or splitting a key', async () => {
    const accepted = new Map<string, EventResult[]>(keys.map((key) => [key, []]));
    let pausedAnswers = 0;
    let isProducing = true;
    // One producer per key, each waiting for 202 before its next event, as the contract asks.
    const producers = keys.map(async (key) => {
      for (let n = 1; isProducing && n <= 400; n += 1) {
        for (;;) {
          const answer = await call(stack().url, 'POST', '/v1/events', makeEvent(key, `${key}-${n}`));
          if (answer.status === 202) {
            accepted.get(key)?.push(...(answer.body as { results: EventResult[] }).results);
            break;
          }
          expect(answer.status).toBe(503);
          expect(answer.body).toMatchObject({ error: { code: 'ingest_paused' } });
          expect(answer.headers.get('retry-after')).toBe('5');
          pausedAnswers += 1;
          // A producer honours Retry-After; the test's producer retries sooner to keep the test short.
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    });

    await waitFor('some events accepted under the first routing', () => [...accepted.values()].every((results) => results.length >= 3));
    const before = await routing();
    expect(before).toMatchObject({ version: 0, partition_count: null, is_paused: false });

    const paused = await call(stack().url, 'POST', '/v1/routing/pause');
    expect(paused).toMatchObject({ status: 200, body: { is_paused: true, version: 0 } });
    const tooSoon = await call(stack().url, 'PUT', '/v1/routing', { partition_count: PARTITIONS, expected_version: 0 });
    expect(tooSoon.status).toBe(409);
    expect(['pause_too_recent', 'queue_not_empty']).toContain((tooSoon.body as { error: { code: string } }).error.code);

    await waitFor('the queue drained and the grace period over', async () => {
      const current = await routing();
      const isEmpty = Object.values(current.pending).every((count) => count === 0);
      return isEmpty && pausedAnswers > 0 ? current : undefined;
    }, 60_000);
    await waitFor('the pause grace period over', async () => {
      const answer = await call(stack().url, 'PUT', '/v1/routing', { partition_count: PARTITIONS, expected_version: 0 });
      if (answer.status === 409) {
        expect((answer.body as { error: { code: string } }).error.code).toBe('pause_too_recent');
        return undefined;
      }
      expect(answer).toMatchObject({ status: 200, body: { version: 1, partition_count: PARTITIONS, is_paused: true } });
      return answer;
    }, (PAUSE_GRACE + 10) * 1000);
    const stale = await call(stack().url, 'PUT', '/v1/routing', { partition_count: 5, expected_version: 0 });
    expect(stale).toMatchObject({ status: 409, body: { error: { code: 'version_conflict' } } });

    expect((await call(stack().url, 'POST', '/v1/routing/resume')).body).toMatchObject({ is_paused: false, version: 1, partition_count: PARTITIONS });
    await waitFor('events accepted under the new routing', () =>
      keys.every((key) => (accepted.get(key) ?? []).some((result) => result.message_group_id === messageGroupIdFor(key, PARTITIONS))),
    );
    isProducing = false;
    await Promise.all(producers);

    for (const key of keys) {
      const results = accepted.get(key) ?? [];
      await waitFor(`every accepted event of ${key} delivered`, () => receiver().deliveredTo(key).length === results.length, 30_000);
      // In order, numbered without a gap: nothing lost, nothing overtaken across the switch.
      expect(receiver().deliveredTo(key).map((d) => d.webhookId)).toEqual(results.map((r) => r.event_id));
      expect(receiver().deliveredTo(key).map((d) => d.sequence)).toEqual(results.map((_, i) => i + 1));
      // Each key was in exactly one group under each routing, and the switch came between.
      const groups = results.map((r) => r.message_group_id);
      const switchedAt = groups.indexOf(messageGroupIdFor(key, PARTITIONS));
      expect(groups.slice(0, switchedAt).every((g) => g === messageGroupIdFor(key, undefined))).toBe(true);
      expect(groups.slice(switchedAt).every((g) => g === messageGroupIdFor(key, PARTITIONS))).toBe(true);
    }
    expect(pausedAnswers).toBeGreaterThan(0);
  });
});

/**
 * Whale detection on the local stack: a key fed faster than its slow receiver takes its events,
 * one per round trip, shows in `GET /v1/lag` with its accepted and delivered events per minute and
 * `is_falling_behind`; a key with a backlog that it works off (fed nothing, delivering) shows its
 * rates without the flag. The stack's clock is the test's: it moves to the next minute when the
 * test says, so the rates of a whole minute are read without waiting one.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { LagRow } from '../../lambda/core/lag.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** The receiver's answer time for both keys: a key's ceiling is one event per this. */
const ROUND_TRIP_MS = 200;

describe('local stack whale detection', { timeout: 120_000 }, () => {
  const prefix = uniquePrefix('whale');
  const whale = `${prefix}-whale`;
  const healthy = `${prefix}-healthy`;

  // The stack's clock: the system clock shifted by `offsetMs`, which only ever grows.
  let offsetMs = 0;
  const clock = (): Date => new Date(Date.now() + offsetMs);
  /** Moves the stack's clock to one second into its next minute. */
  const nextMinute = (): void => {
    const target = (Math.floor(clock().getTime() / 60_000) + 1) * 60_000 + 1_000;
    offsetMs = target - Date.now();
  };

  const { stack, receiver } = useStackAndReceiver(
    { FALLING_BEHIND_WAIT_SECONDS: '60', CONSUMER_CONCURRENCY: '4' },
    {
      clock,
      // A slow endpoint: the answer comes after ROUND_TRIP_MS, what a real receiver's work takes.
      respond: async () => {
        await delay(ROUND_TRIP_MS);
        return undefined;
      },
    },
  );

  const lag = async (): Promise<LagRow[]> => {
    const answer = await call(stack().url, 'GET', '/v1/lag');
    expect(answer.status).toBe(200);
    return (answer.body as { groups: LagRow[] }).groups;
  };
  /**
   * Sends `count` events of a key, one request each: each is then a message of its own, and a
   * receive holds at most 10 of them, which the test's minutes count on (a request's events of one
   * key would travel in one message, delivered in one invocation, its lag written at its end).
   */
  const postOneByOne = async (subscription: string, from: number, count: number): Promise<string | undefined> => {
    let group: string | undefined;
    for (let index = from; index < from + count; index += 1) {
      const [result] = await postEvents(stack().url, [makeEvent(subscription, `${subscription}-${index}`)]);
      group ??= result?.message_group_id;
    }
    return group;
  };

  it('flags the key fed faster than it delivers, with both rates, and not the key working off its backlog', async () => {
    await subscribe(stack().url, whale, receiver().endpointFor(whale));
    await subscribe(stack().url, healthy, receiver().endpointFor(healthy));

    // Minute A: both keys get a backlog that lasts beyond the minutes of this test.
    nextMinute();
    const whaleGroup = await postOneByOne(whale, 0, 40);
    const healthyGroup = await postOneByOne(healthy, 0, 60);
    await waitFor('both keys delivering', () => receiver().deliveredTo(whale).length >= 1 && receiver().deliveredTo(healthy).length >= 1);

    // Minute A + 1: the whale is fed 40 more; the healthy key nothing. Past 10 deliveries of the
    // healthy key (a batch holds at most 10), a batch of this minute has been delivered whole.
    nextMinute();
    const healthyBefore = receiver().deliveredTo(healthy).length;
    await postOneByOne(whale, 40, 40);
    await waitFor('a batch of the healthy key begun in this minute', () => receiver().deliveredTo(healthy).length >= healthyBefore + 11);

    // Minute A + 2: the rows show minute A + 1, once its last batches are recorded.
    nextMinute();
    const rows = await waitFor('both keys’ deliveries of the last minute in the lag view', async () => {
      const view = await lag();
      const whaleRow = view.find((row) => row.message_group_id === whaleGroup);
      const healthyRow = view.find((row) => row.message_group_id === healthyGroup);
      return whaleRow !== undefined && healthyRow !== undefined && whaleRow.delivered_per_minute > 0 && healthyRow.delivered_per_minute > 0 && { whaleRow, healthyRow };
    });

    expect(rows.whaleRow).toMatchObject({ ordering_key: whale, accepted_per_minute: 40, is_falling_behind: true, head_attempts: 0 });
    expect(rows.whaleRow.delivered_per_minute).toBeLessThan(40);
    expect(rows.whaleRow.oldest_wait_seconds).toBeGreaterThan(60);
    expect(rows.healthyRow).toMatchObject({ ordering_key: healthy, accepted_per_minute: 0, is_falling_behind: false });
    expect(rows.healthyRow.depth).toBeGreaterThan(0);
    expect(rows.healthyRow.oldest_wait_seconds).toBeGreaterThan(60);
  });
});

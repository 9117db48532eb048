/**
 * Pause and resume of a subscription on the local stack: while paused nothing of it is attempted
 * and its events are accepted and wait in order; resume delivers them from each key's head, in
 * order, with the numbers they would have had, within seconds (the hold is ~12 hours: anything
 * delivered proves resume let the group go).
 */
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix, type TestEvent } from './support/api.js';
import { lagRowOf, lagRows } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { verifiedDeliveries } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

interface PauseState {
  readonly is_paused: boolean;
  readonly paused_at: string | null;
  readonly pause_reason: string | null;
  readonly released_groups?: number;
}

describe('local stack: pause and resume a subscription', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('pause');
  /** Event ids the receiver refuses with 500 while listed. */
  const refusing = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '3', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    { respond: (webhook) => (refusing.has(webhook.webhookId ?? '') ? { statusCode: 500 } : undefined) },
  );
  const pause = async (id: string, body?: unknown) => call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/pause`, body);
  const resume = async (id: string) => call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/resume`);
  const subscribed = async (id: string, body: Record<string, unknown> = {}): Promise<void> => {
    const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: 'tenant-it', url: receiver().endpointFor(id), ...body });
    expect(answer.status).toBe(201);
    receiver().setSecret(id, (answer.body as { secret: string }).secret);
  };
  const events = (id: string, from: number, to: number): TestEvent[] => Array.from({ length: to - from + 1 }, (_, index) => makeEvent(id, `${id}-${from + index}`));
  const deliveries = (id: string) => verifiedDeliveries(receiver(), id);

  it('accepts and holds a paused subscription\'s events without an attempt, and delivers them in order on resume', async () => {
    const id = `${prefix}-a`;
    const other = `${prefix}-b`;
    await subscribed(id);
    await subscribed(other);
    await postEvents(stack().url, events(id, 1, 3));
    await waitFor('the first three delivered', () => receiver().deliveredTo(id).length === 3);

    const paused = await pause(id, { reason: 'receiver migration' });
    expect(paused.status).toBe(200);
    const state = paused.body as PauseState;
    expect(state).toMatchObject({ subscription_id: id, is_paused: true, pause_reason: 'receiver migration' });
    const [group] = (await postEvents(stack().url, [...events(id, 4, 6), ...events(other, 1, 2)])).map((result) => result.message_group_id);
    await postEvents(stack().url, events(id, 7, 8));
    // The consumer received the head and held its group: no attempt, nothing counted.
    const held = await waitFor('the group held', async () => {
      const row = await lagRowOf(stack(), group ?? '');
      return row?.is_paused === true && row.depth === 5 ? row : undefined;
    });
    expect(held).toMatchObject({ held_subscription_id: id, paused_at: state.paused_at, pause_reason: 'receiver migration', head_attempts: 0 });
    await waitFor('the other subscription delivered', () => receiver().deliveredTo(other).length === 2);
    expect(events(id, 4, 8).flatMap((event) => receiver().attemptsOf(event.event_id))).toEqual([]);
    expect((await call(stack().url, 'GET', `/v1/subscriptions/${encodeURIComponent(id)}`)).body).toMatchObject({ is_paused: true, paused_at: state.paused_at, pause_reason: 'receiver migration' });
    // Accepted while held, behind the head: still nothing attempted.
    await postEvents(stack().url, events(id, 9, 9));
    await waitFor('the ninth counted', async () => (await lagRowOf(stack(), group ?? ''))?.depth === 6);
    expect(receiver().attempts().filter((attempt) => attempt.path === `/${id}`)).toHaveLength(3);

    const resumed = await resume(id);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ subscription_id: id, is_paused: false, paused_at: null, pause_reason: null, released_groups: 1 });
    await waitFor('all nine delivered', () => receiver().deliveredTo(id).length === 9);
    expect(deliveries(id)).toEqual(events(id, 1, 9).map((event, index) => [event.event_id, index + 1]));
    // One attempt each: the pause counted none.
    expect(events(id, 4, 9).map((event) => receiver().attemptsOf(event.event_id).length)).toEqual([1, 1, 1, 1, 1, 1]);
    await waitFor('the group no longer shown paused', async () => (await lagRowOf(stack(), group ?? ''))?.is_paused !== true);
  });

  it('stops a failing head\'s attempts while paused, and goes on from its count on resume, without a dead letter', async () => {
    const id = `${prefix}-failing`;
    await subscribed(id);
    refusing.add(`${id}-1`);
    const [group] = (await postEvents(stack().url, events(id, 1, 2))).map((result) => result.message_group_id);
    await waitFor('the head refused once', () => receiver().attemptsOf(`${id}-1`).length >= 1);
    expect((await pause(id)).body).toMatchObject({ is_paused: true, pause_reason: 'paused by an operator' });
    const held = await waitFor('the group held', async () => {
      const row = await lagRowOf(stack(), group ?? '');
      return row?.is_paused === true ? row : undefined;
    });
    // Its attempts so far stay shown; the pause stopped the stall clock, not the count.
    const attemptsWhenHeld = receiver().attemptsOf(`${id}-1`).length;
    expect(held.head_attempts).toBe(attemptsWhenHeld);
    expect(attemptsWhenHeld).toBeLessThan(3);
    refusing.delete(`${id}-1`);
    expect((await resume(id)).body).toMatchObject({ is_paused: false, released_groups: 1 });
    await waitFor('both delivered', () => receiver().deliveredTo(id).length === 2);
    expect(deliveries(id)).toEqual([
      [`${id}-1`, 1],
      [`${id}-2`, 2],
    ]);
    expect(receiver().attemptsOf(`${id}-1`)).toHaveLength(attemptsWhenHeld + 1);
    expect((await call(stack().url, 'GET', `/v1/dead-letters?subscription_id=${encodeURIComponent(id)}`)).body).toMatchObject({ items: [] });
  });

  it('holds every resource\'s group of a subscription ordered by resource, and lets them all go on resume', async () => {
    const id = `${prefix}-resources`;
    await subscribed(id, { ordering: 'resource' });
    await pause(id);
    const onResource = (n: number, resource: string): TestEvent => ({ ...makeEvent(id, `${id}-${resource}-${n}`), resource_id: resource });
    const sent = ['r1', 'r2', 'r3'].flatMap((resource) => [1, 2].map((n) => onResource(n, resource)));
    const groups = new Set((await postEvents(stack().url, sent)).map((result) => result.message_group_id));
    expect(groups.size).toBe(3);
    await waitFor('three groups held', async () => (await lagRows(stack())).filter((row) => groups.has(row.message_group_id) && row.is_paused).length === 3);
    expect(receiver().attempts().filter((attempt) => attempt.path === `/${id}`)).toEqual([]);
    expect((await resume(id)).body).toMatchObject({ released_groups: 3 });
    await waitFor('all six delivered', () => receiver().deliveredTo(id).length === 6);
    for (const resource of ['r1', 'r2', 'r3']) {
      const ofResource = receiver()
        .deliveredTo(id)
        .filter((attempt) => attempt.webhookId?.startsWith(`${id}-${resource}-`) === true);
      expect(ofResource.map((attempt) => [attempt.webhookId, attempt.sequence])).toEqual([
        [`${id}-${resource}-1`, 1],
        [`${id}-${resource}-2`, 2],
      ]);
    }
  });

  it('loses nothing and keeps order when pauses and resumes race with arriving events', async () => {
    const id = `${prefix}-racing`;
    await subscribed(id);
    for (let round = 0; round < 5; round += 1) {
      await postEvents(stack().url, events(id, round * 4 + 1, round * 4 + 2));
      await pause(id);
      await postEvents(stack().url, events(id, round * 4 + 3, round * 4 + 4));
      // Resumed at once: the consumer may hold the group after this resume read its holds.
      await resume(id);
    }
    await waitFor('all twenty delivered', () => receiver().deliveredTo(id).length === 20, 30_000);
    expect(deliveries(id)).toEqual(events(id, 1, 20).map((event, index) => [event.event_id, index + 1]));
  });

  it('keeps a pause through a PUT, pauses once, and answers 404 and 400 as the contract says', async () => {
    const id = `${prefix}-kept`;
    await subscribed(id);
    const first = (await pause(id, { reason: 'first' })).body as PauseState;
    const second = (await pause(id, { reason: 'second' })).body as PauseState;
    expect(second).toEqual(first);
    await subscribe(stack().url, id, receiver().endpointFor(id));
    expect((await call(stack().url, 'GET', `/v1/subscriptions/${encodeURIComponent(id)}`)).body).toMatchObject({ is_paused: true, paused_at: first.paused_at, pause_reason: 'first' });

    const unknown = await pause(`${prefix}-nobody`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: { code: 'not_found' } });
    expect((await resume(`${prefix}-nobody`)).status).toBe(404);
    const refused = await pause(id, { reason: '' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'reason' }] } });
    expect((await pause(id, '{"reason":')).status).toBe(400);

    expect((await resume(id)).body).toMatchObject({ is_paused: false, released_groups: 0 });
    const again = await resume(id);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ is_paused: false, released_groups: 0 });
  });
});

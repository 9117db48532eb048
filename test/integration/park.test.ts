/**
 * Parking a paused backlog on the local stack (PAUSE_EVACUATION=store): a group held past
 * HELD_AGE_ALARM_SECONDS (2 s here, 10 days by default) is moved out of the queue into the store
 * of dead letters, in order, nothing attempted; events accepted meanwhile are parked behind it;
 * resume sends the backlog back first, and events accepted after the resume come after it, each
 * key's numbers in acceptance order, every event once.
 */
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix, type TestEvent } from './support/api.js';
import { deadLettersOf, lagRowOf } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { verifiedDeliveries } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

interface SubscriptionState {
  readonly is_paused: boolean;
  readonly parked_groups: number;
}

describe('local stack: a paused backlog parked and sent back first', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('park');
  const { stack, receiver } = useStackAndReceiver({ PAUSE_EVACUATION: 'store', HELD_AGE_ALARM_SECONDS: '2', MAX_DELIVERY_ATTEMPTS: '3', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' });
  const pause = async (id: string) => call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/pause`);
  const resume = async (id: string) => call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/resume`);
  const stateOf = async (id: string): Promise<SubscriptionState> => (await call(stack().url, 'GET', `/v1/subscriptions/${encodeURIComponent(id)}`)).body as SubscriptionState;
  const events = (id: string, from: number, to: number, resource?: string): TestEvent[] =>
    Array.from({ length: to - from + 1 }, (_, index) => ({ ...makeEvent(id, `${id}-${resource ?? ''}${from + index}`), ...(resource === undefined ? {} : { resource_id: resource }) }));
  const deliveries = (id: string) => verifiedDeliveries(receiver(), id);

  it('parks a held group once its oldest event is due, parks what comes behind it, and on resume delivers it all first, in order, once each', async () => {
    const id = `${prefix}-a`;
    const secret = await subscribe(stack().url, id, receiver().endpointFor(id));
    receiver().setSecret(id, secret);
    await postEvents(stack().url, events(id, 1, 2));
    await waitFor('the first two delivered', () => receiver().deliveredTo(id).length === 2);
    expect((await pause(id)).status).toBe(200);
    const [group] = (await postEvents(stack().url, events(id, 3, 6))).map((result) => result.message_group_id);
    // Held, then received again once due (the hold ends then), and parked: out of the queue.
    await waitFor('the backlog parked', async () => (await stateOf(id)).parked_groups === 1, 30_000);
    // Accepted while parked: parked behind the backlog, never attempted.
    await postEvents(stack().url, events(id, 7, 8));
    await waitFor('the later events counted', async () => (await lagRowOf(stack(), group ?? ''))?.depth === 6);
    // Parked events are no dead letters: the list shows none.
    expect(await deadLettersOf(stack(), id)).toEqual([]);
    expect(events(id, 3, 8).flatMap((event) => receiver().attemptsOf(event.event_id))).toEqual([]);

    const resumed = await resume(id);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ is_paused: false });
    // Accepted after the resume: behind the backlog sent back, whatever the consumer is doing.
    await postEvents(stack().url, events(id, 9, 10));
    await waitFor('all ten delivered', () => receiver().deliveredTo(id).length === 10, 30_000);
    expect(deliveries(id)).toEqual(events(id, 1, 10).map((event, index) => [event.event_id, index + 1]));
    expect(events(id, 3, 10).map((event) => receiver().attemptsOf(event.event_id).length)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    // The park ends with its last copy settled: the subscription is marked no more.
    await waitFor('the park ended', async () => (await stateOf(id)).parked_groups === 0);
    await waitFor('the group drained', async () => (await lagRowOf(stack(), group ?? ''))?.depth === undefined || (await lagRowOf(stack(), group ?? ''))?.depth === 0);
  });

  it('keeps order while events keep arriving through the resume: those caught ahead of the backlog coming back are sent back at once, not a minute later', async () => {
    const id = `${prefix}-d`;
    receiver().setSecret(id, await subscribe(stack().url, id, receiver().endpointFor(id)));
    expect((await pause(id)).status).toBe(200);
    await postEvents(stack().url, events(id, 1, 10));
    await waitFor('the backlog parked', async () => (await stateOf(id)).parked_groups === 1, 30_000);
    // The resume and twenty requests of two events each, one after another, racing it.
    const producing = (async () => {
      for (let from = 11; from <= 50; from += 2) await postEvents(stack().url, events(id, from, from + 1));
    })();
    expect((await resume(id)).status).toBe(200);
    await producing;
    // Well within the lag job's minute: nothing waits for it.
    await waitFor('all fifty delivered', () => receiver().deliveredTo(id).length === 50, 30_000);
    expect(deliveries(id)).toEqual(events(id, 1, 50).map((event, index) => [event.event_id, index + 1]));
    await waitFor('the park ended', async () => (await stateOf(id)).parked_groups === 0);
  });

  it('keeps each resource key in order when its subscription is ordered by resource, and leaves other subscriptions alone', async () => {
    const id = `${prefix}-b`;
    const other = `${prefix}-c`;
    const created = await call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: 'tenant-it', url: receiver().endpointFor(id), ordering: 'resource' });
    expect(created.status).toBe(201);
    receiver().setSecret(id, (created.body as { secret: string }).secret);
    receiver().setSecret(other, await subscribe(stack().url, other, receiver().endpointFor(other)));
    expect((await pause(id)).status).toBe(200);
    await postEvents(stack().url, [...events(id, 1, 3, 'r1'), ...events(id, 1, 2, 'r2')]);
    await waitFor('both keys parked', async () => (await stateOf(id)).parked_groups === 2, 30_000);
    await postEvents(stack().url, events(other, 1, 2));
    await waitFor('the other subscription delivered', () => receiver().deliveredTo(other).length === 2);
    await postEvents(stack().url, [...events(id, 4, 4, 'r1'), ...events(id, 3, 3, 'r2')]);
    expect(receiver().deliveredTo(id)).toEqual([]);
    expect((await resume(id)).status).toBe(200);
    await postEvents(stack().url, events(id, 5, 5, 'r1'));
    await waitFor('all eight delivered', () => receiver().deliveredTo(id).length === 8, 30_000);
    const byKey = (resource: string) => deliveries(id).filter(([webhookId]) => webhookId?.startsWith(`${id}-${resource}`) === true);
    expect(byKey('r1')).toEqual(events(id, 1, 5, 'r1').map((event, index) => [event.event_id, index + 1]));
    expect(byKey('r2')).toEqual(events(id, 1, 3, 'r2').map((event, index) => [event.event_id, index + 1]));
    await waitFor('both parks ended', async () => (await stateOf(id)).parked_groups === 0);
  });
});

/**
 * Event ids on the local stack are unique per tenant and destination (docs/api.md#events, docs/guarantees.md#event-ids-are-the-producers-per-tenant-and-destination): another
 * tenant's or another subscription's event with the same id is delivered as its own, and an id
 * sent again with another type or payload is refused whole with 409 `event_id_conflict`, nothing
 * of that request enqueued, while the same contents again are a `duplicate` delivered once.
 */
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('event ids scoped per tenant and destination on the local stack', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver();

  async function subscribed(label: string, tenant: string): Promise<string> {
    const id = uniquePrefix(label);
    receiver().setSecret(id, await subscribe(stack().url, id, receiver().endpointFor(id), tenant));
    return id;
  }

  it("delivers another tenant's event with the same event_id, and another subscription's of the same tenant", async () => {
    const eventId = uniquePrefix('order_1001');
    const [ta, tb] = [uniquePrefix('ta'), uniquePrefix('tb')];
    const subA = await subscribed('sub_a', ta);
    const subB = await subscribed('sub_b', tb);
    const subA2 = await subscribed('sub_a2', ta);
    expect(await postEvents(stack().url, [makeEvent(subA, eventId, ta)])).toMatchObject([{ event_id: eventId, status: 'accepted' }]);
    expect(await postEvents(stack().url, [makeEvent(subB, eventId, tb)])).toMatchObject([{ event_id: eventId, status: 'accepted' }]);
    expect(await postEvents(stack().url, [makeEvent(subA2, eventId, ta)])).toMatchObject([{ event_id: eventId, status: 'accepted' }]);
    for (const subscription of [subA, subB, subA2]) {
      await waitFor(`${subscription}'s event delivered`, () => receiver().deliveredTo(subscription).length === 1);
      expect(receiver().deliveredTo(subscription).map((attempt) => [attempt.webhookId, attempt.sequence])).toEqual([[eventId, 1]]);
    }
  });

  it('refuses an event_id sent again with another payload or type as 409 event_id_conflict, enqueuing nothing of the request', async () => {
    const tenant = uniquePrefix('tenant');
    const subscription = await subscribed('sub', tenant);
    const first = makeEvent(subscription, `${subscription}-1`, tenant);
    await postEvents(stack().url, [first]);
    await waitFor('the first event delivered', () => receiver().deliveredTo(subscription).length === 1);

    const bystander = makeEvent(subscription, `${subscription}-2`, tenant);
    for (const changed of [{ ...first, payload: { event: first.event_id, amount: 2 } }, { ...first, type: 'order.cancelled' }]) {
      const answer = await call(stack().url, 'POST', '/v1/events', { events: [bystander, changed] });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({
        error: {
          code: 'event_id_conflict',
          message: expect.any(String),
          details: [{ path: 'events[1].event_id', message: expect.stringContaining('another type or payload') }],
        },
      });
    }
    // Nothing of the refused requests was enqueued or recorded: the bystander is new when sent alone.
    expect(await stack().eventItem(bystander.event_id)).toBeUndefined();
    expect(await postEvents(stack().url, [first, bystander])).toMatchObject([{ status: 'duplicate' }, { status: 'accepted' }]);
    await waitFor('the bystander delivered', () => receiver().deliveredTo(subscription).length === 2);
    expect(receiver().deliveredTo(subscription).map((attempt) => attempt.webhookId)).toEqual([first.event_id, bystander.event_id]);
    await waitFor('the queue empty: no copy of a refused request left in it', async () => (await stack().queueDepth()) === 0);
  });
});

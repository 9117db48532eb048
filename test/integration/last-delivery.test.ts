/**
 * When a key last delivered, as the API shows it: a group's `last_delivered_at` (the lag view, one
 * group) and a subscription's, written by the consumer's own per-batch write, kept once drained,
 * and left alone by a batch that only gave up.
 */
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack last delivery', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('last');
  const refused = `${prefix}-s-2`;
  const { stack, receiver } = useStackAndReceiver({ MAX_DELIVERY_ATTEMPTS: '1' }, { respond: (webhook) => (webhook.webhookId === refused ? { statusCode: 500 } : undefined) });

  const lastOfSubscription = async (id: string): Promise<string | null> => ((await call(stack().url, 'GET', `/v1/subscriptions/${id}`)).body as { last_delivered_at: string | null }).last_delivered_at;
  const lastOfGroup = async (group: string): Promise<string | null> => ((await call(stack().url, 'GET', `/v1/groups/${group}`)).body as { group: { last_delivered_at: string | null } }).group.last_delivered_at;

  it('shows when the subscription’s key last delivered, and keeps it through a give-up and a drain', async () => {
    const id = `${prefix}-s`;
    receiver().setSecret(id, await subscribe(stack().url, id, receiver().endpointFor(id)));
    expect(await lastOfSubscription(id)).toBeNull();
    const before = Date.now();
    const [group = ''] = (await postEvents(stack().url, [makeEvent(id, `${prefix}-s-1`)])).map((result) => result.message_group_id);
    await waitFor('the first delivery', () => receiver().deliveredTo(id).length === 1);
    const first = await waitFor('the last delivery recorded', async () => (await lastOfSubscription(id)) ?? undefined);
    expect(Date.parse(first)).toBeGreaterThanOrEqual(before - 1000);
    expect(await lastOfGroup(group)).toBe(first);

    // Given up: not a delivery; the time stays the first one's.
    await postEvents(stack().url, [makeEvent(id, refused)]);
    await waitFor('the refused event dead-lettered', async () => JSON.stringify((await call(stack().url, 'GET', `/v1/dead-letters?subscription_id=${id}`)).body).includes(refused));
    expect(await lastOfSubscription(id)).toBe(first);
    await postEvents(stack().url, [makeEvent(id, `${prefix}-s-3`)]);
    await waitFor('the next delivery recorded', async () => (await lastOfSubscription(id)) !== first);
    expect(Date.parse((await lastOfSubscription(id)) ?? '')).toBeGreaterThan(Date.parse(first));
  });
});

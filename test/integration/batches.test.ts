/**
 * Ordered batches on the local stack (docs/api.md#batches): a subscription with `batch_size` above 1 gets
 * consecutive events of a key in one signed POST, in order; a poison event inside a batch costs
 * its batch-mates nothing, and only it is dead-lettered; its redrive comes alone, marked.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, uniquePrefix } from './support/api.js';
import { redriveUntilDone } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck, type Attempt } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** Creates a subscription that takes batches and returns its secret. */
async function subscribeWithBatches(baseUrl: string, subscriptionId: string, url: string, batchSize: number): Promise<string> {
  const answer = await call(baseUrl, 'PUT', `/v1/subscriptions/${encodeURIComponent(subscriptionId)}`, { tenant_id: 'tenant-it', url, batch_size: batchSize });
  if (answer.status !== 201) throw new Error(`PUT subscription answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return (answer.body as { secret: string }).secret;
}

/** Each POST's items as `<sequence>=<id>`, in arrival order. */
function itemsOf(attempts: readonly Attempt[]): string[][] {
  return attempts.map((attempt) => (attempt.items ?? []).map((item) => `${item.sequence}=${item.id}`));
}

describe('local stack ordered batches', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('batches');
  const poisonId = `${prefix}-p-2`;
  /** The first POST to each subscription is held a second, so that the events behind it queue up and travel together. */
  const held = new Set<string>();
  let isPoisonRefused = true;
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '1' },
    {
      respond: async (webhook) => {
        if (!held.has(webhook.path)) {
          held.add(webhook.path);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        const hasPoison = (webhook.items ?? []).some((item) => item.id === poisonId);
        return hasPoison && isPoisonRefused ? { statusCode: 500 } : undefined;
      },
    },
  );

  it('delivers a key’s events in order in POSTs of up to batch_size, each signed once over its items', async () => {
    const subscription = `${prefix}-ok`;
    const secret = await subscribeWithBatches(stack().url, subscription, receiver().endpointFor(subscription), 4);
    receiver().setSecret(subscription, secret);
    const events = [1, 2, 3, 4, 5, 6, 7].map((n) => makeEvent(subscription, `${prefix}-ok-${n}`));
    await postEvents(stack().url, events);

    await waitFor('all seven delivered', () => receiver().deliveredTo(subscription).flatMap((attempt) => attempt.items ?? []).length === 7);
    const posts = receiver().deliveredTo(subscription);
    expect(posts.flatMap((attempt) => attempt.items ?? []).map((item) => `${item.sequence}=${item.id}`)).toEqual(events.map((event, index) => `${index + 1}=${event.event_id}`));
    expect(posts.some((attempt) => (attempt.items?.length ?? 0) > 1)).toBe(true);
    expect(posts.every((attempt) => (attempt.items?.length ?? 0) <= 4)).toBe(true);
    expect(posts.every((attempt) => attempt.signature === SignatureCheck.verified && attempt.headers['webhook-sequence'] === undefined)).toBe(true);
    // A Standard Webhooks library verifies the batch as it stands, and its id names its events.
    const [first] = posts;
    expect(() => new Webhook(secret).verify(first?.body ?? '', first?.headers ?? {})).not.toThrow();
    expect(first?.webhookId).toMatch(/^batch_[0-9a-f]{32}$/);
    // The key each item's number counts for, in the header and, under the signature, in every item.
    expect(first?.headers['webhook-ordering-key']).toBe(subscription);
    const body = JSON.parse(first?.body ?? '{}') as { events: { ordering_key: string }[] };
    expect(body.events.every((item) => item.ordering_key === subscription)).toBe(true);
  });

  it('dead-letters only the event the receiver keeps refusing, delivers its batch-mates in order, and redrives it alone', async () => {
    const subscription = `${prefix}-p`;
    receiver().setSecret(subscription, await subscribeWithBatches(stack().url, subscription, receiver().endpointFor(subscription), 10));
    const events = [1, 2, 3, 4].map((n) => makeEvent(subscription, `${prefix}-p-${n}`));
    await postEvents(stack().url, events);

    await waitFor('the batch-mates delivered', () => receiver().deliveredTo(subscription).flatMap((attempt) => attempt.items ?? []).length === 3);
    expect(receiver().deliveredTo(subscription).flatMap((attempt) => attempt.items ?? []).map((item) => `${item.sequence}=${item.id}`)).toEqual([
      `1=${events[0]?.event_id}`,
      `3=${events[2]?.event_id}`,
      `4=${events[3]?.event_id}`,
    ]);
    // The poison event alone, as a one-item batch, exactly MAX_DELIVERY_ATTEMPTS times, with the number its batch gave it.
    const alone = receiver()
      .attempts()
      .filter((attempt) => attempt.items?.length === 1 && attempt.items[0]?.id === poisonId);
    expect(alone.map((attempt) => [attempt.statusCode, attempt.items?.[0]?.sequence])).toEqual([
      [500, 2],
      [500, 2],
    ]);
    const letters = await waitFor('the dead letter listed', async () => {
      const answer = await call(stack().url, 'GET', `/v1/dead-letters?subscription_id=${encodeURIComponent(subscription)}`);
      const items = (answer.body as { items: { event_id: string; sequence: number; attempts: number }[] }).items;
      return items.length > 0 ? items : undefined;
    });
    expect(letters.map((letter) => [letter.event_id, letter.sequence, letter.attempts])).toEqual([[poisonId, 2, 2]]);

    isPoisonRefused = false;
    await redriveUntilDone(stack(), subscription);
    const redelivered = await waitFor('the redrive delivered', () => receiver().deliveredTo(subscription).find((attempt) => attempt.items?.some((item) => item.id === poisonId)));
    expect(itemsOf([redelivered])).toEqual([[`2=${poisonId}`]]);
    expect(redelivered.items?.[0]?.isRedelivery).toBe(true);
  });
});

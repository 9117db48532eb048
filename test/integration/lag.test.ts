/**
 * The lag view on the local stack: a stalled group shows in `GET /v1/lag` with its depth, a
 * growing wait, the head's attempts and last error; it vanishes once drained. Its dead letter is
 * listed by `GET /v1/dead-letters` with its sequence. The view is read in pages by cursor.
 */
import { describe, expect, it } from 'vitest';
import type { LagRow } from '../../lambda/core/lag.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { lagRowOf } from './support/operator-api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack lag view', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('lag');
  let isRefusing = true;
  // Many attempts, 1 s apart: the head stays stuck for as long as the receiver refuses.
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '100', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    { respond: (webhook) => (isRefusing && (webhook.webhookId ?? '').startsWith(`${prefix}-stuck`) ? { statusCode: 503 } : undefined) },
  );

  const lag = async (): Promise<LagRow[]> => {
    const answer = await call(stack().url, 'GET', '/v1/lag');
    expect(answer.status).toBe(200);
    return (answer.body as { groups: LagRow[] }).groups;
  };

  it('shows a stalled group with growing wait, worst first, and drops it when drained', async () => {
    const stuck = `${prefix}-stuck`;
    const flowing = `${prefix}-flowing`;
    await subscribe(stack().url, stuck, receiver().endpointFor(stuck));
    await subscribe(stack().url, flowing, receiver().endpointFor(flowing));
    const [stuckGroup] = (await postEvents(stack().url, [1, 2, 3].map((n) => makeEvent(stuck, `${stuck}-${n}`)))).map((r) => r.message_group_id);
    await postEvents(stack().url, [1, 2].map((n) => makeEvent(flowing, `${flowing}-${n}`)));

    const first = await waitFor('the stuck group in the lag view after two failed attempts', async () =>
      (await lag()).find((row) => row.message_group_id === stuckGroup && row.head_attempts >= 2),
    );
    expect(first).toMatchObject({ depth: 3, keys_affected: 1, last_error: 'HTTP 503', dead_lettered: 0, ordering_key: stuck });
    // Worst first: the stuck group heads the view.
    expect((await lag())[0]?.message_group_id).toBe(stuckGroup);
    await waitFor('the flowing key delivered and gone from the view', async () =>
      receiver().deliveredTo(flowing).length === 2 && (await lag()).every((row) => !row.message_group_id.startsWith(flowing)),
    );

    const later = await waitFor('the wait and the attempts to grow', async () =>
      (await lag()).find(
        (row) => row.message_group_id === stuckGroup && row.oldest_wait_seconds > first.oldest_wait_seconds && row.head_attempts > first.head_attempts,
      ),
    );
    expect(later).toMatchObject({ depth: 3, last_error: 'HTTP 503' });

    isRefusing = false;
    await waitFor('the stuck key delivered', () => receiver().deliveredTo(stuck).length === 3);
    await waitFor('the drained group gone from the view', async () => (await lag()).every((row) => row.message_group_id !== stuckGroup));
  });
});

describe('local stack dead letters view', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('dl');
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2' },
    { respond: (webhook) => (webhook.webhookId === `${prefix}-sub-2` ? { statusCode: 500 } : undefined) },
  );

  it('lists a subscription’s dead letters with their sequence, and shows them in the lag view', async () => {
    const subscription = `${prefix}-sub`;
    await subscribe(stack().url, subscription, receiver().endpointFor(subscription));
    const [group] = (await postEvents(stack().url, [1, 2, 3].map((n) => makeEvent(subscription, `${subscription}-${n}`)))).map((r) => r.message_group_id);
    await waitFor('the rest of the key delivered', () => receiver().deliveredTo(subscription).length === 2);

    const answer = await waitFor('the dead letter listed', async () => {
      const listed = await call(stack().url, 'GET', `/v1/dead-letters?subscription_id=${encodeURIComponent(subscription)}`);
      return (listed.body as { items: unknown[] }).items.length === 1 ? listed : undefined;
    });
    expect(answer.status).toBe(200);
    expect((answer.body as { items: unknown[] }).items).toEqual([
      {
        event_id: `${subscription}-2`,
        subscription_id: subscription,
        message_group_id: group,
        sequence: 2,
        attempts: 2,
        reason: '2 of 2 attempts failed; last: HTTP 500',
        dead_lettered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    // The lag is written once per group per invocation, after the dead letter is listed: poll for it.
    const row = await waitFor('the group in the lag view for its dead letter, drained', async () => {
      const found = await lagRowOf(stack(), group ?? '');
      return found?.depth === 0 ? found : undefined;
    });
    expect(row).toMatchObject({ depth: 0, dead_lettered: 1, oldest_wait_seconds: 0, ordering_key: subscription });
  });

  it('refuses a request without subscription_id, and lists nothing for an unknown one', async () => {
    const missing = await call(stack().url, 'GET', '/v1/dead-letters');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'subscription_id' }] } });
    const unknown = await call(stack().url, 'GET', `/v1/dead-letters?subscription_id=${prefix}-nobody`);
    expect(unknown).toMatchObject({ status: 200, body: { items: [] } });
  });
});

describe('local stack lag view in pages', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('lag-pages');
  /** Subscription i gets i events, all dead-lettered: rows that hold still while the test pages. */
  const subscriptions = [1, 2, 3, 4, 5].map((n) => ({ id: `${prefix}-sub-${n}`, events: n }));
  const { stack, receiver } = useStackAndReceiver({ MAX_DELIVERY_ATTEMPTS: '1' }, { respond: () => ({ statusCode: 500 }) });

  interface LagPage {
    readonly groups: LagRow[];
    readonly next_cursor: string | null;
  }

  async function lagPage(query: string): Promise<LagPage> {
    const answer = await call(stack().url, 'GET', `/v1/lag?${query}`);
    expect(answer.status).toBe(200);
    return answer.body as LagPage;
  }

  it('pages through the groups two at a time, worst first, each exactly once', async () => {
    const groupOf = new Map<string, string>();
    for (const subscription of subscriptions) {
      await subscribe(stack().url, subscription.id, receiver().endpointFor(subscription.id));
      const events = Array.from({ length: subscription.events }, (_, n) => makeEvent(subscription.id, `${subscription.id}-${n + 1}`));
      const [result] = await postEvents(stack().url, events);
      groupOf.set(subscription.id, result?.message_group_id ?? '');
    }
    const worstFirst = [...subscriptions].reverse().map((subscription) => groupOf.get(subscription.id));

    const whole = await waitFor('every event dead-lettered', async () => {
      const page = await lagPage('limit=1000');
      const isSettled = subscriptions.every((subscription) =>
        page.groups.some((row) => row.message_group_id === groupOf.get(subscription.id) && row.depth === 0 && row.dead_lettered === subscription.events),
      );
      return isSettled ? page : undefined;
    });
    expect(whole.next_cursor).toBeNull();
    expect(whole.groups.map((row) => row.message_group_id)).toEqual(worstFirst);

    const pages = [await lagPage('limit=2')];
    let cursor = pages[0]?.next_cursor ?? null;
    // Bounded, so that a cursor that never ends fails the count below instead of hanging.
    while (cursor !== null && pages.length <= subscriptions.length) {
      const page = await lagPage(`limit=2&cursor=${encodeURIComponent(cursor)}`);
      pages.push(page);
      cursor = page.next_cursor;
    }
    expect(pages.map((page) => page.groups.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((page) => page.groups)).toEqual(whole.groups);
  });

  it('refuses a bad limit or cursor with 400 invalid_request', async () => {
    const badLimit = await call(stack().url, 'GET', '/v1/lag?limit=0');
    expect(badLimit).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', details: [{ path: 'limit' }] } } });
    const badCursor = await call(stack().url, 'GET', '/v1/lag?cursor=eyJub3QiOiJvdXJzIn0');
    expect(badCursor).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', details: [{ path: 'cursor' }] } } });
  });
});

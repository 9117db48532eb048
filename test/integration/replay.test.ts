/**
 * Replay of a window of a subscription's events on the local stack: exactly the events accepted
 * in the window and delivered are sent again, each key's in its original order, with their
 * original `webhook-id` and `webhook-sequence`, marked `webhook-redelivery: true`, signed (checked
 * with `standardwebhooks` by the receiver); events delivered alone and in runs (a pack's events,
 * numbered together) alike; a dead letter of the window is left to redrive; live events sent
 * meanwhile follow in order with new numbers.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, uniquePrefix, type TestEvent } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

interface ReplayState {
  readonly subscription_id: string;
  readonly since: string;
  readonly until: string;
  readonly started_at: string;
  readonly reached: string | null;
  readonly replayed: number;
  readonly dead_lettered: number;
  readonly not_delivered: number;
  readonly is_done: boolean;
}

/** A moment strictly between two acceptances: the clock moves on by a few milliseconds. */
async function aMomentLater(): Promise<string> {
  const before = Date.now();
  await waitFor('the clock to move', () => Date.now() > before + 5);
  return new Date().toISOString();
}

describe('local stack: replay a window of a subscription', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('replay');
  /** Event ids the receiver refuses with 500 while listed. */
  const refusing = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '1' },
    { respond: (webhook) => (refusing.has(webhook.webhookId ?? '') ? { statusCode: 500 } : undefined) },
  );
  const replay = async (id: string, body: unknown) => call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/replay`, body);
  const subscribed = async (id: string, body: Record<string, unknown> = {}): Promise<void> => {
    const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: 'tenant-it', url: receiver().endpointFor(id), ...body });
    expect(answer.status).toBe(201);
    receiver().setSecret(id, (answer.body as { secret: string }).secret);
  };
  const events = (id: string, from: number, to: number, resource?: string): TestEvent[] =>
    Array.from({ length: to - from + 1 }, (_, index) => ({ ...makeEvent(id, `${id}-${resource ?? ''}${from + index}`), ...(resource === undefined ? {} : { resource_id: resource }) }));
  /** Each delivery to a subscription in arrival order: id, sequence, redelivery; every signature checked. */
  const deliveries = (id: string) =>
    receiver()
      .deliveredTo(id)
      .map((attempt) => {
        expect(attempt.signature).toBe(SignatureCheck.verified);
        return { id: attempt.webhookId, sequence: attempt.sequence, isRedelivery: attempt.headers['webhook-redelivery'] === 'true' };
      });
  /** Steps the replay until it is done, as the CLI does. */
  const replayToTheEnd = async (id: string, body: unknown): Promise<ReplayState> =>
    waitFor('the replay done', async () => {
      const answer = await replay(id, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const state = answer.body as ReplayState;
      return state.is_done ? state : undefined;
    });

  it('sends exactly the window again, in order, with the same ids and numbers, marked as redeliveries; events delivered alone and in packs alike', async () => {
    const id = `${prefix}-a`;
    await subscribed(id);
    // Before the window: two alone.
    await postEvents(stack().url, events(id, 1, 1));
    await postEvents(stack().url, events(id, 2, 2));
    await waitFor('the first two delivered', () => receiver().deliveredTo(id).length === 2);
    const since = await aMomentLater();
    // In the window: one alone, then a pack of four (one message, delivered as a run), then one alone.
    await postEvents(stack().url, events(id, 3, 3));
    await postEvents(stack().url, events(id, 4, 7));
    await postEvents(stack().url, events(id, 8, 8));
    await waitFor('the window delivered', () => receiver().deliveredTo(id).length === 8);
    const until = await aMomentLater();
    await postEvents(stack().url, events(id, 9, 10));
    await waitFor('the last two delivered', () => receiver().deliveredTo(id).length === 10);
    const original = deliveries(id);
    expect(original.map((delivery) => delivery.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    const done = await replayToTheEnd(id, { since, until });
    expect(done).toMatchObject({ subscription_id: id, since, until, replayed: 6, dead_lettered: 0, not_delivered: 0, reached: until, is_done: true });
    await waitFor('the replayed events delivered', () => receiver().deliveredTo(id).length === 16);
    expect(deliveries(id).slice(10)).toEqual(original.slice(2, 8).map((delivery) => ({ ...delivery, isRedelivery: true })));

    // Live events after the replay take the key's next numbers, as if nothing was replayed.
    await postEvents(stack().url, events(id, 11, 11));
    await waitFor('the next live event delivered', () => receiver().deliveredTo(id).length === 17);
    expect(deliveries(id).at(-1)).toEqual({ id: `${id}-11`, sequence: 11, isRedelivery: false });
    // The same window again (its answer lost, say) answers the replay that ended, sending nothing;
    // `since` alone (until now) is a new window, and replays it all again.
    expect((await replay(id, { since, until })).body).toEqual(done);
    expect((await replayToTheEnd(id, { since })).replayed).toBe(9);
    await waitFor('the second replay delivered', () => receiver().deliveredTo(id).length === 26);
    expect(deliveries(id).slice(17).map((delivery) => delivery.sequence)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it('replays each key of a subscription ordered by resource in its own order, leaves a dead letter of the window to redrive, and keeps live events behind', async () => {
    const id = `${prefix}-r`;
    await subscribed(id, { ordering: 'resource' });
    const since = await aMomentLater();
    refusing.add(`${id}-x2`);
    await postEvents(stack().url, [...events(id, 1, 3, 'x'), ...events(id, 1, 2, 'y')]);
    await waitFor('each key delivered or given up', () => receiver().deliveredTo(id).length === 4 && receiver().attemptsOf(`${id}-x2`).length === 2);
    const until = await aMomentLater();
    const before = deliveries(id);

    const first = await replay(id, { since, until });
    expect(first.status).toBe(200);
    // Live events sent while the replay is under way.
    await postEvents(stack().url, [...events(id, 4, 4, 'x'), ...events(id, 3, 3, 'y')]);
    const done = (first.body as ReplayState).is_done ? (first.body as ReplayState) : await replayToTheEnd(id, { since });
    expect(done).toMatchObject({ replayed: 4, dead_lettered: 1, not_delivered: 0 });
    await waitFor('replays and live events delivered', () => receiver().deliveredTo(id).length === 10);
    const after = deliveries(id).slice(before.length);
    const ofKey = (list: typeof after, key: string) => list.filter((delivery) => delivery.id?.startsWith(`${id}-${key}`) === true);
    // Each key: its replayed events in their order, then its live one with the next number.
    expect(ofKey(after, 'x')).toEqual([
      ...ofKey(before, 'x').map((delivery) => ({ ...delivery, isRedelivery: true })),
      { id: `${id}-x4`, sequence: 4, isRedelivery: false },
    ]);
    expect(ofKey(after, 'y')).toEqual([
      ...ofKey(before, 'y').map((delivery) => ({ ...delivery, isRedelivery: true })),
      { id: `${id}-y3`, sequence: 3, isRedelivery: false },
    ]);
    expect(receiver().attemptsOf(`${id}-x2`)).toHaveLength(2);
  });

  it('refuses bad windows and unknown subscriptions, sending nothing, then replays the window', async () => {
    const id = `${prefix}-c`;
    await subscribed(id);
    const since = await aMomentLater();
    await postEvents(stack().url, events(id, 1, 2));
    await waitFor('both delivered', () => receiver().deliveredTo(id).length === 2);
    const until = await aMomentLater();

    const bad = async (body: unknown, path: string) => {
      const answer = await replay(id, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ error: { code: 'invalid_request', details: [{ path }] } });
    };
    await bad({ since: until, until: since }, 'since');
    await bad({ since, until: new Date(Date.now() + 3_600_000).toISOString() }, 'until');
    await bad({ since: new Date(Date.now() - 8 * 86_400_000).toISOString() }, 'since');
    expect((await replay(`${id}-none`, { since })).status).toBe(404);
    expect(deliveries(id)).toHaveLength(2);

    const done = await replayToTheEnd(id, { since, until });
    expect(done.replayed).toBe(2);
    await waitFor('both replayed', () => receiver().deliveredTo(id).length === 4);
  });

  it('is stepped to its end by the lag job when its caller went away', async () => {
    const id = `${prefix}-l`;
    await subscribed(id);
    const since = await aMomentLater();
    await postEvents(stack().url, events(id, 1, 3));
    await waitFor('the three delivered', () => receiver().deliveredTo(id).length === 3);
    const until = await aMomentLater();
    // A replay its caller left after starting it (the state a step that died before its first page leaves).
    await stack().clients.dynamo.send(
      new UpdateCommand({
        TableName: stack().resources.subscriptionsTable,
        Key: { subscription_id: id },
        UpdateExpression: 'SET #replay = :replay, replay_shard = :shard',
        ExpressionAttributeNames: { '#replay': 'replay' },
        ExpressionAttributeValues: { ':replay': { since, until, started_at: until, replayed: 0, dead_lettered: 0, not_delivered: 0 }, ':shard': 'replays' },
      }),
    );
    await stack().runLagJob();
    await waitFor('the three replayed', () => receiver().deliveredTo(id).length === 6);
    expect(deliveries(id).slice(3)).toEqual(deliveries(id).slice(0, 3).map((delivery) => ({ ...delivery, isRedelivery: true })));
    // Ended: the same window answers it done, and the subscription shows it.
    expect((await replay(id, { since, until })).body).toMatchObject({ replayed: 3, is_done: true, started_at: until });
    expect((await call(stack().url, 'GET', `/v1/subscriptions/${id}`)).body).toMatchObject({ replay: null, last_replay: { since, until, started_at: until, replayed: 3, reached: until, cancelled_at: null } });
  });
});


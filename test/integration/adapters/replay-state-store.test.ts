/**
 * A replay's state on its subscription's item, on dynalite: one replay at a time, one step at a
 * time (the lease), and nothing changed by a step of a replay that ended or was replaced.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReplayStateStore } from '../../../lambda/adapters/replay-state-store.js';
import { createSubscriptionStore } from '../../../lambda/adapters/subscription-store.js';
import type { ReplayState, ReplayStateStore } from '../../../lambda/core/replay.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;
let store: ReplayStateStore;

const AT = '2026-12-04T12:00:00.000Z';
const state = (input: Partial<ReplayState> = {}): ReplayState => ({ since: '2026-12-04T10:00:00.000Z', until: '2026-12-04T11:00:00.000Z', startedAt: AT, replayed: 0, deadLettered: 0, notDelivered: 0, ...input });

let count = 0;
/** A window named whole: a request repeated after the answer that ended its replay answers that one. */
const GIVEN = { isUntilGiven: true };

async function subscription(): Promise<string> {
  count += 1;
  const id = `sub-replay-${process.pid}-${count}`;
  await createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName).put({ subscription_id: id, tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', now: AT });
  return id;
}

beforeAll(async () => {
  tables = await startDynaliteTables();
  store = createReplayStateStore(tables.dynamo, TABLES.subscriptions.localName);
});

afterAll(async () => {
  await tables.stop();
});

describe('replay state store', () => {
  it('starts one replay at a time, answering the one under way, and none for an unknown subscription', async () => {
    const id = await subscription();
    const first = state({ leaseUntil: '2026-12-04T12:01:00.000Z' });
    expect(await store.start(id, first, GIVEN)).toEqual({ state: first, isNew: true });
    expect(await store.start(id, state({ since: '2026-12-04T09:00:00.000Z', startedAt: '2026-12-04T12:00:05.000Z' }), GIVEN)).toEqual({ state: first, isNew: false });
    expect(await store.start(`${id}-none`, first, GIVEN)).toBeUndefined();
  });

  it('lets one step hold a replay at a time, saves its progress, and ends it, keeping the last', async () => {
    const id = await subscription();
    await store.start(id, state(), GIVEN);
    const claim = (now: string) => store.claim({ subscriptionId: id, startedAt: AT, now, leaseUntil: '2026-12-04T12:01:00.000Z' });
    expect(await claim('2026-12-04T12:00:00.000Z')).toEqual(state({ leaseUntil: '2026-12-04T12:01:00.000Z' }));
    expect(await claim('2026-12-04T12:00:30.000Z')).toBeUndefined();
    await store.save(id, state({ after: '!event#x', reached: '2026-12-04T10:30:00.000Z', replayed: 100 }));
    expect(await claim('2026-12-04T12:00:31.000Z')).toEqual(state({ after: '!event#x', reached: '2026-12-04T10:30:00.000Z', replayed: 100, leaseUntil: '2026-12-04T12:01:00.000Z' }));
    // A step of another replay changes nothing.
    await store.save(id, state({ startedAt: '2026-12-04T11:00:00.000Z', replayed: 5 }));
    await store.finish(id, state({ startedAt: '2026-12-04T11:00:00.000Z', replayed: 5 }));
    await store.finish(id, state({ replayed: 120 }));
    // The window of the one that ended answers it, done; another window starts.
    expect(await store.start(id, state({ startedAt: '2026-12-04T12:04:00.000Z' }), GIVEN)).toEqual({ state: state({ replayed: 120 }), isNew: false, isDone: true });
    const next = state({ startedAt: '2026-12-04T12:05:00.000Z', until: '2026-12-04T11:30:00.000Z' });
    expect(await store.start(id, next, GIVEN)).toEqual({ state: next, isNew: true });
    const { Item } = await tables.dynamo.send(new GetCommand({ TableName: TABLES.subscriptions.localName, Key: { [TABLES.subscriptions.partitionKey]: id }, ConsistentRead: true }));
    expect(Item).toMatchObject({ last_replay: { replayed: 120, started_at: AT }, replay: { started_at: next.startedAt } });
  });

  it('starts a new replay of a window that ends by default even when the last one ended at the same moment', async () => {
    const id = await subscription();
    await store.start(id, state(), { isUntilGiven: false });
    await store.finish(id, state({ replayed: 4 }));
    const again = state({ startedAt: '2026-12-04T12:04:00.000Z' });
    expect(await store.start(id, again, { isUntilGiven: false })).toEqual({ state: again, isNew: true });
    // Still one at a time.
    expect(await store.start(id, state({ startedAt: '2026-12-04T12:05:00.000Z' }), { isUntilGiven: false })).toEqual({ state: again, isNew: false });
  });

  it('cancels the replay under way, keeping it marked cancelled, after which its window may be replayed again', async () => {
    const id = await subscription();
    expect(await store.cancel(id, AT)).toEqual({ isCancelled: false });
    expect(await store.cancel(`${id}-none`, AT)).toBeUndefined();
    await store.start(id, state({ leaseUntil: '2026-12-04T12:01:00.000Z', replayed: 3 }), GIVEN);
    expect(await store.cancel(id, '2026-12-04T12:00:10.000Z')).toEqual({ isCancelled: true, state: state({ replayed: 3, cancelledAt: '2026-12-04T12:00:10.000Z' }) });
    // A step of the cancelled replay changes nothing.
    await store.save(id, state({ replayed: 9 }));
    expect(await store.claim({ subscriptionId: id, startedAt: AT, now: AT, leaseUntil: AT })).toBeUndefined();
    const again = state({ startedAt: '2026-12-04T12:02:00.000Z' });
    expect(await store.start(id, again, GIVEN)).toEqual({ state: again, isNew: true });
  });
});


import { describe, expect, it } from 'vitest';
import type { GroupLag } from '../../../lambda/core/lag.js';
import {
  checkOrderingChangeHold,
  isHeldForOrderingChange,
  nextOrderingChangeStep,
  ORDERING_CHANGE_HOLD_SECONDS,
  ORDERING_CHANGE_WAIT_SECONDS,
  ORDERING_CHANGE_WINDOW_SECONDS,
  orderingChangeUnderWay,
  pendingOfSubscription,
  refuseOrderingChange,
} from '../../../lambda/core/ordering-change.js';
import { PAUSE_GRACE_SECONDS } from '../../../lambda/core/routing-settings.js';
import { Ordering, partitionKey } from '../../../lambda/core/routing.js';
import { groupLag } from '../../support/group-lag.js';

const group = (overrides: Partial<GroupLag>): GroupLag => groupLag({ orderingKeys: [], ...overrides });

const resourceKey = (subscriptionId: string, resourceId: string) => partitionKey({ subscription_id: subscriptionId, resource_id: resourceId }, Ordering.resource);

describe('pendingOfSubscription', () => {
  it.each([
    ['its own per-key group with events', group({ orderingKey: 'sub_1', depth: 3 }), 3],
    ['a per-key group of one of its resources', group({ orderingKey: resourceKey('sub_1', 'r1'), depth: 2 }), 2],
    ['a per-key group whose count drifted to 0 with a failing head', group({ orderingKey: 'sub_1', depth: 0, headFailingSince: '2026-12-02T12:09:30.000Z' }), 0],
    ['a per-key group held for its pause, its count drifted to 0', group({ orderingKey: 'sub_1', depth: 0, hold: { subscriptionId: 'sub_1', receiptHandle: 'r', pausedAt: '2026-12-02T12:00:00.000Z', reason: 'maintenance', heldAt: '2026-12-02T12:00:01.000Z', until: '2026-12-02T23:00:00.000Z' } }), 0],
    ['a per-key group whose backlog is parked, its count 0', group({ orderingKey: 'sub_1', depth: 0, parkedSubscriptions: { sub_1: 'park-1' } }), 0],
    ['a partition whose count drifted to 0, held for another subscription’s pause, naming its key', group({ messageGroupId: 'partition-1', depth: 0, orderingKeys: ['sub_2', 'sub_1'], hold: { subscriptionId: 'sub_2', receiptHandle: 'r', pausedAt: '2026-12-02T12:00:00.000Z', reason: '', heldAt: '2026-12-02T12:00:01.000Z', until: '2026-12-02T23:00:00.000Z' } }), 0],
    ['a partition naming its key among others', group({ messageGroupId: 'partition-1', depth: 5, orderingKeys: ['sub_2', 'sub_1'], keysAffected: 2 }), 5],
    ['a partition naming one of its resource keys', group({ messageGroupId: 'partition-1', depth: 4, orderingKeys: [resourceKey('sub_1', 'r9')] }), 4],
    ['a partition with more keys than it tracks (it names none)', group({ messageGroupId: 'partition-1', depth: 7, orderingKeys: undefined, keysAffected: 1000 }), 7],
  ])('counts %s', (_what, active, events) => {
    expect(pendingOfSubscription([active], 'sub_1')).toMatchObject({ events, groups: [active] });
  });

  it.each([
    ['another subscription’s group', group({ orderingKey: 'sub_2', depth: 3 })],
    ['another subscription’s resource, whose id is this subscription’s', group({ orderingKey: resourceKey('sub_2', 'sub_1'), depth: 3 })],
    ['a subscription whose id reads like one of its resource keys', group({ orderingKey: '["sub_1","r1"]', depth: 3 })],
    ['its group with only dead letters', group({ orderingKey: 'sub_1', depth: 0, deadLettered: 2 })],
    ['a partition of other keys', group({ messageGroupId: 'partition-1', depth: 5, orderingKeys: ['sub_2', 'sub_3'] })],
  ])('leaves out %s', (_what, active) => {
    expect(pendingOfSubscription([active], 'sub_1')).toEqual({ events: 0, groups: [], isShared: false });
  });

  it('lists the deepest group first and says when a partition shares its count', () => {
    const shallow = group({ messageGroupId: 'a', orderingKey: resourceKey('sub_1', 'r1'), depth: 1 });
    const deep = group({ messageGroupId: 'partition-2', depth: 9, orderingKeys: ['sub_1'] });
    expect(pendingOfSubscription([shallow, deep], 'sub_1')).toEqual({ events: 10, groups: [deep, shallow], isShared: true });
  });
});

describe('refuseOrderingChange', () => {
  const pending = pendingOfSubscription(
    Array.from({ length: 12 }, (_, i) => group({ messageGroupId: `g${String(i).padStart(2, '0')}`, orderingKey: resourceKey('sub_1', `r${i}`), depth: 12 - i })),
    'sub_1',
  );

  it('allows a change when nothing is pending', () => {
    expect(refuseOrderingChange({ from: Ordering.subscription, to: Ordering.resource, pending: pendingOfSubscription([], 'sub_1') })).toBeUndefined();
  });

  it('allows keeping the same ordering whatever is pending', () => {
    expect(refuseOrderingChange({ from: Ordering.resource, to: Ordering.resource, pending })).toBeUndefined();
  });

  it('refuses a change with ordering_change_pending, naming the count and the first ten groups', () => {
    const refusal = refuseOrderingChange({ from: Ordering.resource, to: Ordering.subscription, pending });
    expect(refusal?.code).toBe('ordering_change_pending');
    expect(refusal?.message).toContain('78 pending events in 12 message groups');
    expect(refusal?.details?.[0]).toEqual({ path: 'ordering', message: '78 pending events in 12 message groups' });
    expect(refusal?.details?.slice(1, 11).map((detail) => detail.message)).toEqual(Array.from({ length: 10 }, (_, i) => `message group g${String(i).padStart(2, '0')}: ${12 - i} pending`));
    expect(refusal?.details?.at(-1)).toEqual({ path: 'ordering', message: 'and 2 more message groups' });
  });

  it('says "up to" when a partition’s count includes other keys', () => {
    const shared = pendingOfSubscription([group({ messageGroupId: 'partition-0', depth: 1, orderingKeys: ['sub_1', 'sub_2'] })], 'sub_1');
    const refusal = refuseOrderingChange({ from: Ordering.subscription, to: Ordering.resource, pending: shared });
    expect(refusal?.details).toEqual([
      { path: 'ordering', message: 'up to 1 pending event in 1 message group' },
      { path: 'ordering', message: 'message group partition-0: 1 pending (a partition: other keys included)' },
    ]);
  });
});

describe('a change of ordering in two steps', () => {
  const startedAt = '2026-12-08T10:00:00.000Z';
  const mark = { ordering: Ordering.resource, startedAt };
  const at = (seconds: number) => new Date(Date.parse(startedAt) + seconds * 1000);

  it('waits longer than a request that read the old ordering may take, and holds events past the window by a margin for clocks', () => {
    expect(ORDERING_CHANGE_WAIT_SECONDS).toBeGreaterThan(PAUSE_GRACE_SECONDS);
    expect(ORDERING_CHANGE_WINDOW_SECONDS).toBeGreaterThan(ORDERING_CHANGE_WAIT_SECONDS);
    expect(ORDERING_CHANGE_HOLD_SECONDS - ORDERING_CHANGE_WINDOW_SECONDS).toBeGreaterThanOrEqual(60);
  });

  it.each([
    ['no mark', undefined, 0, { kind: 'begin' }],
    ['a mark for the other ordering', { ordering: Ordering.subscription, startedAt }, 70, { kind: 'begin' }],
    ['a fresh mark', mark, 10, { kind: 'wait', mark, retryAfterSeconds: 50 }],
    ['a mark from a clock ahead of this one', mark, -5, { kind: 'wait', mark, retryAfterSeconds: 65 }],
    ['a mark a fraction of a second short of the wait', mark, 59.5, { kind: 'wait', mark, retryAfterSeconds: 1 }],
    ['a mark exactly the wait old', mark, 60, { kind: 'make', mark }],
    ['a mark inside the window', mark, ORDERING_CHANGE_WINDOW_SECONDS - 1, { kind: 'make', mark }],
    ['a mark past the window', mark, ORDERING_CHANGE_WINDOW_SECONDS, { kind: 'begin' }],
  ])('%s: %o', (_what, found, seconds, step) => {
    expect(nextOrderingChangeStep({ mark: found, to: Ordering.resource, now: at(seconds), waitSeconds: 60 })).toEqual(step);
  });

  it('holds the subscription’s events from the mark until the hold is over, by the reader’s clock', () => {
    expect(isHeldForOrderingChange(undefined, at(0))).toBe(false);
    expect(isHeldForOrderingChange(mark, at(-30))).toBe(true);
    expect(isHeldForOrderingChange(mark, at(ORDERING_CHANGE_HOLD_SECONDS - 1))).toBe(true);
    expect(isHeldForOrderingChange(mark, at(ORDERING_CHANGE_HOLD_SECONDS))).toBe(false);
  });

  it('refuses a replay or a redrive with ingest_paused while the change holds the subscription', () => {
    expect(checkOrderingChangeHold(mark, at(100), 'redrive')).toMatchObject({ code: 'ingest_paused', message: expect.stringContaining('redrive after the change') });
    expect(checkOrderingChangeHold(mark, at(ORDERING_CHANGE_HOLD_SECONDS), 'replay')).toBeUndefined();
    expect(checkOrderingChangeHold(undefined, at(0), 'replay')).toBeUndefined();
  });

  it('answers a PUT that comes too early as ordering_change_pending naming the mark and the seconds left', () => {
    expect(orderingChangeUnderWay({ from: Ordering.subscription, mark, retryAfterSeconds: 12 })).toMatchObject({
      code: 'ordering_change_pending',
      message: expect.stringContaining(`began at ${startedAt}`),
      details: [{ path: 'ordering', message: `change to "resource" under way since ${startedAt}` }],
    });
    expect(orderingChangeUnderWay({ from: Ordering.subscription, mark, retryAfterSeconds: 12 }).message).toContain('after 12 s');
  });
});

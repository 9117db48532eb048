import { describe, expect, it } from 'vitest';
import { checkSwitch, hasPendingWork, PAUSE_GRACE_SECONDS, SWITCH_WAIT_SECONDS, type PendingWork, type RoutingSettings } from '../../../lambda/core/routing-settings.js';

const now = new Date('2026-12-02T12:10:00.000Z');
const idle: PendingWork = { queued: 0, inFlight: 0, delayed: 0, groupsWithPending: 0 };
const pausedLongAgo: RoutingSettings = { version: 2, partitionCount: 16, isPaused: true, pausedAt: '2026-12-02T12:00:00.000Z' };

describe('checkSwitch', () => {
  it('waits past the pause grace for SQS\'s counters to settle: a minute after the last request could enqueue', () => {
    // SQS API Reference, GetQueueAttributes: the approximate counts "may not achieve consistency until at least 1 minute after the producers stop sending".
    expect(SWITCH_WAIT_SECONDS).toBeGreaterThanOrEqual(PAUSE_GRACE_SECONDS + 60);
    const pausedAgo = (seconds: number): RoutingSettings => ({ ...pausedLongAgo, pausedAt: new Date(now.getTime() - seconds * 1000).toISOString() });
    expect(checkSwitch({ current: pausedAgo(PAUSE_GRACE_SECONDS + 59), expectedVersion: 2, pending: idle, now, pauseGraceSeconds: SWITCH_WAIT_SECONDS })).toBe('pause_too_recent');
    expect(checkSwitch({ current: pausedAgo(SWITCH_WAIT_SECONDS), expectedVersion: 2, pending: idle, now, pauseGraceSeconds: SWITCH_WAIT_SECONDS })).toBeUndefined();
  });

  it('allows a switch when paused long enough, with nothing pending, at the expected version', () => {
    expect(checkSwitch({ current: pausedLongAgo, expectedVersion: 2, pending: idle, now, pauseGraceSeconds: PAUSE_GRACE_SECONDS })).toBeUndefined();
  });

  it.each([
    { name: 'a stale version', current: pausedLongAgo, expectedVersion: 1, pending: idle, refusal: 'version_conflict' },
    { name: 'ingest running', current: { ...pausedLongAgo, isPaused: false, pausedAt: undefined }, expectedVersion: 2, pending: idle, refusal: 'not_paused' },
    { name: 'a fresh pause', current: { ...pausedLongAgo, pausedAt: new Date(now.getTime() - (PAUSE_GRACE_SECONDS - 1) * 1000).toISOString() }, expectedVersion: 2, pending: idle, refusal: 'pause_too_recent' },
    { name: 'a message in flight', current: pausedLongAgo, expectedVersion: 2, pending: { ...idle, inFlight: 1 }, refusal: 'queue_not_empty' },
    { name: 'a delayed message', current: pausedLongAgo, expectedVersion: 2, pending: { ...idle, delayed: 1 }, refusal: 'queue_not_empty' },
    { name: 'a group with pending events', current: pausedLongAgo, expectedVersion: 2, pending: { ...idle, groupsWithPending: 1 }, refusal: 'queue_not_empty' },
  ])('refuses with $refusal on $name', ({ current, expectedVersion, pending, refusal }) => {
    expect(checkSwitch({ current, expectedVersion, pending, now, pauseGraceSeconds: PAUSE_GRACE_SECONDS })).toBe(refusal);
  });

  it('waits the grace it is given after the pause', () => {
    const pausedTwoSecondsAgo = { ...pausedLongAgo, pausedAt: new Date(now.getTime() - 2_000).toISOString() };
    expect(checkSwitch({ current: pausedTwoSecondsAgo, expectedVersion: 2, pending: idle, now, pauseGraceSeconds: 3 })).toBe('pause_too_recent');
    expect(checkSwitch({ current: pausedTwoSecondsAgo, expectedVersion: 2, pending: idle, now, pauseGraceSeconds: 2 })).toBeUndefined();
  });

  it('counts every kind of pending work', () => {
    expect(hasPendingWork(idle)).toBe(false);
    expect(hasPendingWork({ ...idle, queued: 1 })).toBe(true);
  });
});

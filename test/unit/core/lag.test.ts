import { describe, expect, it } from 'vitest';
import { summarizeGroup } from '../../../lambda/core/consumer-batch.js';
import { OutcomeKind } from '../../../lambda/core/delivery.js';
import { ALL_LAG_SHARDS, hasProgress, HeadState, lagShardOf, summarizeLag, toLagRows, type GroupLag } from '../../../lambda/core/lag.js';

const now = new Date('2026-12-02T12:10:00.000Z');

const group = (overrides: Partial<GroupLag>): GroupLag => ({
  messageGroupId: 'g',
  depth: 1,
  oldestAcceptedAt: '2026-12-02T12:09:00.000Z',
  headAttempts: undefined,
  lastError: undefined,
  headFailingSince: undefined,
  headEventId: undefined,
  headOrderingKey: undefined,
  deadLettered: 0,
  keysAffected: 1,
  ...overrides,
});

describe('toLagRows', () => {
  it('lists active groups worst first, in the contract’s shape', () => {
    const rows = toLagRows(
      [
        group({ messageGroupId: 'fresh', oldestAcceptedAt: '2026-12-02T12:09:50.000Z' }),
        group({ messageGroupId: 'stuck', depth: 7, oldestAcceptedAt: '2026-12-02T12:00:00.000Z', headAttempts: 4, lastError: 'HTTP 500', keysAffected: 3 }),
        group({ messageGroupId: 'drained', depth: 0, oldestAcceptedAt: undefined }),
        group({ messageGroupId: 'dead', depth: 0, oldestAcceptedAt: undefined, deadLettered: 2 }),
      ],
      now,
    );
    expect(rows).toEqual([
      { message_group_id: 'stuck', depth: 7, oldest_wait_seconds: 600, keys_affected: 3, head_attempts: 4, last_error: 'HTTP 500', dead_lettered: 0 },
      { message_group_id: 'fresh', depth: 1, oldest_wait_seconds: 10, keys_affected: 1, head_attempts: 0, last_error: null, dead_lettered: 0 },
      { message_group_id: 'dead', depth: 0, oldest_wait_seconds: 0, keys_affected: 0, head_attempts: 0, last_error: null, dead_lettered: 2 },
    ]);
  });

  it('never shows a negative depth or a wait from the future', () => {
    const rows = toLagRows([group({ depth: -1, deadLettered: 1 }), group({ messageGroupId: 'h', oldestAcceptedAt: '2026-12-02T12:11:00.000Z' })], now);
    expect(rows.map((r) => [r.message_group_id, r.depth, r.oldest_wait_seconds])).toEqual([['g', 0, 0], ['h', 1, 0]]);
  });
});

describe('summarizeLag', () => {
  it('gives the longest wait, the stalled groups and the backlog', () => {
    const summary = summarizeLag(
      [
        group({ depth: 3, oldestAcceptedAt: '2026-12-02T12:00:00.000Z', headFailingSince: '2026-12-02T12:01:00.000Z' }),
        group({ depth: 2, oldestAcceptedAt: '2026-12-02T12:08:00.000Z', headFailingSince: '2026-12-02T12:08:30.000Z' }),
        group({ depth: 5 }),
        group({ depth: 0, deadLettered: 4, oldestAcceptedAt: undefined }),
      ],
      now,
      300,
    );
    expect(summary).toEqual({ maxOldestWaitSeconds: 600, stalledGroups: 1, backlog: 10 });
  });

  it('never hides a failing head behind a depth count that drifted to zero', () => {
    const drifted = group({ messageGroupId: 'drifted', depth: -1, headFailingSince: '2026-12-02T12:00:00.000Z', headAttempts: 7, lastError: 'HTTP 500' });
    expect(summarizeLag([drifted], now, 300)).toEqual({ maxOldestWaitSeconds: 60, stalledGroups: 1, backlog: 1 });
    expect(toLagRows([drifted], now)).toMatchObject([{ message_group_id: 'drifted', depth: 1, head_attempts: 7, last_error: 'HTTP 500' }]);
  });

  it('is all zeros with nothing pending', () => {
    expect(summarizeLag([], now, 300)).toEqual({ maxOldestWaitSeconds: 0, stalledGroups: 0, backlog: 0 });
  });
});

describe('lagShardOf', () => {
  it('spreads groups over every shard, deterministically', () => {
    const shards = new Set(Array.from({ length: 500 }, (_, i) => lagShardOf(`group-${i}`)));
    expect([...shards].sort()).toEqual([...ALL_LAG_SHARDS].sort());
    expect(lagShardOf('group-1')).toBe(lagShardOf('group-1'));
  });
});

describe('summarizeGroup', () => {
  it('uncounts only what ingest counted, and keeps the last acceptance, never for unreadable records', () => {
    const progress = summarizeGroup(
      'g',
      [
        { kind: OutcomeKind.delivered, sequence: 1, attempts: 1, acceptedAt: 'a1', isCounted: true },
        { kind: OutcomeKind.duplicate },
        { kind: OutcomeKind.deadLettered, reason: 'malformed record: x', acceptedAt: undefined, isCounted: false },
        // Settled before ingest recorded it: ingest will not count it either.
        { kind: OutcomeKind.delivered, sequence: 2, attempts: 1, acceptedAt: 'a2', isCounted: false },
        { kind: OutcomeKind.deadLettered, reason: 'gave up', acceptedAt: 'a3', isCounted: true },
      ],
      { state: HeadState.clear },
    );
    expect(progress).toEqual({ messageGroupId: 'g', settled: 2, deadLettered: 1, lastSettledAcceptedAt: 'a3', head: { state: 'clear' } });
  });

  it('is worth a write when something settled or the head waits, and not for duplicates only', () => {
    expect(hasProgress(summarizeGroup('g', [{ kind: OutcomeKind.duplicate }], { state: HeadState.clear }))).toBe(false);
    expect(hasProgress(summarizeGroup('g', [], { state: HeadState.waiting, eventId: 'e', orderingKey: 'k', attempts: 1, lastError: 'HTTP 500', acceptedAt: 'a' }))).toBe(true);
    expect(hasProgress(summarizeGroup('g', [{ kind: OutcomeKind.delivered, sequence: 1, attempts: 1, acceptedAt: 'a', isCounted: true }], { state: HeadState.clear }))).toBe(true);
  });
});

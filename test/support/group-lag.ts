/**
 * A group's lag as the group store reads it (lambda/core/lag.ts `GroupLag`), for core and handler
 * tests: one pending event a minute old, no failing head, no dead letters, no rates.
 */
import type { GroupLag } from '../../lambda/core/lag.js';

export function groupLag(overrides: Partial<GroupLag> = {}): GroupLag {
  return {
    messageGroupId: 'g',
    depth: 1,
    oldestAcceptedAt: '2026-12-02T12:09:00.000Z',
    headAttempts: undefined,
    lastError: undefined,
    headFailingSince: undefined,
    headEventId: undefined,
    headOrderingKey: undefined,
    orderingKey: undefined,
    deadLettered: 0,
    keysAffected: 1,
    rateBuckets: {},
    ...overrides,
  };
}

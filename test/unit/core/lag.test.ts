import { describe, expect, it } from 'vitest';
import { summarizeGroup } from '../../../lambda/core/consumer-batch.js';
import { OutcomeKind } from '../../../lambda/core/delivery.js';
import {
  ALL_LAG_SHARDS,
  LAG_SHARDS,
  hasProgress,
  HeadState,
  isFallingBehind,
  lagPositionSchema,
  lagShardOf,
  ownOrderingKeyOf,
  summarizeLag,
  toLagPage,
  toLagRows,
  type GroupLag,
  type LagPosition,
  type LagRow,
} from '../../../lambda/core/lag.js';
import { fanOutEventId } from '../../../lambda/core/fan-out-id.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';
import { minuteOf, planBucketUpdate, RateCounter, type RateBuckets } from '../../../lambda/core/group-rates.js';
import { encodeCursor, parsePageQuery, type PageRequest } from '../../../lambda/core/paging.js';
import { groupLag } from '../../support/group-lag.js';

const now = new Date('2026-12-02T12:10:00.000Z');

const group = (overrides: Partial<GroupLag>): GroupLag => groupLag(overrides);

/** The falling-behind wait these tests read the lag with. */
const WAIT = 120;
const thresholds = { stallThresholdSeconds: 300, fallingBehindWaitSeconds: WAIT, heldAgeWarnSeconds: 864_000, retentionSeconds: 1_209_600 };

describe('lag row ordering_key', () => {
  it.each([
    ['a per-key group, flowing', { orderingKey: 'sub_1' }, 'sub_1'],
    ['a per-key group with only dead letters', { orderingKey: 'sub_1', depth: 0, deadLettered: 3 }, 'sub_1'],
    ['a per-key group whose item the consumer wrote first', { headOrderingKey: 'sub_1', headFailingSince: '2026-12-02T12:09:30.000Z' }, 'sub_1'],
    ['a partition whose head is failing', { messageGroupId: 'partition-3', headOrderingKey: 'sub_7', headFailingSince: '2026-12-02T12:09:30.000Z' }, 'sub_7'],
    ['a partition flowing', { messageGroupId: 'partition-3', keysAffected: 5 }, null],
    ['a partition with only dead letters', { messageGroupId: 'partition-3', depth: 0, deadLettered: 1, headOrderingKey: 'sub_stale' }, null],
  ] as const)('is %s’s key: %s', (_label, overrides, key) => {
    expect(toLagRows([group(overrides)], now, WAIT).map((row) => row.ordering_key)).toEqual([key]);
  });
});

describe('ownOrderingKeyOf', () => {
  it('finds the key whose own per-key group this is, and none for a partition', () => {
    const group = messageGroupIdFor('sub_b', undefined);
    expect(ownOrderingKeyOf(group, ['sub_a', 'sub_b'])).toBe('sub_b');
    expect(ownOrderingKeyOf(group, ['sub_a'])).toBeUndefined();
    expect(ownOrderingKeyOf(messageGroupIdFor('sub_b', 4), ['sub_b'])).toBeUndefined();
  });
});

describe('toLagRows', () => {
  const noRates = { accepted_per_minute: 0, delivered_per_minute: 0, is_falling_behind: false, is_paused: false, held_subscription_id: null, paused_at: null, pause_reason: null };
  const noHead = { head_event_id: null, head_failing_since: null, last_delivered_at: null };

  it('lists active groups worst first, in the contract’s shape', () => {
    const rows = toLagRows(
      [
        group({ messageGroupId: 'fresh', oldestAcceptedAt: '2026-12-02T12:09:50.000Z', orderingKey: 'sub_fresh' }),
        group({ messageGroupId: 'stuck', depth: 7, oldestAcceptedAt: '2026-12-02T12:00:00.000Z', headAttempts: 4, lastError: 'HTTP 500', keysAffected: 3 }),
        group({
          messageGroupId: 'failing',
          depth: 2,
          oldestAcceptedAt: '2026-12-02T12:05:00.000Z',
          headAttempts: 3,
          lastError: 'HTTP 503',
          headFailingSince: '2026-12-02T12:05:02.000Z',
          headEventId: fanOutEventId('evt_fan', 'sub_f'),
          headOrderingKey: 'sub_f',
          lastDeliveredAt: '2026-12-02T12:04:00.000Z',
        }),
        group({ messageGroupId: 'drained', depth: 0, oldestAcceptedAt: undefined }),
        group({ messageGroupId: 'dead', depth: 0, oldestAcceptedAt: undefined, deadLettered: 2, orderingKey: 'sub_dead' }),
      ],
      now,
      WAIT,
    );
    expect(rows).toEqual([
      { message_group_id: 'stuck', depth: 7, oldest_wait_seconds: 600, keys_affected: 3, head_attempts: 4, last_error: 'HTTP 500', dead_lettered: 0, ordering_key: null, ...noRates, subscription_id: null, ...noHead },
      // A failing head names its subscription, and the event id the operator's skip takes (a fan-out's own).
      {
        message_group_id: 'failing',
        depth: 2,
        oldest_wait_seconds: 300,
        keys_affected: 1,
        head_attempts: 3,
        last_error: 'HTTP 503',
        dead_lettered: 0,
        ordering_key: 'sub_f',
        ...noRates,
        subscription_id: 'sub_f',
        head_event_id: 'evt_fan',
        head_failing_since: '2026-12-02T12:05:02.000Z',
        last_delivered_at: '2026-12-02T12:04:00.000Z',
      },
      { message_group_id: 'fresh', depth: 1, oldest_wait_seconds: 10, keys_affected: 1, head_attempts: 0, last_error: null, dead_lettered: 0, ordering_key: 'sub_fresh', ...noRates, subscription_id: 'sub_fresh', ...noHead },
      { message_group_id: 'dead', depth: 0, oldest_wait_seconds: 0, keys_affected: 0, head_attempts: 0, last_error: null, dead_lettered: 2, ordering_key: 'sub_dead', ...noRates, subscription_id: 'sub_dead', ...noHead },
    ]);
  });

  it('never shows a negative depth or a wait from the future', () => {
    const rows = toLagRows([group({ depth: -1, deadLettered: 1 }), group({ messageGroupId: 'h', oldestAcceptedAt: '2026-12-02T12:11:00.000Z' })], now, WAIT);
    // 'h' has a pending event (accepted by a clock running ahead); 'g' only dead letters.
    expect(rows.map((r) => [r.message_group_id, r.depth, r.oldest_wait_seconds])).toEqual([['h', 1, 0], ['g', 0, 0]]);
  });

  it('orders by when the oldest event was accepted, not by the whole seconds it has waited', () => {
    // Both have waited 600 whole seconds at 12:10:00.950; 'early' was accepted 800 ms sooner.
    const groups = [
      group({ messageGroupId: 'late', oldestAcceptedAt: '2026-12-02T12:00:00.900Z', headAttempts: 5, headFailingSince: '2026-12-02T12:00:01.000Z' }),
      group({ messageGroupId: 'early', oldestAcceptedAt: '2026-12-02T12:00:00.100Z' }),
    ];
    for (const at of ['2026-12-02T12:10:00.500Z', '2026-12-02T12:10:00.950Z']) {
      expect(toLagRows(groups, new Date(at), WAIT).map((r) => r.message_group_id)).toEqual(['early', 'late']);
    }
  });
});

describe('toLagPage', () => {
  /** Ties on every field but the last, unknown and future acceptances, and dead letters only. */
  const groups: GroupLag[] = [
    group({ messageGroupId: 'b-tied', oldestAcceptedAt: '2026-12-02T12:05:00.000Z', headAttempts: 2, headFailingSince: '2026-12-02T12:05:01.000Z' }),
    group({ messageGroupId: 'a-tied', oldestAcceptedAt: '2026-12-02T12:05:00.000Z', headAttempts: 2, headFailingSince: '2026-12-02T12:05:01.000Z' }),
    group({ messageGroupId: 'more-attempts', oldestAcceptedAt: '2026-12-02T12:05:00.000Z', headAttempts: 3, headFailingSince: '2026-12-02T12:05:01.000Z' }),
    group({ messageGroupId: 'oldest', oldestAcceptedAt: '2026-12-02T11:00:00.000Z' }),
    group({ messageGroupId: 'same-second-later', oldestAcceptedAt: '2026-12-02T11:00:00.700Z', headAttempts: 9, headFailingSince: '2026-12-02T11:00:01.000Z' }),
    group({ messageGroupId: 'future', oldestAcceptedAt: '2026-12-02T12:30:00.000Z' }),
    group({ messageGroupId: 'unknown-acceptance', oldestAcceptedAt: undefined, deadLettered: 1 }),
    group({ messageGroupId: 'dead-2', depth: 0, oldestAcceptedAt: undefined, deadLettered: 2 }),
    group({ messageGroupId: 'dead-1', depth: 0, oldestAcceptedAt: undefined, deadLettered: 1 }),
    group({ messageGroupId: 'drained', depth: 0, oldestAcceptedAt: undefined }),
  ];

  /** The request the answer's cursor stands for, read as the route reads it. */
  function nextRequest(limit: number, cursor: string): PageRequest<LagPosition> {
    const parsed = parsePageQuery({ limit: String(limit), cursor }, lagPositionSchema);
    if (!parsed.ok) throw new Error(`the cursor ${cursor} was refused`);
    return parsed.value;
  }

  /** Reads every page, the clock at `clock(page)` for each, and the groups as `groupsAt(page)` gives them. */
  function readAllPages(limit: number, clock: (page: number) => Date, groupsAt: (page: number) => readonly GroupLag[] = () => groups): LagRow[][] {
    const pages: LagRow[][] = [];
    let request: PageRequest<LagPosition> = { limit, after: undefined };
    for (;;) {
      const page = toLagPage(groupsAt(pages.length), clock(pages.length), request, WAIT);
      pages.push(page.items);
      if (page.nextCursor === null) return pages;
      request = nextRequest(limit, page.nextCursor);
    }
  }

  const ids = (rows: readonly LagRow[]) => rows.map((row) => row.message_group_id);

  it('sorts worst first on the acceptance, then attempts, dead letters and group id', () => {
    expect(ids(toLagRows(groups, now, WAIT))).toEqual([
      'oldest',
      'same-second-later',
      'more-attempts',
      'a-tied',
      'b-tied',
      'future',
      'dead-2',
      'dead-1',
      'unknown-acceptance',
    ]);
  });

  it.each([1, 2, 3, 4, 8, 9, 100])('reads %i rows at a time into pages that concatenate to the whole view', (limit) => {
    const pages = readAllPages(limit, () => now);
    expect(pages.flat()).toEqual(toLagRows(groups, now, WAIT));
    expect(pages.every((page) => page.length <= limit)).toBe(true);
    expect(pages).toHaveLength(Math.ceil(9 / limit));
  });

  it.each([
    { case: 'a second per page', stepMs: 1_000 },
    { case: '350 ms per page, across whole-second boundaries', stepMs: 350 },
    { case: 'an hour per page, past the future acceptance', stepMs: 3_600_000 },
  ])('repeats and skips no row when the clock moves between pages: $case', ({ stepMs }) => {
    const clock = (page: number) => new Date(now.getTime() + page * stepMs);
    const pages = readAllPages(2, clock);
    expect(ids(pages.flat())).toEqual(ids(toLagRows(groups, now, WAIT)));
    // Each page shows the waits of its own time.
    expect(pages[0]?.[0]?.oldest_wait_seconds).toBe(4200);
  });

  it('keeps its place when a group already shown drains before the next page', () => {
    const pages = readAllPages(3, () => now, (page) => (page === 0 ? groups : groups.filter((g) => g.messageGroupId !== 'more-attempts')));
    expect(ids(pages.flat())).toEqual(ids(toLagRows(groups, now, WAIT)));
  });

  it('ends with a null cursor, also when the last page is full', () => {
    const first = toLagPage(groups, now, { limit: 8, after: undefined }, WAIT);
    expect(first.nextCursor).not.toBeNull();
    const last = toLagPage(groups, now, nextRequest(8, first.nextCursor ?? ''), WAIT);
    expect(last).toEqual({ items: [expect.objectContaining({ message_group_id: 'unknown-acceptance' })], nextCursor: null });
    expect(toLagPage(groups, now, { limit: 9, after: undefined }, WAIT).nextCursor).toBeNull();
    expect(toLagPage([], now, { limit: 9, after: undefined }, WAIT)).toEqual({ items: [], nextCursor: null });
  });

  const position: LagPosition = { list: 'lag', oldest_accepted_ms: Date.parse('2026-12-02T12:05:00.000Z'), head_attempts: 2, dead_lettered: 0, message_group_id: 'a-tied' };
  it.each([
    { case: 'of another list', cursor: encodeCursor({ ...position, list: 'dead_letters' }) },
    { case: 'without a group id', cursor: encodeCursor({ ...position, message_group_id: undefined }) },
    { case: 'with negative attempts', cursor: encodeCursor({ ...position, head_attempts: -1 }) },
    { case: 'with a wait instead of an acceptance', cursor: encodeCursor({ ...position, oldest_accepted_ms: undefined, oldest_wait_seconds: 300 }) },
    { case: 'with an acceptance as text', cursor: encodeCursor({ ...position, oldest_accepted_ms: '2026-12-02T12:05:00.000Z' }) },
  ])('refuses a cursor $case', ({ cursor }) => {
    expect(parsePageQuery({ cursor }, lagPositionSchema)).toMatchObject({ ok: false, refusal: { code: 'invalid_request', details: [{ path: 'cursor' }] } });
  });

  it('accepts the cursor of a row and continues after it', () => {
    const parsed = parsePageQuery({ cursor: encodeCursor(position), limit: '2' }, lagPositionSchema);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(ids(toLagPage(groups, now, parsed.value, WAIT).items)).toEqual(['b-tied', 'future']);
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
      thresholds,
    );
    expect(summary).toEqual({ maxOldestWaitSeconds: 600, stalledGroups: 1, backlog: 10, fallingBehindKeys: 0, worstFallingBehind: [], heldGroups: 0, oldestHeldSeconds: 0, nearRetention: [] });
  });

  it('never hides a failing head behind a depth count that drifted to zero', () => {
    const drifted = group({ messageGroupId: 'drifted', depth: -1, headFailingSince: '2026-12-02T12:00:00.000Z', headAttempts: 7, lastError: 'HTTP 500' });
    expect(summarizeLag([drifted], now, thresholds)).toEqual({ maxOldestWaitSeconds: 60, stalledGroups: 1, backlog: 1, fallingBehindKeys: 0, worstFallingBehind: [], heldGroups: 0, oldestHeldSeconds: 0, nearRetention: [] });
    expect(toLagRows([drifted], now, WAIT)).toMatchObject([{ message_group_id: 'drifted', depth: 1, head_attempts: 7, last_error: 'HTTP 500' }]);
  });

  it('counts the held groups and the longest their oldest events waited, and names those near SQS’s retention', () => {
    const hold = { subscriptionId: 'sub_1', receiptHandle: 'rh', pausedAt: '2026-12-01T12:00:00.000Z', reason: 'r', heldAt: '2026-12-02T12:00:00.000Z', until: '2026-12-03T00:00:00.000Z' };
    const summary = summarizeLag(
      [
        group({ messageGroupId: 'held-long', depth: 2, oldestAcceptedAt: '2026-12-02T12:00:00.000Z', hold }),
        group({ messageGroupId: 'held-short', depth: 1, oldestAcceptedAt: '2026-12-02T12:09:00.000Z', hold: { ...hold, subscriptionId: 'sub_2' } }),
        group({ messageGroupId: 'failing', depth: 1, oldestAcceptedAt: '2026-11-30T12:00:00.000Z', headFailingSince: '2026-11-30T12:00:00.000Z' }),
      ],
      now,
      { ...thresholds, heldAgeWarnSeconds: 300, retentionSeconds: 1000 },
    );
    expect(summary).toMatchObject({ heldGroups: 2, oldestHeldSeconds: 600 });
    expect(summary.nearRetention).toEqual([{ messageGroupId: 'held-long', subscriptionId: 'sub_1', oldestWaitSeconds: 600, secondsLeft: 400 }]);
  });

  it('is all zeros with nothing pending', () => {
    expect(summarizeLag([], now, thresholds)).toEqual({ maxOldestWaitSeconds: 0, stalledGroups: 0, backlog: 0, fallingBehindKeys: 0, worstFallingBehind: [], heldGroups: 0, oldestHeldSeconds: 0, nearRetention: [] });
  });
});

/** A group's buckets after `accepted` and `delivered` events in `minute`, as the writes leave them. */
function bucketsOf(minute: number, accepted: number, delivered: number): RateBuckets {
  const buckets: Record<string, number> = {};
  for (const [counter, events] of [[RateCounter.accepted, accepted], [RateCounter.delivered, delivered]] as const) {
    if (events === 0) continue;
    const update = planBucketUpdate(counter, minute, events);
    buckets[update.add.name] = update.add.base + events;
  }
  return buckets;
}

describe('isFallingBehind', () => {
  const lastMinute = minuteOf(now) - 1;
  /** A whale at 12:10: waiting 4 minutes, 600 accepted and 300 delivered in 12:09, its head not failing. */
  const whale = group({ messageGroupId: 'whale', depth: 900, oldestAcceptedAt: '2026-12-02T12:06:00.000Z', rateBuckets: bucketsOf(lastMinute, 600, 300) });

  it.each([
    { case: 'a key fed faster than it delivers, waiting past the threshold', overrides: {}, expected: true },
    { case: 'a key fed exactly as fast as it delivers', overrides: { rateBuckets: bucketsOf(lastMinute, 300, 300) }, expected: true },
    { case: 'a key catching up: it delivers faster than it is fed', overrides: { rateBuckets: bucketsOf(lastMinute, 200, 300) }, expected: false },
    { case: 'a key fed nothing last minute (its backlog is not growing)', overrides: { rateBuckets: bucketsOf(lastMinute, 0, 0) }, expected: false },
    { case: 'a key whose rates are of an older minute', overrides: { rateBuckets: bucketsOf(lastMinute - 1, 600, 300) }, expected: false },
    { case: 'a key whose head is failing (a stall, not a whale)', overrides: { headFailingSince: '2026-12-02T12:07:00.000Z', headAttempts: 3 }, expected: false },
    { case: 'a key with nothing pending', overrides: { depth: 0 }, expected: false },
    {
      case: 'a key held for a paused subscription (paused, not outrun)',
      overrides: { hold: { subscriptionId: 'sub_1', receiptHandle: 'rh', pausedAt: '2026-12-02T12:00:00.000Z', reason: 'r', heldAt: '2026-12-02T12:00:05.000Z', until: '2026-12-03T00:00:00.000Z' } },
      expected: false,
    },
    { case: 'a key waiting exactly the threshold', overrides: { oldestAcceptedAt: '2026-12-02T12:08:00.000Z' }, expected: false },
    { case: 'a key waiting a second past the threshold', overrides: { oldestAcceptedAt: '2026-12-02T12:07:59.000Z' }, expected: true },
  ])('is $expected for $case', ({ overrides, expected }) => {
    const candidate = { ...whale, ...overrides };
    expect(isFallingBehind(candidate, now, WAIT)).toBe(expected);
    expect(toLagRows([candidate], now, WAIT)[0]?.is_falling_behind ?? false).toBe(expected);
  });

  it('shows the last full minute’s rates on every row, and keeps the view worst first', () => {
    const healthy = group({ messageGroupId: 'healthy', depth: 3, oldestAcceptedAt: '2026-12-02T12:04:00.000Z', rateBuckets: bucketsOf(lastMinute, 10, 40) });
    const rows = toLagRows([whale, healthy], now, WAIT);
    expect(rows.map((row) => [row.message_group_id, row.accepted_per_minute, row.delivered_per_minute, row.is_falling_behind])).toEqual([
      ['healthy', 10, 40, false],
      ['whale', 600, 300, true],
    ]);
  });

  it('shows a held group as paused, with its subscription, time and reason', () => {
    const hold = { subscriptionId: 'sub_1', receiptHandle: 'rh', pausedAt: '2026-12-02T12:00:00.000Z', reason: 'maintenance', heldAt: '2026-12-02T12:00:05.000Z', until: '2026-12-03T00:00:00.000Z' };
    const [row] = toLagRows([{ ...whale, hold }], now, WAIT);
    expect(row).toMatchObject({ is_paused: true, held_subscription_id: 'sub_1', paused_at: '2026-12-02T12:00:00.000Z', pause_reason: 'maintenance' });
    // The receipt handle is the consumer's and resume's, never shown.
    expect(JSON.stringify(row)).not.toContain('"rh"');
  });

  it('is counted and named by the lag summary, worst first', () => {
    const smaller = { ...whale, messageGroupId: 'smaller', oldestAcceptedAt: '2026-12-02T12:07:00.000Z' };
    const summary = summarizeLag([smaller, whale, group({ messageGroupId: 'calm' })], now, thresholds);
    expect(summary.fallingBehindKeys).toBe(2);
    expect(summary.worstFallingBehind.map((row) => row.message_group_id)).toEqual(['whale', 'smaller']);
  });
});

describe('lagShardOf', () => {
  it('spreads groups over every shard, deterministically', () => {
    const shards = new Set(Array.from({ length: 20 * LAG_SHARDS }, (_, i) => lagShardOf(`group-${i}`)));
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
    expect(progress).toEqual({ messageGroupId: 'g', settled: 2, lastSettledAcceptedAt: 'a3', head: { state: 'clear' }, hasDelivered: true });
  });

  it('says the batch delivered only when a receiver accepted one of its events: not for dead letters or duplicates alone', () => {
    const outcomes = [
      { kind: OutcomeKind.duplicate },
      { kind: OutcomeKind.deadLettered, reason: 'gave up', acceptedAt: 'a3', isCounted: true },
    ] as const;
    expect(summarizeGroup('g', outcomes, { state: HeadState.clear }).hasDelivered).toBeUndefined();
  });

  it('is worth a write when something settled or the head waits, and not for duplicates only', () => {
    expect(hasProgress(summarizeGroup('g', [{ kind: OutcomeKind.duplicate }], { state: HeadState.clear }))).toBe(false);
    expect(hasProgress(summarizeGroup('g', [], { state: HeadState.waiting, eventId: 'e', orderingKey: 'k', attempts: 1, lastError: 'HTTP 500', acceptedAt: 'a' }))).toBe(true);
    expect(hasProgress(summarizeGroup('g', [{ kind: OutcomeKind.delivered, sequence: 1, attempts: 1, acceptedAt: 'a', isCounted: true }], { state: HeadState.clear }))).toBe(true);
  });
});

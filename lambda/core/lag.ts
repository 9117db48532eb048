/**
 * Lag per message group: the design's depth / oldest wait / keys affected view. Head-of-line
 * blocking inside a key is the price of order; this is how an operator sees a stuck key before
 * its customer does. Pure: the clock comes in as a parameter.
 */
import * as z from 'zod';
import { ratesOfLastFullMinute, type RateBuckets } from './group-rates.js';
import { takePage, type Page, type PageRequest } from './paging.js';
import { publicEventIdOfDelivery } from './fan-out-id.js';
import { blake2bDigest, messageGroupIdFor, subscriptionOfKey } from './routing.js';
import { schemaOf } from './schema-match.js';

/**
 * Shards of the sparse index of active groups: enough that no index partition runs hot. A sparse
 * key (one event at a time) entered and left the index once per event before idle groups stayed in it (see
 * {@link IDLE_GROUP_MINUTES}): 2 index writes per event,
 * each shard's partition key good for 1,000 writes/s, so 256 shards take 128,000 writes/s, the
 * scale model's peak of 50,000 events/s (100,000 writes/s) with a quarter to spare. Readers make one
 * Query per shard: the lag job 256 a minute, each of at most half a read unit when the shard is idle.
 */
export const LAG_SHARDS = 256;

/** The shard of a group in the index of active groups. */
export function lagShardOf(messageGroupId: string): string {
  return `shard-${Buffer.from(blake2bDigest(messageGroupId, 8)).readBigUInt64BE(0) % BigInt(LAG_SHARDS)}`;
}

/**
 * How long a drained group stays in the index of active groups, idle, before the lag job takes it
 * out: a key that sends again within it (a sparse key, one event every few seconds or minutes)
 * enters and leaves the index once, not once per event (2 index write units saved per event). The
 * lag job, the lag view and the routing's pending count read the idle ones too (half a read unit
 * each per read), and leave them out.
 */
export const IDLE_GROUP_MINUTES = 15;

/** The time before which a group idle since then is taken out of the index (see {@link IDLE_GROUP_MINUTES}). */
export function idleCutoff(now: Date): string {
  return new Date(now.getTime() - IDLE_GROUP_MINUTES * 60_000).toISOString();
}

/** Every shard, for readers of the index. */
export const ALL_LAG_SHARDS: readonly string[] = Array.from({ length: LAG_SHARDS }, (_, shard) => `shard-${shard}`);

/** The CloudWatch metrics the lag job publishes (EMF) and the lag alarms watch. */
export const LAG_METRICS = {
  namespace: 'OrderedWebhooks',
  /** Powertools Metrics adds this as the `service` dimension. */
  service: 'lag',
  maxOldestWaitSeconds: 'MaxOldestWaitSeconds',
  stalledGroups: 'StalledGroups',
  backlog: 'Backlog',
  /** Keys falling behind (see {@link isFallingBehind}): a whale alarms on it. */
  fallingBehindKeys: 'FallingBehindKeys',
  /** Groups held for paused subscriptions. */
  heldGroups: 'HeldGroups',
  /** The longest wait of a held group's oldest event: SQS drops it at 14 days, so an alarm warns before. */
  oldestHeldSeconds: 'OldestHeldSeconds',
} as const;

/**
 * The message of the lag job's log line for each of the worst keys falling behind, one line per
 * key per run: the dashboard's table of them filters on it, so the two cannot disagree.
 */
export const FALLING_BEHIND_MESSAGE = 'key falling behind';

/** The lag job's line, each run, for each held group whose oldest event nears SQS's retention. */
export const NEAR_RETENTION_MESSAGE = 'a paused subscription’s oldest event nears SQS’s 14-day retention: resume it (or skip the head) before SQS drops it';

/** A group's lag as stored. */
export interface GroupLag {
  readonly messageGroupId: string;
  /** Events accepted and neither delivered nor dead-lettered, the head included. */
  readonly depth: number;
  /** When the oldest pending event was accepted (a lower bound while the group flows). */
  readonly oldestAcceptedAt: string | undefined;
  readonly headAttempts: number | undefined;
  readonly lastError: string | undefined;
  /** Since when the current head has been failing. */
  readonly headFailingSince: string | undefined;
  /** The failing head, for an operator's skip. */
  readonly headEventId: string | undefined;
  readonly headOrderingKey: string | undefined;
  /** The one ordering key of a per-key group (see {@link ownOrderingKeyOf}); undefined for a partition. */
  readonly orderingKey: string | undefined;
  readonly deadLettered: number;
  /** Ordering keys with events in the group since it was last drained (an upper bound in partition mode). */
  readonly keysAffected: number;
  /** The group's per-minute buckets of accepted and delivered events (see group-rates.ts); empty when it never had any. */
  readonly rateBuckets: RateBuckets;
  /** Those keys themselves; undefined when there were more than the group tracks, or they were not read. */
  readonly orderingKeys?: readonly string[] | undefined;
  /** Set while the consumer holds the group for a paused subscription (see {@link GroupHold}). */
  readonly hold?: GroupHold | undefined;
  /** The subscriptions with a backlog parked from this group (`core/park.ts`), each with its park's id: the lag job sends it back once resumed. */
  readonly parkedSubscriptions?: Readonly<Record<string, string>> | undefined;
  /** When a consumer batch last delivered an event of the group (a receiver accepted it); undefined before the first. */
  readonly lastDeliveredAt?: string | undefined;
}

/**
 * A group the consumer holds for a paused subscription: its head message invisible for as long as
 * SQS allows, nothing attempted. Resume lets it go by the head's receipt handle.
 */
export interface GroupHold {
  readonly subscriptionId: string;
  /** The receipt handle of the held head's receive: `ChangeMessageVisibility` to 0 lets the group go. */
  readonly receiptHandle: string;
  /** The pause's own time and reason, as the subscription had them. */
  readonly pausedAt: string;
  readonly reason: string;
  /** When the consumer made the hold (its batch's time): see `letGoAll` on when it may be forgotten. */
  readonly heldAt: string;
  /** When the hold ends by itself (the head comes back, and is held again while still paused). */
  readonly until: string;
}

/** The groups held for a subscription's pause (see {@link GroupHold}), for its resume. */
export function heldGroupsOf(groups: readonly GroupLag[], subscriptionId: string): { readonly messageGroupId: string; readonly hold: GroupHold }[] {
  return groups.flatMap(({ messageGroupId, hold }) => (hold?.subscriptionId === subscriptionId ? [{ messageGroupId, hold }] : []));
}

/** One row of `GET /v1/lag` (docs/api.md#the-lag-view), with the group's dead letters added. */
export interface LagRow {
  readonly message_group_id: string;
  readonly depth: number;
  readonly oldest_wait_seconds: number;
  readonly keys_affected: number;
  readonly head_attempts: number;
  readonly last_error: string | null;
  readonly dead_lettered: number;
  /**
   * The group's ordering key. Per-key mode: the group's one key, always. Partition mode (a group
   * holds many keys): the key of the failing head, the one that holds the group up; null while no
   * head is failing, as no single key then stands for the group.
   */
  readonly ordering_key: string | null;
  /** Events accepted into the group in the last full minute (the minute before the one read in). */
  readonly accepted_per_minute: number;
  /** Events of the group delivered or dead-lettered in the same minute. */
  readonly delivered_per_minute: number;
  /** The group's key is falling behind: fed at least as fast as it delivers at its ceiling (see {@link isFallingBehind}). */
  readonly is_falling_behind: boolean;
  /** The consumer holds the group for a paused subscription (`held_subscription_id`): nothing of it is attempted until resumed. */
  readonly is_paused: boolean;
  /** The paused subscription holding the group; null while not held. */
  readonly held_subscription_id: string | null;
  readonly paused_at: string | null;
  readonly pause_reason: string | null;
  /**
   * The subscription of the group's key (`ordering_key`), or the paused one holding it; null when
   * neither is known (a partition with no failing head).
   */
  readonly subscription_id: string | null;
  /** The failing head's event id, as `POST /v1/groups/{message_group_id}/skip` takes it; null while no head is failing. */
  readonly head_event_id: string | null;
  /** Since when the head has been failing; null while none is. */
  readonly head_failing_since: string | null;
  /** When the group last had an event delivered (the end of the consumer's batch); null before the first. */
  readonly last_delivered_at: string | null;
}

/** {@link LagRow} as the API document shows it: a field added to one and not the other fails type-check. */
export const lagRowSchema = schemaOf<LagRow>()(
  z.strictObject({
    message_group_id: z.string(),
    depth: z.number().int().nonnegative(),
    oldest_wait_seconds: z.number().int().nonnegative(),
    keys_affected: z.number().int().nonnegative(),
    head_attempts: z.number().int().nonnegative(),
    last_error: z.string().nullable(),
    dead_lettered: z.number().int().nonnegative(),
    ordering_key: z.string().nullable(),
    accepted_per_minute: z.number().int().nonnegative(),
    delivered_per_minute: z.number().int().nonnegative(),
    is_falling_behind: z.boolean(),
    is_paused: z.boolean(),
    held_subscription_id: z.string().nullable(),
    paused_at: z.string().nullable(),
    pause_reason: z.string().nullable(),
    subscription_id: z.string().nullable().meta({ description: 'The subscription of the group\'s key, or the paused one holding the group; null when neither is known (a partition with no failing head).' }),
    head_event_id: z.string().nullable().meta({ description: 'The failing head\'s event id, as `POST /v1/groups/{message_group_id}/skip` takes it; null while no head is failing.' }),
    head_failing_since: z.iso.datetime().nullable().meta({ description: 'Since when the head has been failing; null while none is.' }),
    last_delivered_at: z.iso.datetime().nullable().meta({ description: 'When the group last had an event delivered (the end of the consumer\'s batch that delivered it); null before the first.' }),
  }),
);

function secondsSince(at: string | undefined, now: Date): number {
  if (at === undefined) return 0;
  return Math.max(0, Math.floor((now.getTime() - Date.parse(at)) / 1000));
}

/** Whether the group has anything an operator should see: pending or dead-lettered events. */
export function isActive(group: GroupLag): boolean {
  // A failing or held head shows even if the depth count drifted: a stuck key must never be hidden,
  // and a held group must be found by its resume.
  return group.depth > 0 || group.deadLettered > 0 || group.headFailingSince !== undefined || group.hold !== undefined || Object.keys(group.parkedSubscriptions ?? {}).length > 0;
}

/**
 * Whether a group's key is falling behind: a whale. Its head is not failing (a failing head is a
 * stall, alarmed on its own) nor held for a pause, it has events waiting, the oldest of them has waited longer than
 * `waitThresholdSeconds`, and in the last full minute it accepted events and at least as many as
 * it delivered: its backlog did not shrink while the consumer kept delivering it one event (or
 * one batch) per round trip of its endpoint, which is a key's ceiling, so its oldest wait keeps
 * growing. No retry or fix of the receiver's errors helps it; a finer key, batches or a faster
 * receiver do (docs/operations.md, *Events per minute, and whales*).
 */
export function isFallingBehind(group: GroupLag, now: Date, waitThresholdSeconds: number): boolean {
  // A held or parked group delivers nothing on purpose: paused, or sending its parked events back, not outrun.
  if (group.headFailingSince !== undefined || group.hold !== undefined || group.depth <= 0 || Object.keys(group.parkedSubscriptions ?? {}).length > 0) return false;
  if (secondsSince(group.oldestAcceptedAt, now) <= waitThresholdSeconds) return false;
  const rates = ratesOfLastFullMinute(group.rateBuckets, now);
  return rates.acceptedPerMinute > 0 && rates.acceptedPerMinute >= rates.deliveredPerMinute;
}

/**
 * Where a row stands in the lag view, in absolute terms: what the order is decided on, and what
 * a `GET /v1/lag` cursor carries. Not `oldest_wait_seconds`, which grows with the clock: a
 * position taken on one page must still mean the same place when the next page is read.
 */
export const lagPositionSchema = z.strictObject({
  /** Tells a lag cursor from any other list's. */
  list: z.literal('lag'),
  /** When the oldest pending event was accepted (ms since the epoch); null when nothing is pending or it is not known. */
  oldest_accepted_ms: z.number().int().nullable(),
  head_attempts: z.number().int().nonnegative(),
  dead_lettered: z.number().int().nonnegative(),
  /** Unique, so that no two rows share a position. */
  message_group_id: z.string().min(1).max(128),
});
export type LagPosition = z.infer<typeof lagPositionSchema>;

/** Code-unit order: the same in every runtime, whatever its locale data. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Worst first: the longest-waiting oldest event (the earliest acceptance; none known comes last,
 * as a wait of 0), then the most attempts on the head, then the most dead letters, then the
 * group id. Every row has its own position, so the order is total.
 */
export function compareLagPositions(a: LagPosition, b: LagPosition): number {
  const byAcceptance =
    a.oldest_accepted_ms === b.oldest_accepted_ms ? 0 : a.oldest_accepted_ms === null ? 1 : b.oldest_accepted_ms === null ? -1 : a.oldest_accepted_ms - b.oldest_accepted_ms;
  return byAcceptance || b.head_attempts - a.head_attempts || b.dead_lettered - a.dead_lettered || compareText(a.message_group_id, b.message_group_id);
}

interface PositionedRow {
  readonly row: LagRow;
  readonly position: LagPosition;
}

/**
 * A group's row of the lag view at `now`: what `GET /v1/lag` lists for an active group, and
 * `GET /v1/groups/{message_group_id}` answers for any group the store knows.
 */
export function toLagRow(group: GroupLag, now: Date, fallingBehindWaitSeconds: number): LagRow {
  const hasPending = hasPendingHead(group);
  const rates = ratesOfLastFullMinute(group.rateBuckets, now);
  const orderingKey = group.orderingKey ?? (hasPending ? (group.headOrderingKey ?? null) : null);
  const isFailing = hasPending && group.headFailingSince !== undefined;
  return {
    message_group_id: group.messageGroupId,
    depth: Math.max(hasPending ? 1 : 0, group.depth),
    oldest_wait_seconds: hasPending ? secondsSince(group.oldestAcceptedAt, now) : 0,
    keys_affected: hasPending ? Math.max(1, group.keysAffected) : 0,
    head_attempts: hasPending ? (group.headAttempts ?? 0) : 0,
    last_error: hasPending ? (group.lastError ?? null) : null,
    dead_lettered: Math.max(0, group.deadLettered),
    ordering_key: orderingKey,
    accepted_per_minute: rates.acceptedPerMinute,
    delivered_per_minute: rates.deliveredPerMinute,
    is_falling_behind: isFallingBehind(group, now, fallingBehindWaitSeconds),
    is_paused: group.hold !== undefined,
    held_subscription_id: group.hold?.subscriptionId ?? null,
    paused_at: group.hold?.pausedAt ?? null,
    pause_reason: group.hold?.reason ?? null,
    subscription_id: (orderingKey === null ? undefined : subscriptionOfKey(orderingKey)) ?? group.hold?.subscriptionId ?? null,
    head_event_id: isFailing && group.headEventId !== undefined ? publicEventIdOfDelivery(group.headEventId) : null,
    head_failing_since: isFailing ? (group.headFailingSince ?? null) : null,
    last_delivered_at: group.lastDeliveredAt ?? null,
  };
}

/** Whether the group has a head waiting: events pending, a failing head, or a hold. */
function hasPendingHead(group: GroupLag): boolean {
  return group.depth > 0 || group.headFailingSince !== undefined || group.hold !== undefined;
}

/** Every active group's row with its position, worst first. */
function toPositionedRows(groups: readonly GroupLag[], now: Date, fallingBehindWaitSeconds: number): PositionedRow[] {
  return groups
    .filter(isActive)
    .map((group) => {
      const oldestAcceptedMs = hasPendingHead(group) && group.oldestAcceptedAt !== undefined ? Date.parse(group.oldestAcceptedAt) : Number.NaN;
      const row = toLagRow(group, now, fallingBehindWaitSeconds);
      const position: LagPosition = {
        list: 'lag',
        oldest_accepted_ms: Number.isNaN(oldestAcceptedMs) ? null : oldestAcceptedMs,
        head_attempts: row.head_attempts,
        dead_lettered: row.dead_lettered,
        message_group_id: row.message_group_id,
      };
      return { row, position };
    })
    .sort((a, b) => compareLagPositions(a.position, b.position));
}

/**
 * The lag view: active groups only, worst first (see {@link compareLagPositions}); the order
 * depends on the groups alone, never on `now`, which only ages the waits shown and picks the
 * minute the rates are of. A key is flagged falling behind past `fallingBehindWaitSeconds`.
 */
export function toLagRows(groups: readonly GroupLag[], now: Date, fallingBehindWaitSeconds: number): LagRow[] {
  return toPositionedRows(groups, now, fallingBehindWaitSeconds).map(({ row }) => row);
}

/**
 * One page of the lag view: the rows after the request's position, worst first. Pages read one
 * after another while nothing changes concatenate to {@link toLagRows}, even as the clock moves.
 */
export function toLagPage(groups: readonly GroupLag[], now: Date, request: PageRequest<LagPosition>, fallingBehindWaitSeconds: number): Page<LagRow> {
  const page = takePage(toPositionedRows(groups, now, fallingBehindWaitSeconds), request, ({ position }) => position, compareLagPositions);
  return { items: page.items.map(({ row }) => row), nextCursor: page.nextCursor };
}

/** What the lag job publishes. */
export interface LagSummary {
  readonly maxOldestWaitSeconds: number;
  /** Groups whose head has been failing for longer than the stall threshold. */
  readonly stalledGroups: number;
  /** Pending events over all groups. */
  readonly backlog: number;
  /** Groups whose key is falling behind (see {@link isFallingBehind}). */
  readonly fallingBehindKeys: number;
  /** The worst of them, worst first (the lag view's order), at most MAX_WORST_KEYS_REPORTED, for the job's log and the dashboard. */
  readonly worstFallingBehind: readonly LagRow[];
  /** Groups held for paused subscriptions. */
  readonly heldGroups: number;
  /** The longest any held group's oldest pending event has waited; 0 with none held. */
  readonly oldestHeldSeconds: number;
  /**
   * The held groups whose oldest event has waited at least `heldAgeWarnSeconds`, oldest first, at
   * most MAX_WORST_KEYS_REPORTED: SQS drops a message 14 days after it was sent.
   */
  readonly nearRetention: readonly HeldNearRetention[];
}

/** A held group whose oldest event nears SQS's retention (see `LagSummary.nearRetention`). */
export interface HeldNearRetention {
  readonly messageGroupId: string;
  readonly subscriptionId: string;
  readonly oldestWaitSeconds: number;
  /** Seconds until SQS drops the oldest event, if it is still queued then: 0 once past. */
  readonly secondsLeft: number;
}

/** Keys falling behind the lag job names in its log each run: the dashboard's table of the worst. */
export const MAX_WORST_KEYS_REPORTED = 10;

/** The thresholds a lag summary is taken with. */
export interface LagThresholds {
  /** A group whose head has been failing for longer than this is stalled. */
  readonly stallThresholdSeconds: number;
  /** A key waiting longer than this while fed at least as fast as it delivers is falling behind. */
  readonly fallingBehindWaitSeconds: number;
  /** A held group whose oldest event has waited this long is near SQS's retention (`HELD_AGE_ALARM_SECONDS`). */
  readonly heldAgeWarnSeconds: number;
  /** How long SQS keeps a message (the queue's retention, 14 days). */
  readonly retentionSeconds: number;
}

/**
 * What the lag job publishes of the active groups. The keys falling behind are exactly those the
 * lag view flags, in its order, so that the alarm and the view never disagree about a key.
 */
export function summarizeLag(groups: readonly GroupLag[], now: Date, thresholds: LagThresholds): LagSummary {
  const { stallThresholdSeconds, fallingBehindWaitSeconds, heldAgeWarnSeconds, retentionSeconds } = thresholds;
  let maxOldestWaitSeconds = 0;
  let stalledGroups = 0;
  let backlog = 0;
  const fallingBehind = toLagRows(groups, now, fallingBehindWaitSeconds).filter((row) => row.is_falling_behind);
  const held = groups.flatMap(({ messageGroupId, hold, oldestAcceptedAt }) =>
    hold === undefined ? [] : [{ messageGroupId, subscriptionId: hold.subscriptionId, oldestWaitSeconds: secondsSince(oldestAcceptedAt ?? hold.heldAt, now) }],
  );
  const nearRetention = held
    .filter((group) => group.oldestWaitSeconds >= heldAgeWarnSeconds)
    .sort((a, b) => b.oldestWaitSeconds - a.oldestWaitSeconds)
    .slice(0, MAX_WORST_KEYS_REPORTED)
    .map((group) => ({ ...group, secondsLeft: Math.max(0, retentionSeconds - group.oldestWaitSeconds) }));
  for (const group of groups) {
    // A failing head counts whatever the depth says (see isActive).
    if (group.headFailingSince !== undefined && secondsSince(group.headFailingSince, now) > stallThresholdSeconds) stalledGroups += 1;
    if (group.depth <= 0 && group.headFailingSince === undefined) continue;
    backlog += Math.max(1, group.depth);
    maxOldestWaitSeconds = Math.max(maxOldestWaitSeconds, secondsSince(group.oldestAcceptedAt, now));
  }
  return {
    maxOldestWaitSeconds,
    stalledGroups,
    backlog,
    fallingBehindKeys: fallingBehind.length,
    worstFallingBehind: fallingBehind.slice(0, MAX_WORST_KEYS_REPORTED),
    heldGroups: held.length,
    oldestHeldSeconds: Math.max(0, ...held.map((group) => group.oldestWaitSeconds)),
    nearRetention,
  };
}

/**
 * The ordering key whose own per-key group this is, among keys seen in it; undefined for a
 * partition's group. Decided by the group id alone (a per-key group id is its key's digest, a
 * partition's is `partition-<p>`), so it needs no knowledge of the routing in force.
 */
export function ownOrderingKeyOf(messageGroupId: string, orderingKeys: readonly string[]): string | undefined {
  return orderingKeys.find((key) => messageGroupIdFor(key, undefined) === messageGroupId);
}

/** What one ingest request adds to a group, written once per group before the events are sent. */
export interface GroupIntake {
  readonly messageGroupId: string;
  readonly events: number;
  readonly orderingKeys: readonly string[];
  readonly acceptedAt: string;
}

/** How a consumer batch left a group's head. */
export const HeadState = {
  /** Every record of the group in the batch was settled: no head is failing now. */
  clear: 'clear',
  /** The head failed and waits for its retry. */
  waiting: 'waiting',
  /** A fault stopped the group: what the head's state is, is not known. */
  unknown: 'unknown',
  /** The head's subscription is paused: the group is held, nothing attempted (see {@link GroupHold}). */
  held: 'held',
} as const;

export type GroupHead =
  | { readonly state: typeof HeadState.clear }
  | { readonly state: typeof HeadState.unknown }
  | { readonly state: typeof HeadState.held; readonly hold: GroupHold; readonly acceptedAt: string }
  | {
      readonly state: typeof HeadState.waiting;
      readonly eventId: string;
      readonly orderingKey: string;
      readonly attempts: number;
      readonly lastError: string;
      readonly acceptedAt: string;
    };

/** What one consumer batch did to a group, written once per group per batch. */
export interface GroupProgress {
  readonly messageGroupId: string;
  /**
   * Events delivered or dead-lettered in this batch that ingest had counted. Dead letters are
   * counted apart, by their places in the store (`countDeadLetter`), whoever counted the event.
   */
  readonly settled: number;
  /** The acceptance time of the last event settled, a lower bound for the next one's. */
  readonly lastSettledAcceptedAt: string | undefined;
  readonly head: GroupHead;
  /**
   * A hint that this batch settled everything the group had: its batch was not full, so SQS had no
   * more of it to hand out. The write that records the progress then tries to drain the group at
   * once; a wrong hint costs one refused write, never a wrong count.
   */
  readonly isLikelyDrained?: boolean;
  /** Whether the batch delivered an event of the group (a receiver accepted it): the write then records when. */
  readonly hasDelivered?: boolean;
}

/** Whether a batch changed anything worth a write (a batch of duplicates does not; a hold must be recorded for its resume). */
export function hasProgress(progress: GroupProgress): boolean {
  return progress.settled > 0 || progress.head.state === HeadState.waiting || progress.head.state === HeadState.held;
}

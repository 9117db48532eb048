/**
 * The versioned routing that ingest reads on every request, and the rules of the drain-and-switch
 * that changes it: a key's events must never be pending in two message groups at once, so the
 * partition count changes only while ingest is paused and nothing is pending anywhere.
 */
import * as z from 'zod';

/** The routing in force. Version 0 is the deployment's own PARTITION_COUNT, before any switch. */
export interface RoutingSettings {
  readonly version: number;
  /** Undefined: one message group per key. */
  readonly partitionCount: number | undefined;
  readonly isPaused: boolean;
  readonly pausedAt: string | undefined;
}

export function initialRouting(partitionCount: number | undefined): RoutingSettings {
  return { version: 0, partitionCount, isPaused: false, pausedAt: undefined };
}

/** What is still pending: the queue's messages (visible, in flight, delayed) and the lag view's groups. */
export interface PendingWork {
  readonly queued: number;
  readonly inFlight: number;
  readonly delayed: number;
  readonly groupsWithPending: number;
}

export function hasPendingWork(pending: PendingWork): boolean {
  return pending.queued + pending.inFlight + pending.delayed + pending.groupsWithPending > 0;
}

/**
 * A request that read the routing just before the pause may still be enqueueing under the old
 * routing: API Gateway gives an integration at most 30 s, and ingest's timeout is no longer (an
 * infrastructure test holds it). The switch waits that long after the pause: the deployed grace,
 * and the local stack's unless a test shortens it.
 */
export const PAUSE_GRACE_SECONDS = 30;

/**
 * SQS's approximate counters "may not achieve consistency until at least 1 minute after the
 * producers stop sending messages" (SQS API Reference, GetQueueAttributes): an empty queue read
 * sooner may still hold the last requests' messages.
 */
export const QUEUE_COUNTERS_SETTLE_SECONDS = 60;

/**
 * How long after a pause the routing switch waits before it trusts an empty queue: the last
 * request under the old routing has finished enqueueing (PAUSE_GRACE_SECONDS), and then SQS's
 * counters have settled (QUEUE_COUNTERS_SETTLE_SECONDS).
 */
export const SWITCH_WAIT_SECONDS = PAUSE_GRACE_SECONDS + QUEUE_COUNTERS_SETTLE_SECONDS;

/** Why a switch is refused. */
export const SwitchRefusal = {
  notPaused: 'not_paused',
  pauseTooRecent: 'pause_too_recent',
  queueNotEmpty: 'queue_not_empty',
  versionConflict: 'version_conflict',
} as const;
export type SwitchRefusal = (typeof SwitchRefusal)[keyof typeof SwitchRefusal];

/** Whether the routing may switch now; the refusal otherwise, the first that applies. */
export function checkSwitch(input: {
  readonly current: RoutingSettings;
  readonly expectedVersion: number;
  readonly pending: PendingWork;
  readonly now: Date;
  /** How long after the pause the switch waits (SWITCH_WAIT_SECONDS when deployed). */
  readonly pauseGraceSeconds: number;
}): SwitchRefusal | undefined {
  if (input.current.version !== input.expectedVersion) return SwitchRefusal.versionConflict;
  if (!input.current.isPaused || input.current.pausedAt === undefined) return SwitchRefusal.notPaused;
  if (input.now.getTime() - Date.parse(input.current.pausedAt) < input.pauseGraceSeconds * 1000) return SwitchRefusal.pauseTooRecent;
  if (hasPendingWork(input.pending)) return SwitchRefusal.queueNotEmpty;
  return undefined;
}

/** The routing as `GET /v1/routing` (and pause, resume and the switch) answers it. */
export const routingViewSchema = z.strictObject({
  version: z.number().int().nonnegative(),
  /** null: one message group per key. */
  partition_count: z.number().int().positive().nullable(),
  is_paused: z.boolean(),
  paused_at: z.iso.datetime().nullable(),
  pending: z.strictObject({
    queued: z.number().int().nonnegative(),
    in_flight: z.number().int().nonnegative(),
    delayed: z.number().int().nonnegative(),
    groups_with_pending: z.number().int().nonnegative(),
  }),
});
export type RoutingView = z.infer<typeof routingViewSchema>;

/** The routing as `GET /v1/routing` shows it. */
export function toRoutingView(routing: RoutingSettings, pending: PendingWork): RoutingView {
  return {
    version: routing.version,
    partition_count: routing.partitionCount ?? null,
    is_paused: routing.isPaused,
    paused_at: routing.pausedAt ?? null,
    pending: {
      queued: pending.queued,
      in_flight: pending.inFlight,
      delayed: pending.delayed,
      groups_with_pending: pending.groupsWithPending,
    },
  };
}

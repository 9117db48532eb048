/**
 * The routing and its pending work in words, for the plan, the progress and the summary of
 * `repartition`.
 */
import type { Routing } from '../api/schemas.js';
import { formatMs } from '../duration.js';

/** `8 partitions`, or `one message group per key` for null. */
export function describePartitions(partitionCount: number | null): string {
  return partitionCount === null ? 'one message group per key' : `${partitionCount} partition${partitionCount === 1 ? '' : 's'}`;
}

export function describeRouting(routing: Routing): string {
  return `version ${routing.version}, ${describePartitions(routing.partition_count)}, ingest ${routing.is_paused ? 'paused' : 'accepting events'}`;
}

export function describePending(routing: Routing): string {
  const { queued, in_flight, delayed, groups_with_pending } = routing.pending;
  return `${queued} queued, ${in_flight} in flight, ${delayed} delayed, ${groups_with_pending} group(s) with pending events`;
}

/** Messages in the delivery queue: visible, in flight and delayed. */
export function countPendingMessages(routing: Routing): number {
  return routing.pending.queued + routing.pending.in_flight + routing.pending.delayed;
}

/** Nothing in the queue and no group with pending events: what the switch requires. */
export function isDrained(routing: Routing): boolean {
  return countPendingMessages(routing) === 0 && routing.pending.groups_with_pending === 0;
}

/** The current routing and the numbered steps `repartition` will take. */
export function describePlan(before: Routing, target: number | null, timeoutMs: number, isStayingPaused: boolean): string {
  const steps = [
    before.is_paused ? 'ingest is already paused: keep it paused' : 'pause ingest (producers get 503 with Retry-After; nothing is lost)',
    `wait until nothing is queued, in flight or delayed and no group has pending events (at most ${formatMs(timeoutMs)})`,
    `switch to ${describePartitions(target)} (expected version ${before.version})`,
    isStayingPaused ? 'leave ingest paused (--stay-paused)' : 'resume ingest',
    `verify: version above ${before.version}, ${describePartitions(target)}, ingest ${isStayingPaused ? 'paused' : 'accepting events'}`,
  ];
  return [`Routing now: ${describeRouting(before)}`, `Pending now: ${describePending(before)}`, 'Plan:', ...steps.map((step, index) => `  ${index + 1}. ${step}`)].join('\n');
}

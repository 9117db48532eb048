/**
 * What the consumer counts per invocation, published as CloudWatch metrics (EMF) that the alarms
 * watch. Counts, not gauges: every new dead letter and every fault shows as a new datapoint, so an
 * alarm on them fires again after it cleared, where a queue-depth alarm would stay quiet.
 */
import { OutcomeKind, type DeliveryOutcome } from './delivery.js';

/** The dimension Powertools Metrics adds to every metric, named after the function's service. */
export const SERVICE_DIMENSION = 'service';

export const CONSUMER_METRICS = {
  namespace: 'OrderedWebhooks',
  /** Powertools Metrics adds this as the `service` dimension. */
  service: 'consumer',
  delivered: 'Delivered',
  failedAttempts: 'FailedAttempts',
  deadLettered: 'DeadLettered',
  faults: 'ConsumerFaults',
} as const;

/** One invocation's counts. */
export interface ConsumerCounts {
  /** Events a receiver accepted. */
  readonly delivered: number;
  /** Attempts a receiver refused, or that got no answer in time. */
  readonly failedAttempts: number;
  /** Events given up (or records set aside as unreadable): each one a gap a receiver sees. */
  readonly deadLettered: number;
  /** Records that met a fault (a dependency down): they wait and are retried. */
  readonly faults: number;
}

/** Sums an invocation's outcomes; failed attempts and faults are counted as they happen. */
export function countOutcomes(outcomes: Iterable<DeliveryOutcome>, counted: { readonly failedAttempts: number; readonly faults: number }): ConsumerCounts {
  let delivered = 0;
  let deadLettered = 0;
  for (const outcome of outcomes) {
    if (outcome.kind === OutcomeKind.delivered) delivered += 1;
    if (outcome.kind === OutcomeKind.deadLettered) deadLettered += 1;
  }
  return { delivered, failedAttempts: counted.failedAttempts, deadLettered, faults: counted.faults };
}

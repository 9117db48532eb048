/**
 * An operator's skip: dead-letter a stuck head on purpose, so that its key moves on. Only a head
 * that is failing can be skipped, and only the one the operator saw.
 */
import { publicEventIdOfDelivery } from './fan-out-id.js';

export const SkipRefusal = { noFailingHead: 'no_failing_head', headChanged: 'head_changed' } as const;
export type SkipRefusal = (typeof SkipRefusal)[keyof typeof SkipRefusal];

export type SkipTarget = { readonly eventId: string; readonly orderingKey: string } | { readonly refusal: SkipRefusal };

/** What a skip reads of a group's lag: its failing head, if any. */
export interface FailingHead {
  readonly headEventId: string | undefined;
  readonly headOrderingKey: string | undefined;
  /**
   * Its failed attempts: 0 when only its batch failed (docs/api.md#batches), before it was tried alone.
   * Such a head is not skipped: the batch may have failed for a batch-mate.
   */
  readonly headAttempts?: number | undefined;
}

/** The head to skip in a group, given the event the operator named (if any). */
export function findSkipTarget(group: FailingHead | undefined, requestedEventId: string | undefined): SkipTarget {
  if (group?.headEventId === undefined || group.headOrderingKey === undefined || group.headAttempts === 0) return { refusal: SkipRefusal.noFailingHead };
  // The operator names a fan-out's delivery by its event's id, as the API shows it.
  if (requestedEventId !== undefined && requestedEventId !== publicEventIdOfDelivery(group.headEventId)) return { refusal: SkipRefusal.headChanged };
  return { eventId: group.headEventId, orderingKey: group.headOrderingKey };
}

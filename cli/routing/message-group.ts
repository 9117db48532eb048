/**
 * Which message groups carry a subscription's events, computed the way ingest routes them: the
 * CLI imports the ordering contract's own functions (`lambda/core/routing.ts`, pure BLAKE2b), so
 * that the CLI and the API cannot disagree about a group id.
 */
import { messageGroupIdFor, Ordering, partitionKey, subscriptionOfKey } from '../../lambda/core/routing.js';
import type { LagRow } from '../api/schemas.js';

/** The groups a subscription's events may be in, and whether other keys share them. */
export interface SubscriptionGroups {
  /** The group that ingest routes the subscription's new events to under the current routing. */
  readonly current: string;
  /**
   * Every group that may still hold the subscription's events or dead letters: the current one,
   * and the per-key group, where a dead letter of an earlier per-key routing stays.
   */
  readonly candidates: ReadonlySet<string>;
  /** Partition mode: `current` also carries other subscriptions' keys. */
  readonly isShared: boolean;
}

/**
 * The groups of `subscriptionId`'s own key under a routing of `partitionCount` partitions (null:
 * one message group per key). The ordering key is `partitionKey`'s by subscription (docs/api.md#routing-ordering-key-to-message-group:
 * the subscription id); a subscription ordered by resource has a key per resource besides.
 */
export function groupsOfSubscription(subscriptionId: string, partitionCount: number | null): SubscriptionGroups {
  const key = partitionKey({ subscription_id: subscriptionId }, Ordering.subscription);
  const perKey = messageGroupIdFor(key, undefined);
  const current = partitionCount === null ? perKey : messageGroupIdFor(key, partitionCount);
  return { current, candidates: new Set([perKey, current]), isShared: partitionCount !== null };
}

/**
 * Whether a lag row is one of the subscription's groups: by its `ordering_key` when the API
 * gives one (the subscription's own key, or one of its resource keys), otherwise (an API without the field, or a partition whose key is not one) by the
 * group id computed from the subscription.
 */
export function isRowOfSubscription(row: LagRow, subscriptionId: string, groups: SubscriptionGroups): boolean {
  if (typeof row.ordering_key === 'string') return subscriptionOfKey(row.ordering_key) === subscriptionId;
  return groups.candidates.has(row.message_group_id);
}

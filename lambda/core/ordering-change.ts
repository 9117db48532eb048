/**
 * Changing a subscription's `ordering` (CONTRACT §5): it changes the ordering key of its next
 * events, so an event still pending under the old key and one accepted under the new key would be
 * in different message groups, delivered concurrently, out of order. The change is therefore
 * refused while the lag view shows any of the subscription's events pending.
 */
import { ErrorCode, type ErrorDetail, type Refusal } from './api-error.js';
import type { GroupLag } from './lag.js';
import { subscriptionOfKey, type Ordering } from './routing.js';

/** Groups named one by one in a refusal's details; the rest are counted. */
const MAX_GROUPS_NAMED = 10;

/** What the lag view holds of one subscription's events. */
export interface SubscriptionPending {
  /** Pending events in the groups below; in a partition this counts other subscriptions' events too. */
  readonly events: number;
  /** The groups that may hold its pending events, worst (deepest) first. */
  readonly groups: readonly GroupLag[];
  /** Whether some of those groups are partitions, whose depth is not the subscription's alone. */
  readonly isShared: boolean;
}

/**
 * Whether a group may hold pending events of the subscription. A per-key group is one key: its
 * own. A partition holds the keys it names (`orderingKeys`); one that names none (more keys than
 * it tracks) may hold any, and is counted, so that a change is never allowed on a guess.
 */
function mayHoldPendingOf(group: GroupLag, subscriptionId: string): boolean {
  // Its backlog parked out of the queue, or its group held for its pause, waits for its resume
  // under the ordering it had, whatever the depth says.
  if (group.parkedSubscriptions !== undefined && Object.hasOwn(group.parkedSubscriptions, subscriptionId)) return true;
  if (group.hold?.subscriptionId === subscriptionId) return true;
  // A failing, held or parked head is pending whatever the depth says (a count can drift; a
  // stuck key must not hide): then the keys below decide.
  const isWaiting = group.headFailingSince !== undefined || group.hold !== undefined || (group.parkedSubscriptions !== undefined && Object.keys(group.parkedSubscriptions).length > 0);
  if (group.depth <= 0 && !isWaiting) return false;
  const keys = group.orderingKey === undefined ? group.orderingKeys : [group.orderingKey];
  if (keys === undefined) return true;
  const isHead = group.headOrderingKey !== undefined && subscriptionOfKey(group.headOrderingKey) === subscriptionId;
  return isHead || keys.some((key) => subscriptionOfKey(key) === subscriptionId);
}

/** The subscription's pending events, from the active groups of the lag view (`listActiveGroups`). */
export function pendingOfSubscription(groups: readonly GroupLag[], subscriptionId: string): SubscriptionPending {
  const holding = groups.filter((group) => mayHoldPendingOf(group, subscriptionId)).sort((a, b) => b.depth - a.depth);
  return {
    events: holding.reduce((sum, group) => sum + Math.max(group.depth, 0), 0),
    groups: holding,
    isShared: holding.some((group) => group.orderingKey === undefined),
  };
}

/**
 * The refusal of a change of `ordering` from `from` to `to`, or undefined when it may be written:
 * always when nothing of the subscription is pending. The details name the pending groups.
 */
export function refuseOrderingChange(input: { readonly from: Ordering; readonly to: Ordering; readonly pending: SubscriptionPending }): Refusal | undefined {
  const { from, to, pending } = input;
  if (from === to || pending.groups.length === 0) return undefined;
  const upTo = pending.isShared ? 'up to ' : '';
  const summary = `${upTo}${pending.events} pending event${pending.events === 1 ? '' : 's'} in ${pending.groups.length} message group${pending.groups.length === 1 ? '' : 's'}`;
  const named: ErrorDetail[] = pending.groups.slice(0, MAX_GROUPS_NAMED).map((group) => ({
    path: 'ordering',
    message: `message group ${group.messageGroupId}: ${group.depth} pending${group.orderingKey === undefined ? ' (a partition: other keys included)' : ''}`,
  }));
  const more = pending.groups.length - named.length;
  return {
    code: ErrorCode.orderingChangePending,
    message:
      `Changing ordering from "${from}" to "${to}" would deliver the ${summary} out of order with the events after them; nothing was changed. ` +
      'Wait until the lag view shows none of them (delivered or dead-lettered), then PUT again.',
    details: [{ path: 'ordering', message: summary }, ...named, ...(more > 0 ? [{ path: 'ordering', message: `and ${more} more message group${more === 1 ? '' : 's'}` }] : [])],
  };
}

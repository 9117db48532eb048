/**
 * Changing a subscription's `ordering` (docs/api.md#subscriptions): it changes the ordering key of its next
 * events, so an event still pending under the old key and one accepted under the new key would be
 * in different message groups, delivered concurrently, out of order. The change is therefore
 * refused while the lag view shows any of the subscription's events pending.
 *
 * The lag view counts an event only after its request enqueued it, so a check then a write would
 * race ingest: a request that read the old ordering before the write, and enqueues after the
 * check, leaves the key pending under both. A change that must not race them is made in two steps, as a routing
 * switch is (routing-settings.ts): `POST …/ordering-change` marks it begun on the subscription, and
 * ingest, replays and redrives hold the subscription's events while the mark is fresh; a PUT, once
 * every request that read the old ordering has finished, checks the lag view again and makes the
 * change, or lifts the mark when events are pending. A PUT without a mark changes at once, as the
 * contract's PUT replaces a subscription (the race documented).
 */
import { ErrorCode, type ErrorDetail, type Refusal } from './api-error.js';
import type { GroupLag } from './lag.js';
import { PAUSE_GRACE_SECONDS } from './routing-settings.js';
import { subscriptionOfKey, type Ordering } from './routing.js';

/** A change of `ordering` begun by a PUT and not yet made: on the subscription until made or lifted. */
export interface OrderingChangeMark {
  /** The ordering asked for. */
  readonly ordering: Ordering;
  /** When it was begun, by the clock of the function that began it. */
  readonly startedAt: string;
}

/**
 * How long after the mark a repeated PUT may make the change: a request that read the ordering
 * before the mark finishes within PAUSE_GRACE_SECONDS (ingest's timeout and API Gateway's), and a
 * request that read the subscription a moment after it may have read it without the mark (ingest
 * reads eventually consistent, "usually within a second"), and the lag view's index lags its
 * table as briefly. The rest is a margin for the clocks of the hosts that stamp and compare it.
 */
export const ORDERING_CHANGE_WAIT_SECONDS = 2 * PAUSE_GRACE_SECONDS;

/** Until when after the mark a repeated PUT makes the change; later, the PUT begins it again. */
export const ORDERING_CHANGE_WINDOW_SECONDS = 180;

/**
 * How long ingest, replays and redrives hold a marked subscription's events, by their own clocks:
 * past the window by two minutes, so that a host whose clock runs up to that much ahead of the
 * PUT's still holds them while the change may be made. A mark no PUT made nor lifted (its PUT
 * never repeated) lets the events go after this.
 */
export const ORDERING_CHANGE_HOLD_SECONDS = ORDERING_CHANGE_WINDOW_SECONDS + 120;

/** Whether a subscription's events are held for its change of `ordering`: a mark younger than the hold, by this clock. */
export function isHeldForOrderingChange(mark: Pick<OrderingChangeMark, 'startedAt'> | undefined, now: Date): boolean {
  return mark !== undefined && now.getTime() - Date.parse(mark.startedAt) < ORDERING_CHANGE_HOLD_SECONDS * 1000;
}

/**
 * Whether a replay or redrive of the subscription may run now: it enqueues under the events' own
 * keys, so it is refused (`ingest_paused`) while a change of `ordering` is under way.
 */
export function checkOrderingChangeHold(mark: OrderingChangeMark | undefined, now: Date, action: 'replay' | 'redrive'): Refusal | undefined {
  if (mark === undefined || !isHeldForOrderingChange(mark, now)) return undefined;
  return { code: ErrorCode.ingestPaused, message: `The subscription is changing its ordering (to "${mark.ordering}" since ${mark.startedAt}); ${action} after the change is made or given up.` };
}

/** What a PUT asking for another `ordering` does, by the mark it finds. */
export const OrderingChangeStepKind = {
  /** No mark for this ordering in its window: a PUT changes at once, `POST …/ordering-change` begins one. */
  begin: 'begin',
  /** Marked too recently: a request that read the old ordering may still be enqueueing. */
  wait: 'wait',
  /** Marked long enough ago: check the lag view (strongly), then make the change, or lift the mark. */
  make: 'make',
} as const;
export type OrderingChangeStep =
  | { readonly kind: typeof OrderingChangeStepKind.begin }
  | { readonly kind: typeof OrderingChangeStepKind.wait; readonly mark: OrderingChangeMark; readonly retryAfterSeconds: number }
  | { readonly kind: typeof OrderingChangeStepKind.make; readonly mark: OrderingChangeMark };

/** The step of a PUT asking for `to`, from the mark on the subscription; `waitSeconds` is ORDERING_CHANGE_WAIT_SECONDS but in tests. */
export function nextOrderingChangeStep(input: { readonly mark: OrderingChangeMark | undefined; readonly to: Ordering; readonly now: Date; readonly waitSeconds: number }): OrderingChangeStep {
  const { mark, to, now, waitSeconds } = input;
  if (mark === undefined || mark.ordering !== to) return { kind: OrderingChangeStepKind.begin };
  const ageMs = now.getTime() - Date.parse(mark.startedAt);
  // A mark from the future (another host's clock ahead of this one) waits like a fresh one.
  if (ageMs < waitSeconds * 1000) return { kind: OrderingChangeStepKind.wait, mark, retryAfterSeconds: Math.max(1, Math.ceil((waitSeconds * 1000 - ageMs) / 1000)) };
  if (ageMs >= ORDERING_CHANGE_WINDOW_SECONDS * 1000) return { kind: OrderingChangeStepKind.begin };
  return { kind: OrderingChangeStepKind.make, mark };
}

/** The answer to a PUT that comes too early to make the change begun for its ordering: the same PUT again, after the delay. */
export function orderingChangeUnderWay(input: { readonly from: Ordering; readonly mark: OrderingChangeMark; readonly retryAfterSeconds: number }): Refusal {
  const { from, mark, retryAfterSeconds } = input;
  return {
    code: ErrorCode.orderingChangePending,
    message:
      `The change of ordering from "${from}" to "${mark.ordering}" began at ${mark.startedAt}: the subscription's new events are refused (503 ingest_paused) while requests that read the old ordering finish. ` +
      `PUT the same again after ${retryAfterSeconds} s (Retry-After) and within ${ORDERING_CHANGE_WINDOW_SECONDS} s of the start to make it; nothing was changed.`,
    details: [{ path: 'ordering', message: `change to "${mark.ordering}" under way since ${mark.startedAt}` }],
  };
}

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

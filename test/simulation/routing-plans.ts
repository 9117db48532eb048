/**
 * Plans and checks for the paths that change where a key's events go: the routing
 * switch (PARTITION_COUNT changed by the drain-and-switch of `PUT /v1/routing`, README "routing")
 * and a subscription's `ordering` changed by a PUT, each racing traffic, crashes and faults; and
 * SQS's documented vagaries that those paths lean on (lagging approximate counters, receives that
 * return fewer messages than are available). The harness draws them into a fraction of the random
 * plans and runs the actors below; the checks here hold in every plan.
 */
import { publicEventIdOf, readQueuedMessage } from '../../lambda/core/event.js';
import { SeededRandom } from './random.js';

/** One routing switch: at `atMs` an operator pauses ingest, asks for `partitionCount` (null: one group per key) until granted, then resumes. */
export interface RoutingSwitchStep {
  readonly atMs: number;
  readonly partitionCount: number | null;
}

/** One change of a subscription's `ordering`, asked for at `atMs` and repeated while refused. */
export interface OrderingChangeStep {
  readonly atMs: number;
  readonly keyIndex: number;
  readonly ordering: 'subscription' | 'resource';
}

/** SQS as documented, not as an emulator answers: counters that lag, receives that return fewer. */
export interface SqsVagaries {
  /** How far back (ms) a GetQueueAttributes read may report the queue: AWS says at least a minute. */
  readonly counterLagMs: number;
  /** The chance that a receive returns a shorter prefix of what is available. */
  readonly shortReceiveChance: number;
}

export interface RoutingPlanParts {
  readonly routingSwitches?: readonly RoutingSwitchStep[];
  readonly orderingChanges?: readonly OrderingChangeStep[];
  readonly sqsVagaries?: SqsVagaries;
}

/**
 * How long an operator keeps asking for a switch before resuming ingest without it: the queue may
 * not drain while receivers refuse (a held or failing head keeps its group pending).
 */
const SWITCH_PATIENCE_MS = 6 * 60_000;
/** How long an operator keeps asking for an ordering change while events are pending. */
const ORDERING_PATIENCE_MS = 10 * 60_000;

/**
 * The share of random plans that change an ordering. The scenario `orderingChange` found a product
 * bug here (seeds 2, 33, 37, 40 of 1–40): the guard read the lag view, which counts an event only
 * after its request enqueued it, and then wrote the change, so a request that read the old
 * ordering and enqueued between the two left the key pending under both. The change is now made
 * in two steps (ordering-change.ts): the first PUT marks it and ingest holds the subscription's
 * events; the PUT repeated after the wait checks the lag view strongly and makes it.
 */
const ORDERING_CHANGES_SHARE = 0.15;

/**
 * A plan's routing switches, ordering changes and SQS vagaries, each in a fraction of the plans:
 * from a source of its own, so that the regression seeds' other draws stay as they were.
 */
export function routingPlansOf(seed: number, keys: number, healAtMs: number, partitionCount: number | undefined, byResource: readonly boolean[] = []): RoutingPlanParts {
  const random = new SeededRandom(seed ^ 0x4f1bbcdc);
  const sqsVagaries: SqsVagaries | undefined = random.chance(0.5) ? { counterLagMs: random.pick([60_000, 90_000]), shortReceiveChance: random.pick([0.1, 0.3]) } : undefined;
  let routingSwitches: RoutingSwitchStep[] | undefined;
  // Not in crash-loop plans (hours of faults): the queue cannot drain, the switch waits in vain.
  if (random.chance(0.1) && healAtMs <= 10 * 60_000) {
    const first = partitionCount === undefined ? random.between(1, 3) : random.chance(0.5) ? null : partitionCount + 1;
    routingSwitches = [{ atMs: random.between(1_000, Math.max(2_000, healAtMs)), partitionCount: first }];
    // And back, now and then: per-key groups to partitions and back again.
    if (random.chance(0.5)) routingSwitches.push({ atMs: random.between(1_000, 60_000), partitionCount: partitionCount ?? null });
  }
  let orderingChanges: OrderingChangeStep[] | undefined;
  if (random.chance(ORDERING_CHANGES_SHARE)) {
    const keyIndex = random.int(keys);
    const count = random.between(1, 2);
    const isInitiallyByResource = byResource[keyIndex] === true;
    // Alternating from the key's own ordering, in the order they are asked for: to the other one, then back.
    const times = Array.from({ length: count }, () => random.between(500, Math.max(1_000, healAtMs))).sort((a, b) => a - b);
    orderingChanges = times.map((atMs, index) => ({ atMs, keyIndex, ordering: (index % 2 === 0) === isInitiallyByResource ? 'subscription' : 'resource' }));
  }
  return { ...(sqsVagaries === undefined ? {} : { sqsVagaries }), ...(routingSwitches === undefined ? {} : { routingSwitches }), ...(orderingChanges === undefined ? {} : { orderingChanges }) };
}

/** An API answer as the harness's `call` gives it: undefined when the invocation crashed or timed out. */
export type ApiAnswer = { readonly statusCode: number; readonly body: unknown } | undefined;

/** What the routing operator needs from the harness. */
export interface RoutingOperatorDeps {
  readonly steps: readonly RoutingSwitchStep[];
  /** Calls an operations route (`GET /v1/routing`, `POST /v1/routing/pause`, …). */
  readonly call: (routeKey: string, body?: unknown) => Promise<ApiAnswer>;
  readonly sleep: (ms: number) => Promise<void>;
  /** Simulated ms since the start. */
  readonly sinceStart: () => number;
  readonly random: SeededRandom;
  /** Told each switch granted, with the moment (ms since the start). */
  readonly onSwitched: (partitionCount: number | null, atMs: number) => void;
}

/**
 * The drain-and-switch as an operator runs it: pause ingest, ask for the switch until it is
 * granted (refused while the pause is recent or anything is pending; a crash or fault answers
 * nothing), resume. The first step waits for its moment; each later one follows the previous
 * resume by its `atMs`. Ingest is resumed whatever happened, so that producers finish.
 */
export async function runRoutingOperator(deps: RoutingOperatorDeps): Promise<void> {
  const { steps, call, sleep, sinceStart, random } = deps;
  for (const [index, step] of steps.entries()) {
    await sleep(index === 0 ? Math.max(0, step.atMs - sinceStart()) : step.atMs);
    let paused: ApiAnswer;
    while ((paused = await call('POST /v1/routing/pause'))?.statusCode !== 200) await sleep(1_000);
    // The version the pause answered with; read again only after a conflict. Each read of the
    // routing, like each switch, reads every shard of the lag view: asked every 10–30 s, as a person would.
    let version: number | undefined = (paused?.body as { version: number }).version;
    const pausedAt = sinceStart();
    while (sinceStart() - pausedAt < SWITCH_PATIENCE_MS) {
      await sleep(random.between(10_000, 30_000));
      if (version === undefined) {
        const read = await call('GET /v1/routing');
        if (read?.statusCode !== 200) continue;
        version = (read.body as { version: number }).version;
      }
      const answer = await call('PUT /v1/routing', { partition_count: step.partitionCount, expected_version: version });
      if (answer?.statusCode === 200) {
        deps.onSwitched(step.partitionCount, sinceStart());
        break;
      }
      if (answer === undefined || (answer.body as { error?: { code?: string } }).error?.code === 'version_conflict') version = undefined;
    }
    while ((await call('POST /v1/routing/resume'))?.statusCode !== 200) await sleep(1_000);
  }
}

/** One ordering change granted: when the request that made it was sent and answered (ms since the start). */
export interface GrantedOrderingChange {
  readonly subscriptionId: string;
  readonly ordering: 'subscription' | 'resource';
  readonly askedAtMs: number;
  readonly answeredAtMs: number;
}

/** What the ordering-change actor needs from the harness. */
export interface OrderingChangerDeps {
  readonly steps: readonly OrderingChangeStep[];
  /** `POST …/ordering-change` for the subscription of `keyIndex`. */
  readonly beginChange: (keyIndex: number, ordering: 'subscription' | 'resource') => Promise<ApiAnswer>;
  /** PUTs the subscription of `keyIndex` as created, with `ordering`. */
  readonly putOrdering: (keyIndex: number, ordering: 'subscription' | 'resource') => Promise<ApiAnswer>;
  readonly sleep: (ms: number) => Promise<void>;
  readonly sinceStart: () => number;
  readonly random: SeededRandom;
  readonly onChanged: (change: GrantedOrderingChange) => void;
}

/**
 * Changes orderings as a careful tenant would, with no race: begin the change
 * (`POST …/ordering-change`, answered 202 with the change under way, or refused while events are
 * pending), then, a few seconds later, PUT the other `ordering` (refused until the change's wait is
 * over). Begun again each round (the same change while it is under way), and the PUT only after a
 * 202 of that round: a PUT with no change under way changes at once, racing requests under way,
 * as the docs say. For a while, then given up.
 */
export async function runOrderingChanger(deps: OrderingChangerDeps): Promise<void> {
  const { steps, beginChange, putOrdering, sleep, sinceStart, random } = deps;
  for (const step of [...steps].sort((a, b) => a.atMs - b.atMs)) {
    await sleep(Math.max(0, step.atMs - sinceStart()));
    const firstAskedAt = sinceStart();
    while (sinceStart() - firstAskedAt < ORDERING_PATIENCE_MS) {
      const begun = await beginChange(step.keyIndex, step.ordering);
      if (process.env.SIM_TRACE !== undefined) console.log('ordering-changer begin', sinceStart(), step.ordering, begun?.statusCode, String(JSON.stringify(begun?.body)).slice(0, 200));
      if (begun?.statusCode === 202) {
        await sleep(random.between(5_000, 20_000));
        const askedAtMs = sinceStart();
        const answer = await putOrdering(step.keyIndex, step.ordering);
        if (process.env.SIM_TRACE !== undefined) console.log('ordering-changer put', askedAtMs, sinceStart(), step.ordering, answer?.statusCode, String(JSON.stringify(answer?.body)).slice(0, 200));
        if (answer?.statusCode === 200 || answer?.statusCode === 201) {
          deps.onChanged({ subscriptionId: `key-${step.keyIndex}`, ordering: step.ordering, askedAtMs, answeredAtMs: sinceStart() });
          break;
        }
        continue;
      }
      await sleep(random.between(5_000, 20_000));
    }
  }
}

/**
 * The ordering key an event accepted by a request sent at `sentAtMs` and answered at
 * `answeredAtMs` must have: the subscription's ordering in force over the whole request, or both
 * candidates when a change was made while the request ran (either is right then).
 */
export function orderingsInForce(initial: 'subscription' | 'resource', changes: readonly GrantedOrderingChange[], sentAtMs: number, answeredAtMs: number): readonly ('subscription' | 'resource')[] {
  let before = initial;
  const during: ('subscription' | 'resource')[] = [];
  for (const change of [...changes].sort((a, b) => a.answeredAtMs - b.answeredAtMs)) {
    if (change.answeredAtMs < sentAtMs) before = change.ordering;
    else if (change.askedAtMs <= answeredAtMs) during.push(change.ordering);
  }
  return [...new Set([before, ...during])];
}

/** A message's subscription and stored ordering key, as its body says. */
function keysOf(body: string): readonly { readonly subscriptionId: string; readonly orderingKey: string; readonly eventId: string; readonly isRedelivery: boolean }[] {
  const read = readQueuedMessage(body);
  if ('reason' in read) return [];
  return read.items.flatMap((item) =>
    'queued' in item ? [{ subscriptionId: item.queued.event.subscription_id ?? '', orderingKey: item.queued.ordering_key, eventId: publicEventIdOf(item.queued), isRedelivery: item.queued.redrive !== undefined }] : [],
  );
}

/**
 * Nothing of one subscription may be pending in two message groups at once unless the two are
 * different keys of one ordering (two resources): the same key in two groups (a routing switch
 * that did not wait for the queue to drain), or first deliveries under keys of both orderings (an
 * `ordering` changed while events were pending) would be delivered concurrently, out of order.
 * Answers a violation per conflict among the messages in the queue now.
 */
export function createPendingGroupsCheck(isTaken: (eventId: string) => boolean = () => false): (messages: Iterable<{ readonly messageId: string; readonly messageGroupId: string; readonly body: string }>) => string[] {
  const cache = new Map<string, readonly { readonly subscriptionId: string; readonly orderingKey: string; readonly eventId: string; readonly isRedelivery: boolean }[]>();
  return (messages) => {
    const groupsOfKey = new Map<string, Set<string>>();
    /** Each subscription's first deliveries in the queue, by whether their key is a resource's, by event. */
    const modesOfSubscription = new Map<string, Map<boolean, Map<string, string>>>();
    const found: string[] = [];
    for (const message of messages) {
      let keys = cache.get(message.messageId);
      if (keys === undefined) {
        keys = keysOf(message.body);
        cache.set(message.messageId, keys);
      }
      for (const { subscriptionId, orderingKey, eventId, isRedelivery } of keys) {
        const groups = groupsOfKey.get(orderingKey) ?? new Set<string>();
        groupsOfKey.set(orderingKey, groups.add(message.messageGroupId));
        // A replay or a redrive sends each event under the key it was accepted with: across a
        // change of ordering, under both, each key in its order (docs/guarantees.md); the order
        // checks hold them to that.
        if (isRedelivery) continue;
        // A copy of an event a receiver took already (a resend's, or one left by a request that
        // failed after its send) is skipped as settled: no first delivery waits there.
        if (isTaken(eventId)) continue;
        const isByResource = orderingKey.startsWith('[');
        const modes = modesOfSubscription.get(subscriptionId) ?? new Map<boolean, Map<string, string>>();
        const events = modes.get(isByResource) ?? new Map<string, string>();
        if (!events.has(eventId)) events.set(eventId, message.messageGroupId);
        modes.set(isByResource, events);
        modesOfSubscription.set(subscriptionId, modes);
      }
    }
    // Two copies of one event, one under each ordering (a resend's after a change, of an event whose
    // first request failed after its send), are one event: the consumer delivers the copy its record
    // names and skips the other, and the delivery checks judge which. Two events are not.
    for (const [subscriptionId, modes] of modesOfSubscription) {
      const byResource = modes.get(true);
      const bySubscription = modes.get(false);
      if (byResource === undefined || bySubscription === undefined) continue;
      const onlyBySubscription = [...bySubscription].filter(([eventId]) => !byResource.has(eventId));
      const onlyByResource = [...byResource].filter(([eventId]) => !bySubscription.has(eventId));
      const pair = onlyBySubscription.flatMap(([first, firstGroup]) => onlyByResource.filter(([, group]) => group !== firstGroup).map(([second, group]) => [first, firstGroup, second, group] as const))[0];
      if (pair !== undefined) found.push(`${subscriptionId}: pending under both orderings at once, in message groups ${pair[1]} (${pair[0]}) and ${pair[3]} (${pair[2]})`);
    }
    for (const [orderingKey, groups] of groupsOfKey) if (groups.size > 1) found.push(`${orderingKey.trimEnd()}: pending in ${groups.size} message groups at once (${[...groups].join(', ')})`);
    return [...new Set(found)];
  };
}

/** One request's accepted events, and when the request was sent and answered (ms since the start). */
export interface AcceptedRequest {
  readonly subscriptionId: string;
  readonly eventIds: readonly string[];
  readonly sentAtMs: number;
  readonly answeredAtMs: number;
}

/**
 * Across an ordering change: an event accepted after the change was answered is first delivered
 * only once every event of its subscription accepted before the change was asked was delivered or
 * given up (the guard of `ordering-change.ts` refuses while any is pending, for this reason).
 * Exempt, as in the order check, an earlier event SQS's backstop moved out before that delivery.
 */
export function checkAcrossOrderingChanges(input: {
  readonly changes: readonly GrantedOrderingChange[];
  readonly accepted: readonly AcceptedRequest[];
  /** An event's first normal (not redelivered) delivery: its place in the receivers' order and its time (ms since the start). */
  readonly firstDelivery: (eventId: string) => { readonly order: number; readonly atMs: number } | undefined;
  /** When the event was first given up, ms since the start. */
  readonly givenUpAtMs: (eventId: string) => number | undefined;
  readonly wasMovedByBackstop: (eventId: string, beforeMs: number) => boolean;
}): string[] {
  const found: string[] = [];
  for (const change of input.changes) {
    const own = input.accepted.filter((request) => request.subscriptionId === change.subscriptionId);
    const before = own.filter((request) => request.answeredAtMs < change.askedAtMs).flatMap((request) => request.eventIds);
    const after = own.filter((request) => request.sentAtMs > change.answeredAtMs).flatMap((request) => request.eventIds);
    for (const eventId of after) {
      const delivery = input.firstDelivery(eventId);
      if (delivery === undefined) continue;
      for (const earlier of before) {
        const earlierDelivery = input.firstDelivery(earlier);
        const givenUpAt = input.givenUpAtMs(earlier);
        const wasSettled = (earlierDelivery !== undefined && earlierDelivery.order < delivery.order) || (givenUpAt !== undefined && givenUpAt <= delivery.atMs);
        if (!wasSettled && !input.wasMovedByBackstop(earlier, delivery.atMs)) {
          found.push(`${change.subscriptionId}: ${eventId}, accepted after its ordering changed to "${change.ordering}" at ${change.answeredAtMs} ms, was delivered before ${earlier}, accepted before the change, was delivered or given up`);
        }
      }
    }
  }
  return found;
}

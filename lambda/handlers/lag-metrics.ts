/**
 * Lag job: scheduled every minute, reads the sparse index of active groups (never the whole
 * table), takes out of it the groups idle for `IDLE_GROUP_MINUTES`, and publishes, through
 * Powertools Metrics (EMF), what the lag alarms watch: the longest wait of any group, the stalled
 * groups, the backlog and the keys falling behind. It also logs
 * the worst keys falling behind with their rates, one line each, which the dashboard tabulates,
 * and lets go any group still held for a subscription no longer paused (see `letGoStaleHolds`).
 * Last, it steps each replay under way that nobody steps (see `stepReplaysUnderWay`), so that a
 * replay ends without its caller.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { FALLING_BEHIND_MESSAGE, idleCutoff, LAG_METRICS, NEAR_RETENTION_MESSAGE, summarizeLag, type GroupLag, type LagSummary, type LagThresholds } from '../core/lag.js';
import { holdsSettledBefore, letGoStaleHolds, type HoldPorts } from '../core/pause.js';
import { consumerTimeoutSeconds, lagThresholdsOf, REDRIVE_STEP_SECONDS } from '../config.js';
import { stepMarkedParks } from '../core/park.js';
import { checkReplay, stepReplaysUnderWay } from '../core/replay.js';
import { messageGroupIdFor } from '../core/routing.js';
import { createEventStore, EVENT_STORE_ACCESS } from '../adapters/event-store.js';
import { createKeptEventStore, KEPT_EVENT_STORE_ACCESS } from '../adapters/kept-event-store.js';
import { createOrderingKeyStore, ORDERING_KEY_STORE_ACCESS } from '../adapters/ordering-key-store.js';
import { createParkStore, PARK_STORE_ACCESS } from '../adapters/park-store.js';
import { createPayloadBucket } from '../adapters/payload-bucket.js';
import { createReplayStateStore, REPLAY_STATE_STORE_ACCESS } from '../adapters/replay-state-store.js';
import { createSettingsStore, SETTINGS_STORE_ACCESS } from '../adapters/settings-store.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createSubscriptionStore, pauseOf, SUBSCRIPTION_STORE_ACCESS } from '../adapters/subscription-store.js';
import type { LambdaHandler } from './logger.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

/**
 * The adapter methods the lag job calls: the index of active groups, read, and its idle groups
 * taken out; and for a group held for a subscription no longer paused, the subscription read and
 * the hold let go.
 */
const USES = {
  // A replay's step counts what it sends in the groups it goes to.
  groups: uses(GROUP_STORE_ACCESS, ['listActiveForgettingIdle', 'forgetHold', 'recordRedrive']),
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['get']),
  // A replay's step sends, as the operations function's does. Never a receive.
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['letGo', 'sendBatch']),
  // A replay's step: the replays under way, their kept events, records and numbers, and the routing.
  replayStates: uses(REPLAY_STATE_STORE_ACCESS, ['listUnderWay', 'claim', 'save', 'finish']),
  keptEvents: uses(KEPT_EVENT_STORE_ACCESS, ['readWindow', 'findNumbers']),
  events: uses(EVENT_STORE_ACCESS, ['readOutcomes']),
  orderingKeys: uses(ORDERING_KEY_STORE_ACCESS, ['findDelivered']),
  settings: uses(SETTINGS_STORE_ACCESS, ['getRouting']),
  // A resumed subscription's parked backlog: read, sent (above), removed, each park ended once its copies were settled.
  parks: uses(PARK_STORE_ACCESS, ['readState', 'readParked', 'removeParked', 'end', 'unmark']),
};

/** What the lag job's calls need from IAM: exactly what the stack grants it. */
export const LAG_METRICS_ACCESS = accessOf(USES);

/** The resources the lag job uses: it is told their names, and reads them at cold start. */
export const LAG_METRICS_RESOURCES = resourcesOf(LAG_METRICS_ACCESS);

export type LagMetricsHandler = () => Promise<LagSummary>;

export interface LagMetricsHandlerDeps {
  /** The active groups, each group idle since before `idleBefore` taken out of the index. */
  readonly listActiveForgettingIdle: (idleBefore: string) => Promise<GroupLag[]>;
  readonly publish: (summary: LagSummary) => void;
  /** Lets go the groups held for subscriptions no longer paused. */
  readonly holds: HoldPorts;
  /** The consumer's timeout: a hold made longer ago than this can no longer be applied again (see pause.ts). */
  readonly consumerTimeoutSeconds: number;
  readonly thresholds: LagThresholds;
  readonly now: () => Date;
  readonly logger: Logger;
  /** Steps each replay under way that nobody steps; absent when no event is kept (`EVENT_RETENTION_DAYS=0`). */
  readonly stepReplays?: () => Promise<{ readonly stepped: readonly string[]; readonly done: number }>;
  /** Sends back the parked backlog of each resumed subscription marked on these groups (see `core/park.ts`); absent in tests of the rest. */
  readonly stepParks?: (groups: readonly GroupLag[]) => Promise<{ readonly subscriptions: number; readonly sent: number; readonly ended: number }>;
}

export function createLagMetricsHandler(deps: LagMetricsHandlerDeps): LagMetricsHandler {
  return async () => {
    const now = deps.now();
    const groups = await deps.listActiveForgettingIdle(idleCutoff(now));
    try {
      const released = await letGoStaleHolds(groups, deps.holds, holdsSettledBefore(now, deps.consumerTimeoutSeconds));
      if (released > 0) deps.logger.warn('held groups of resumed subscriptions let go', { released_groups: released });
    } catch (error) {
      deps.logger.error('held groups of resumed subscriptions not let go; the next minute tries again', { error });
    }
    const summary = summarizeLag(groups, now, deps.thresholds);
    deps.publish(summary);
    const { worstFallingBehind, nearRetention, ...counts } = summary;
    deps.logger.info('lag published', { activeGroups: groups.length, ...counts });
    // Every run while it lasts: SQS drops the oldest events of these groups when their time is up.
    for (const group of nearRetention) {
      deps.logger.warn(NEAR_RETENTION_MESSAGE, {
        message_group_id: group.messageGroupId,
        subscription_id: group.subscriptionId,
        oldest_wait_seconds: group.oldestWaitSeconds,
        seconds_left: group.secondsLeft,
      });
    }
    // One line per key, under a fixed message: the dashboard's query of the worst keys reads these.
    // The group id (a digest) and numbers only: an ordering key may hold a producer's resource id.
    for (const [rank, row] of worstFallingBehind.entries()) {
      deps.logger.warn(FALLING_BEHIND_MESSAGE, {
        rank: rank + 1,
        message_group_id: row.message_group_id,
        accepted_per_minute: row.accepted_per_minute,
        delivered_per_minute: row.delivered_per_minute,
        depth: row.depth,
        oldest_wait_seconds: row.oldest_wait_seconds,
      });
    }
    try {
      const parks = await deps.stepParks?.(groups);
      if (parks !== undefined && parks.subscriptions > 0) deps.logger.info('parked backlogs sent back', { ...parks });
    } catch (error) {
      deps.logger.error('parked backlogs not sent back; the next minute tries again', { error });
    }
    try {
      const replays = await deps.stepReplays?.();
      if (replays !== undefined && replays.stepped.length > 0) deps.logger.info('replays stepped', { subscriptions: replays.stepped.length, done: replays.done });
    } catch (error) {
      deps.logger.error('replays not stepped; the next minute tries again', { error });
    }
    return summary;
  };
}

/** Publishes a summary as one EMF record in the `OrderedWebhooks` namespace, dimension `service=lag`. */
export function publishWithPowertools(metrics: Metrics): (summary: LagSummary) => void {
  return (summary) => {
    metrics.addMetric(LAG_METRICS.maxOldestWaitSeconds, MetricUnit.Seconds, summary.maxOldestWaitSeconds);
    metrics.addMetric(LAG_METRICS.stalledGroups, MetricUnit.Count, summary.stalledGroups);
    metrics.addMetric(LAG_METRICS.backlog, MetricUnit.Count, summary.backlog);
    metrics.addMetric(LAG_METRICS.fallingBehindKeys, MetricUnit.Count, summary.fallingBehindKeys);
    metrics.addMetric(LAG_METRICS.heldGroups, MetricUnit.Count, summary.heldGroups);
    metrics.addMetric(LAG_METRICS.oldestHeldSeconds, MetricUnit.Seconds, summary.oldestHeldSeconds);
    metrics.publishStoredMetrics();
  };
}

/**
 * The lag job from a configuration and clients, publishing its summary with `publish`: Lambda's
 * through EMF, the local stack's nowhere (it has no CloudWatch).
 */
export function wireLagJob(input: HandlerWiring<(typeof LAG_METRICS_RESOURCES)[number]>, publish: (summary: LagSummary) => void, now: () => Date = () => new Date()): LagMetricsHandler {
  const groups = pick(createGroupStore(input.dynamo, input.resources.groupsTable), USES.groups);
  const subscriptions = pick(createSubscriptionStore(input.dynamo, input.resources.subscriptionsTable), USES.subscriptions);
  const deliveryQueue = pick(createDeliveryQueue(input.sqs, input.resources.deliveryQueueUrl, input.logger), USES.deliveryQueue);
  const { resources, config, dynamo } = input;
  const settings = pick(createSettingsStore(dynamo, resources.settingsTable, config.partitionCount), USES.settings);
  const replayPorts = {
    states: pick(createReplayStateStore(dynamo, resources.subscriptionsTable), USES.replayStates),
    // The kept-event store's own calls on the bucket are among its declared accesses.
    kept: pick(createKeptEventStore(dynamo, { tableName: resources.deadLettersTable, retentionDays: config.eventRetentionDays, payloads: createPayloadBucket(input.s3, resources.payloadBucket) }), USES.keptEvents),
    readRecords: pick(createEventStore(dynamo, { tableName: resources.eventsTable, ttlDays: config.deliveryStateTtlDays }), USES.events).readOutcomes,
    findDelivered: pick(createOrderingKeyStore(dynamo, resources.orderingKeysTable), USES.orderingKeys).findDelivered,
    enqueue: deliveryQueue.sendBatch,
    recordReplayed: groups.recordRedrive,
  };
  const stepReplays = async (): Promise<{ readonly stepped: readonly string[]; readonly done: number }> => {
    const routing = await settings.getRouting();
    // As a replay's own route: never while the routing may be switching.
    if (checkReplay(routing) !== undefined) return { stepped: [], done: 0 };
    const deadline = Date.now() + REDRIVE_STEP_SECONDS * 1000;
    return stepReplaysUnderWay({ ...replayPorts, groupOf: (key) => messageGroupIdFor(key, routing.partitionCount), now, hasTime: () => Date.now() < deadline });
  };
  const parks = pick(
    createParkStore(dynamo, {
      tables: { deadLetters: resources.deadLettersTable, subscriptions: resources.subscriptionsTable, groups: resources.groupsTable },
      payloads: createPayloadBucket(input.s3, resources.payloadBucket),
    }),
    USES.parks,
  );
  const stepParks = (active: readonly GroupLag[]): ReturnType<typeof stepMarkedParks> => {
    const deadline = Date.now() + REDRIVE_STEP_SECONDS * 1000;
    return stepMarkedParks(active, {
      readSubscription: async (subscriptionId) => {
        const subscription = await subscriptions.get(subscriptionId);
        return subscription === undefined ? undefined : { isPaused: pauseOf(subscription) !== undefined, marks: new Map(Object.entries(subscription.parked_groups ?? {})) };
      },
      store: parks,
      enqueue: deliveryQueue.sendBatch,
      hasTime: () => Date.now() < deadline,
      now,
    });
  };
  return createLagMetricsHandler({
    ...(config.eventRetentionDays === 0 ? {} : { stepReplays }),
    stepParks,
    listActiveForgettingIdle: groups.listActiveForgettingIdle,
    publish,
    holds: {
      isPaused: async (subscriptionId) => {
        const subscription = await subscriptions.get(subscriptionId);
        return subscription !== undefined && pauseOf(subscription) !== undefined;
      },
      letGo: deliveryQueue.letGo,
      forgetHold: groups.forgetHold,
    },
    consumerTimeoutSeconds: consumerTimeoutSeconds(input.config),
    thresholds: lagThresholdsOf(input.config),
    now,
    logger: input.logger,
  });
}

/** The lag job as Lambda runs it, its summary published through Powertools Metrics. */
export function wireLagMetricsHandler(input: HandlerWiring<(typeof LAG_METRICS_RESOURCES)[number]>, metrics: Metrics): LagMetricsHandler {
  return wireLagJob(input, publishWithPowertools(metrics));
}

/** Lambda entry point (EventBridge schedule). */
export const handler: LambdaHandler<unknown, LagSummary> = lambdaEntry('lagMetrics', LAG_METRICS_RESOURCES, (wiring) =>
  wireLagMetricsHandler(wiring, new Metrics({ namespace: LAG_METRICS.namespace, serviceName: LAG_METRICS.service })),
);

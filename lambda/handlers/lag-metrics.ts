/**
 * Lag job: scheduled every minute, reads the sparse index of active groups (never the whole
 * table), takes out of it the groups idle for `IDLE_GROUP_MINUTES`, and publishes, through
 * Powertools Metrics (EMF), what the lag alarms watch: the longest wait of any group, the stalled
 * groups, the backlog and the keys falling behind. It also logs
 * the worst keys falling behind with their rates, one line each, which the dashboard tabulates,
 * and lets go any group still held for a subscription no longer paused (see `letGoStaleHolds`).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { FALLING_BEHIND_MESSAGE, idleCutoff, LAG_METRICS, NEAR_RETENTION_MESSAGE, summarizeLag, type GroupLag, type LagSummary, type LagThresholds } from '../core/lag.js';
import { holdsSettledBefore, letGoStaleHolds, type HoldPorts } from '../core/pause.js';
import { consumerTimeoutSeconds } from '../config.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createSubscriptionStore, pauseOf, SUBSCRIPTION_STORE_ACCESS } from '../adapters/subscription-store.js';
import { FIFO_QUEUE_SETTINGS } from '../resources.js';
import type { LambdaHandler } from './logger.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

/**
 * The adapter methods the lag job calls: the index of active groups, read, and its idle groups
 * taken out; and for a group held for a subscription no longer paused, the subscription read and
 * the hold let go.
 */
const USES = {
  groups: uses(GROUP_STORE_ACCESS, ['listActiveForgettingIdle', 'forgetHold']),
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['get']),
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['letGo']),
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
  return createLagMetricsHandler({
    listActiveForgettingIdle: groups.listActiveForgettingIdle,
    publish,
    holds: {
      isPaused: async (subscriptionId) => {
        const subscription = await subscriptions.get(subscriptionId);
        return subscription !== undefined && pauseOf(subscription) !== undefined;
      },
      letGo: pick(createDeliveryQueue(input.sqs, input.resources.deliveryQueueUrl, input.logger), USES.deliveryQueue).letGo,
      forgetHold: groups.forgetHold,
    },
    consumerTimeoutSeconds: consumerTimeoutSeconds(input.config),
    thresholds: {
      stallThresholdSeconds: input.config.stallThresholdSeconds,
      fallingBehindWaitSeconds: input.config.fallingBehindWaitSeconds,
      heldAgeWarnSeconds: input.config.heldAgeAlarmSeconds,
      retentionSeconds: FIFO_QUEUE_SETTINGS.retentionSeconds,
    },
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

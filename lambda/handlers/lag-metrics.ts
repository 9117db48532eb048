/**
 * Lag job: scheduled every minute, reads the sparse index of active groups (never the whole
 * table), takes out of it the groups idle for `IDLE_GROUP_MINUTES`, and publishes, through
 * Powertools Metrics (EMF), what the lag alarms watch: the longest wait of any group, the stalled
 * groups, the backlog and the keys falling behind. It also logs
 * the worst keys falling behind with their rates, one line each, which the dashboard tabulates.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { FALLING_BEHIND_MESSAGE, idleCutoff, LAG_METRICS, summarizeLag, type GroupLag, type LagSummary, type LagThresholds } from '../core/lag.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import type { LambdaHandler } from './logger.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

/** The adapter methods the lag job calls: the index of active groups, read, and its idle groups taken out. */
const USES = {
  groups: uses(GROUP_STORE_ACCESS, ['listActiveForgettingIdle']),
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
  readonly thresholds: LagThresholds;
  readonly now: () => Date;
  readonly logger: Logger;
}

export function createLagMetricsHandler(deps: LagMetricsHandlerDeps): LagMetricsHandler {
  return async () => {
    const now = deps.now();
    const groups = await deps.listActiveForgettingIdle(idleCutoff(now));
    const summary = summarizeLag(groups, now, deps.thresholds);
    deps.publish(summary);
    const { worstFallingBehind, ...counts } = summary;
    deps.logger.info('lag published', { activeGroups: groups.length, ...counts });
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
    metrics.publishStoredMetrics();
  };
}

/** The lag job from a configuration and clients. */
export function wireLagMetricsHandler(input: Omit<HandlerWiring<(typeof LAG_METRICS_RESOURCES)[number]>, 'sqs'>, metrics: Metrics): LagMetricsHandler {
  return createLagMetricsHandler({
    listActiveForgettingIdle: pick(createGroupStore(input.dynamo, input.resources.groupsTable), USES.groups).listActiveForgettingIdle,
    publish: publishWithPowertools(metrics),
    thresholds: { stallThresholdSeconds: input.config.stallThresholdSeconds, fallingBehindWaitSeconds: input.config.fallingBehindWaitSeconds },
    now: () => new Date(),
    logger: input.logger,
  });
}

/** Lambda entry point (EventBridge schedule). */
export const handler: LambdaHandler<unknown, LagSummary> = lambdaEntry('lagMetrics', LAG_METRICS_RESOURCES, (wiring) =>
  wireLagMetricsHandler(wiring, new Metrics({ namespace: LAG_METRICS.namespace, serviceName: LAG_METRICS.service })),
);

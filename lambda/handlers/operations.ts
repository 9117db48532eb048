/**
 * Operations function: the lag view and dead letters (docs/api.md#routes), and the operator's actions
 * added to the contract: redrive a subscription's dead letters, skip a stuck head, and the
 * drain-and-switch of the routing. Each capability's routes live in `operations/<capability>.ts`;
 * this module composes them into one function and wires its adapters.
 */
import { lagThresholdsOf, REDRIVE_STEP_SECONDS } from '../config.js';
import { importBackstopStep, type BackstopImportStep } from '../core/backstop-import.js';
import { redriveStep, type RedriveStep } from '../core/redrive.js';
import { requestReplay } from '../core/replay.js';
import type { MetricsSource } from '../core/metrics.js';
import { messageGroupIdFor } from '../core/routing.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { BACKSTOP_QUEUE_ACCESS, createBackstopQueue } from '../adapters/backstop-queue.js';
import { createDeadLetterStore, DEAD_LETTER_STORE_ACCESS } from '../adapters/dead-letter-store.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createEventStore, EVENT_STORE_ACCESS } from '../adapters/event-store.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createOrderingKeyStore, ORDERING_KEY_STORE_ACCESS } from '../adapters/ordering-key-store.js';
import { createKeptEventStore, KEPT_EVENT_STORE_ACCESS } from '../adapters/kept-event-store.js';
import { createCloudWatchClient } from '../adapters/aws-clients.js';
import { createMetricsSource, METRICS_SOURCE_ACCESS } from '../adapters/metrics-source.js';
import { createPayloadBucket } from '../adapters/payload-bucket.js';
import { createReplayStateStore, REPLAY_STATE_STORE_ACCESS } from '../adapters/replay-state-store.js';
import { createSettingsStore, SETTINGS_STORE_ACCESS } from '../adapters/settings-store.js';
import { createSubscriptionStore, orderingChangeOf, SUBSCRIPTION_STORE_ACCESS } from '../adapters/subscription-store.js';
import { SWITCH_WAIT_SECONDS } from '../core/routing-settings.js';
import { createHttpHandler, HTTP_LOG_CONTEXT, type HttpEntry, type HttpHandler } from './http.js';
import { createDeadLetterRoutes, type DeadLetterRoutesDeps } from './operations/dead-letters.js';
import { createLagRoutes, type LagRoutesDeps } from './operations/lag.js';
import { createMetricsRoutes, type MetricsRoutesDeps } from './operations/metrics.js';
import { createRoutingRoutes, type RoutingRoutesDeps } from './operations/routing.js';
import { createReplayRoutes, type ReplayRoutesDeps } from './operations/replay.js';
import { createSkipRoutes, type SkipRoutesDeps } from './operations/skip.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

/**
 * The adapter methods the operations function calls, route by route: the wiring takes these
 * alone, and its function is granted their accesses.
 */
const USES = {
  // GET /v1/lag and the routing switch's pending work list the index; skip reads a group; the
  // import records progress; redrive moves counts.
  groups: uses(GROUP_STORE_ACCESS, ['listActiveGroups', 'getGroup', 'recordProgress', 'recordRedrive', 'countDeadLetter', 'uncountDeadLetter']),
  // GET /v1/dead-letters lists rows; redrive reads, removes and counts; the import writes.
  deadLetters: uses(DEAD_LETTER_STORE_ACCESS, ['listRows', 'readPage', 'remove', 'count', 'put']),
  // The import: whether an imported event was settled, then its dead-lettering.
  // A replay reads the records of the events it replays.
  events: uses(EVENT_STORE_ACCESS, ['isSettled', 'findSequence', 'markDeadLettered', 'readOutcomes']),
  // A replay reads kept events and their runs' numbers, and keeps its state on the subscription.
  keptEvents: uses(KEPT_EVENT_STORE_ACCESS, ['readWindow', 'findNumbers', 'newestAcceptedAt']),
  replayStates: uses(REPLAY_STATE_STORE_ACCESS, ['start', 'claim', 'save', 'finish', 'cancel']),
  // A redrive names an existing subscription.
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['get']),
  // Skip marks the head; the import reads it for the event's sequence.
  // A replay: how far each key's deliveries recorded on the key reach.
  orderingKeys: uses(ORDERING_KEY_STORE_ACCESS, ['findHead', 'requestSkip', 'findDelivered']),
  // GET and PUT /v1/routing, pause and resume; redrive routes by the routing in force.
  settings: uses(SETTINGS_STORE_ACCESS, ['getRouting', 'setPaused', 'switchRouting']),
  // The import of SQS's backstop: never a send, never a purge.
  backstopQueue: uses(BACKSTOP_QUEUE_ACCESS, ['receive', 'release', 'remove']),
  // Redrive enqueues; the routing view and switch read the counts. Never a receive.
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['sendBatch', 'counts']),
  // GET /v1/metrics reads the consumer's counts per minute back from CloudWatch.
  metrics: uses(METRICS_SOURCE_ACCESS, ['readConsumerSeries']),
};

/** What the operations function's calls need from IAM: exactly what the stack grants it. */
export const OPERATIONS_ACCESS = accessOf(USES);

/** The resources the operations function uses: it is told their names, and reads them at cold start. */
export const OPERATIONS_RESOURCES = resourcesOf(OPERATIONS_ACCESS);

export type { RoutingPorts } from './operations/routing.js';

/** Everything the operator's routes need: the union of each capability's dependencies. */
export type OperationsHandlerDeps = LagRoutesDeps & MetricsRoutesDeps & DeadLetterRoutesDeps & SkipRoutesDeps & RoutingRoutesDeps & ReplayRoutesDeps;

/** The operator's routes, each capability in its own module, behind one dispatcher and one function. */
export function createOperationsHandler(deps: OperationsHandlerDeps): HttpHandler {
  return createHttpHandler(
    {
      ...createLagRoutes(deps),
      ...createMetricsRoutes(deps),
      ...createDeadLetterRoutes(deps),
      ...createSkipRoutes(deps),
      ...createRoutingRoutes(deps),
      ...createReplayRoutes(deps),
    },
    deps.logger,
  );
}

type OperationsWiring = HandlerWiring<(typeof OPERATIONS_RESOURCES)[number]>;

/** The operations handler from a configuration and clients: shared by Lambda and the local stack. */
/** What the Lambda entry and the local stack give the operations function, and what only the local stack's tests change. */
export interface OperationsOptions {
  /** Where `GET /v1/metrics` reads the consumer's counts: CloudWatch in Lambda, the local stack's recorder locally. */
  readonly metricsSource: MetricsSource;
  /**
   * How long after a pause the routing switch waits.
   * @default SWITCH_WAIT_SECONDS: API Gateway's limit on a request still enqueueing under the old routing, then SQS's counters settling
   */
  readonly pauseGraceSeconds?: number;
  /**
   * The clock of the operator's routes: the minute the lag view's rates are of, the time of a pause,
   * the stamps of a redrive, an import and a replay.
   * @default the system clock
   */
  readonly now?: () => Date;
}

export function wireOperationsHandler(input: OperationsWiring, options: OperationsOptions): HttpHandler {
  const { dynamo, sqs, resources, config, logger } = input;
  const now = options.now ?? (() => new Date());
  const deadLetters = pick(
    createDeadLetterStore(dynamo, {
      tableName: resources.deadLettersTable,
      ttlDays: config.deliveryStateTtlDays,
      // The dead-letter store's own calls on the bucket are among its declared accesses.
      payloads: createPayloadBucket(input.s3, resources.payloadBucket),
    }),
    USES.deadLetters,
  );
  const groups = pick(createGroupStore(dynamo, resources.groupsTable), USES.groups);
  const settings = pick(createSettingsStore(dynamo, resources.settingsTable, config.partitionCount), USES.settings);
  const subscriptions = pick(createSubscriptionStore(dynamo, resources.subscriptionsTable), USES.subscriptions);
  const orderingKeys = pick(createOrderingKeyStore(dynamo, resources.orderingKeysTable), USES.orderingKeys);
  const backstop = pick(createBackstopQueue(sqs, resources.deadLetterQueueUrl), USES.backstopQueue);
  const deliveryQueue = pick(createDeliveryQueue(sqs, resources.deliveryQueueUrl, logger), USES.deliveryQueue);
  const events = pick(createEventStore(dynamo, { tableName: resources.eventsTable, ttlDays: config.deliveryStateTtlDays }), USES.events);
  const importBackstop = (): Promise<BackstopImportStep> => {
    const deadline = Date.now() + REDRIVE_STEP_SECONDS * 1000;
    return importBackstopStep({
      receive: backstop.receive,
      release: backstop.release,
      remove: backstop.remove,
      findHead: orderingKeys.findHead,
      deadLetters,
      events,
      recordProgress: (progress) => groups.recordProgress(progress, now()),
      countDeadLetter: groups.countDeadLetter,
      now,
      hasTime: () => Date.now() < deadline,
    });
  };
  const redrive = async (subscriptionId: string): Promise<RedriveStep> => {
    const deadline = Date.now() + REDRIVE_STEP_SECONDS * 1000;
    const { partitionCount } = await settings.getRouting();
    return redriveStep(subscriptionId, {
      store: deadLetters,
      enqueue: deliveryQueue.sendBatch,
      recordRedriven: ({ letter, toGroup, at }) => groups.recordRedrive({ toGroup, orderingKey: letter.orderingKey, events: 1, at }),
      countDeadLetter: groups.countDeadLetter,
      uncountDeadLetter: groups.uncountDeadLetter,
      groupOf: (orderingKey) => messageGroupIdFor(orderingKey, partitionCount),
      now,
      hasTime: () => Date.now() < deadline,
    });
  };
  const keptEvents = pick(
    createKeptEventStore(dynamo, { tableName: resources.deadLettersTable, retentionDays: config.eventRetentionDays, payloads: createPayloadBucket(input.s3, resources.payloadBucket) }),
    USES.keptEvents,
  );
  const replayStates = pick(createReplayStateStore(dynamo, resources.subscriptionsTable), USES.replayStates);
  const replay: ReplayRoutesDeps['replay'] = async (subscriptionId, window) => {
    const deadline = Date.now() + REDRIVE_STEP_SECONDS * 1000;
    const { partitionCount } = await settings.getRouting();
    return requestReplay(subscriptionId, window, {
      states: replayStates,
      kept: keptEvents,
      readRecords: events.readOutcomes,
      findDelivered: orderingKeys.findDelivered,
      enqueue: deliveryQueue.sendBatch,
      recordReplayed: groups.recordRedrive,
      groupOf: (orderingKey) => messageGroupIdFor(orderingKey, partitionCount),
      now,
      hasTime: () => Date.now() < deadline,
    });
  };
  return createOperationsHandler({
    replay,
    cancelReplay: (subscriptionId) => replayStates.cancel(subscriptionId, now().toISOString()),
    newestAcceptedAt: keptEvents.newestAcceptedAt,
    eventRetentionDays: config.eventRetentionDays,
    listActiveGroups: groups.listActiveGroups,
    getGroup: groups.getGroup,
    listDeadLetters: deadLetters.listRows,
    readDeadLetters: deadLetters.readPage,
    findSubscription: async (subscriptionId) => {
      const subscription = await subscriptions.get(subscriptionId);
      return subscription === undefined ? undefined : { orderingChange: orderingChangeOf(subscription) };
    },
    requestSkip: orderingKeys.requestSkip,
    redrive,
    importBackstop,
    routing: {
      get: settings.getRouting,
      setPaused: settings.setPaused,
      switchRouting: settings.switchRouting,
      pendingWork: async () => {
        const [counts, active] = await Promise.all([deliveryQueue.counts(), groups.listActiveGroups()]);
        // A parked backlog is pending out of the queue: its copies go back to the group it left.
        return { ...counts, groupsWithPending: active.filter((group) => group.depth > 0 || Object.keys(group.parkedSubscriptions ?? {}).length > 0).length };
      },
    },
    pauseGraceSeconds: options.pauseGraceSeconds ?? SWITCH_WAIT_SECONDS,
    now,
    fallingBehindWaitSeconds: config.fallingBehindWaitSeconds,
    metricsSource: options.metricsSource,
    lagThresholds: lagThresholdsOf(config),
    logger,
  });
}

/** Lambda entry point. */
export const handler: HttpEntry = lambdaEntry(
  'operations',
  OPERATIONS_RESOURCES,
  (wiring) => wireOperationsHandler(wiring, { metricsSource: pick(createMetricsSource(createCloudWatchClient()), USES.metrics) }),
  HTTP_LOG_CONTEXT,
);

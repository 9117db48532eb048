/**
 * Consumer function: invoked by the SQS event source mapping with up to 10 records, answers with
 * a partial batch response (`ReportBatchItemFailures`). Throws only for faults.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import { CONSUMER_BATCH_SIZE, maxEventsPerMessage, PauseEvacuation, recordTimeBudgetMs, visibilityCeilingSeconds, type Config } from '../config.js';
import { likelyDrainedGroups, processBatch, type VisibilityChange } from '../core/consumer-batch.js';
import { hasProgress, type GroupProgress } from '../core/lag.js';
import { toMessageDecisions, unpackRecords } from '../core/message-packs.js';
import { confirmHolds, endBatch, pauseNoticesOf, type HoldPorts, type PauseNotice } from '../core/pause.js';
import { CONSUMER_METRICS, countOutcomes, type ConsumerCounts } from '../core/consumer-metrics.js';
import { isSuccess, type ConsumerRecord, type DeliveryPorts } from '../core/delivery.js';
import { stepUnpark } from '../core/park.js';
import type { RetryPolicy } from '../core/retry-policy.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { BACKSTOP_QUEUE_ACCESS, createBackstopQueue } from '../adapters/backstop-queue.js';
import { createDeadLetterStore, DEAD_LETTER_STORE_ACCESS } from '../adapters/dead-letter-store.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createEventStore, EVENT_STORE_ACCESS } from '../adapters/event-store.js';
import { createKeptEventStore, KEPT_EVENT_STORE_ACCESS } from '../adapters/kept-event-store.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createOrderingKeyStore, ORDERING_KEY_STORE_ACCESS } from '../adapters/ordering-key-store.js';
import { createParkStore, PARK_STORE_ACCESS } from '../adapters/park-store.js';
import { createPayloadBucket } from '../adapters/payload-bucket.js';
import { createNoticeTopic, NOTICE_TOPIC_ACCESS } from '../adapters/notice-topic.js';
import { createSubscriptionStore, pauseOf, SUBSCRIPTION_STORE_ACCESS, toDeliveryTarget } from '../adapters/subscription-store.js';
import { createWebhookSender } from '../adapters/webhook-sender.js';
import { createRecordLog, logBatchPlan } from './consumer-log.js';
import type { LambdaHandler } from './logger.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

/** What the consumer reads of Lambda's context: the time left before the function's timeout. */
export type ConsumerContext = Pick<Context, 'getRemainingTimeInMillis'>;

export type ConsumerHandler = (event: SQSEvent, context: ConsumerContext) => Promise<SQSBatchResponse>;

/** The fields of an SQS record the consumer relies on, validated at the edge. */
const sqsRecordSchema = z.object({
  messageId: z.string().min(1),
  receiptHandle: z.string().min(1),
  body: z.string(),
  attributes: z.object({
    MessageGroupId: z.string().min(1),
    ApproximateReceiveCount: z.coerce.number().int().positive().catch(1),
    // Only a plain decimal number is compared with others; anything else is as good as absent.
    SequenceNumber: z.string().regex(/^\d{1,40}$/).optional().catch(undefined),
  }),
});

/**
 * Reads an SQS record. One that lacks what a FIFO record always has is kept as its own group and
 * marked, so that it is dead-lettered as malformed without holding anything back.
 */
export function toConsumerRecord(record: unknown, index: number): ConsumerRecord {
  const parsed = sqsRecordSchema.safeParse(record);
  if (parsed.success) {
    const { messageId, receiptHandle, body, attributes } = parsed.data;
    return {
      messageId,
      receiptHandle,
      body,
      messageGroupId: attributes.MessageGroupId,
      receiveCount: attributes.ApproximateReceiveCount,
      ...(attributes.SequenceNumber === undefined ? {} : { sequenceNumber: attributes.SequenceNumber }),
    };
  }
  const loose = z.object({ messageId: z.string(), receiptHandle: z.string(), body: z.string() }).partial().catch({}).parse(record);
  const messageId = loose.messageId ?? `record-${index}`;
  const problem = parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ');
  return { messageId, receiptHandle: loose.receiptHandle ?? '', body: loose.body ?? '', messageGroupId: `malformed-${messageId}`, receiveCount: 1, problem };
}

export interface ConsumerHandlerDeps {
  readonly ports: DeliveryPorts;
  readonly policy: RetryPolicy;
  /** The time a record needs left to be started (`recordTimeBudgetMs` of the configuration). */
  readonly recordTimeBudgetMs: number;
  readonly changeVisibility: (changes: readonly VisibilityChange[]) => Promise<void>;
  /** Records a group's lag after the batch: one write per group per batch. */
  readonly recordGroupProgress: (progress: GroupProgress, now: Date) => Promise<void>;
  /** What the batch's holds of paused subscriptions' groups need after they are recorded (see `confirmHolds`). */
  readonly holds: HoldPorts;
  /** Publishes the notice of an automatic pause (the notice topic). */
  readonly publishPauseNotice: (notice: PauseNotice) => Promise<void>;
  /** Publishes the invocation's counts (CloudWatch EMF in Lambda). */
  readonly publishCounts: (counts: ConsumerCounts) => void;
  readonly logger: Logger;
}

export function createConsumerHandler(deps: ConsumerHandlerDeps): ConsumerHandler {
  return async (event, context) => {
    const messages = event.Records.map(toConsumerRecord);
    // One record per event: the core never sees a pack, and SQS is told about messages at the end.
    const records = unpackRecords(messages);
    const recordLog = createRecordLog(records);
    // A batch often holds several events of one subscription: read each subscription once per invocation.
    const targets = new Map<string, ReturnType<DeliveryPorts['findTarget']>>();
    const findTarget: DeliveryPorts['findTarget'] = (subscriptionId) => {
      const known = targets.get(subscriptionId) ?? deps.ports.findTarget(subscriptionId);
      targets.set(subscriptionId, known);
      return known;
    };
    let failedAttempts = 0;
    let faults = 0;
    const send: DeliveryPorts['send'] = async (url, request) => {
      const result = await deps.ports.send(url, request);
      if (!isSuccess(result)) failedAttempts += 1;
      return result;
    };
    const onFault = (error: unknown, record: ConsumerRecord): void => {
      faults += 1;
      deps.logger.error('record failed with a fault; it stays queued', { ...recordLog.keysOf(record.messageId), error });
    };
    const budget = { hasTimeFor: (ms: number) => context.getRemainingTimeInMillis() >= ms, recordMs: deps.recordTimeBudgetMs };
    const plan = await processBatch(records, recordLog.observe({ ...deps.ports, findTarget, send }), deps.policy, onFault, budget);
    logBatchPlan(deps.logger, plan, recordLog, context.getRemainingTimeInMillis());
    const decisions = toMessageDecisions(plan, records);
    const now = deps.ports.now();
    const isLikelyDrained = likelyDrainedGroups(messages, CONSUMER_BATCH_SIZE);
    const recordProgress = async (progress: GroupProgress): Promise<boolean> => {
      try {
        await deps.recordGroupProgress({ ...progress, isLikelyDrained: isLikelyDrained(progress.messageGroupId) }, now);
        return true;
      } catch (error) {
        // Lag is what operators see, not what receivers get: deliveries already made stand.
        deps.logger.error('group lag not recorded', { message_group_id: progress.messageGroupId, error });
        return false;
      }
    };
    // Holds recorded before they are applied, then confirmed (see `endBatch`); each step's failure logged.
    const { holds, unrecorded } = await endBatch(plan.groups.filter(hasProgress), decisions.visibilityChanges, {
      recordProgress,
      changeVisibility: async (changes) => {
        try {
          await deps.changeVisibility(changes);
        } catch (error) {
          // The failures are still reported: the messages come back after their current visibility
          // timeout, later than planned and still in order.
          deps.logger.error('visibility changes failed', { error, changes: changes.length });
        }
      },
      confirmHolds: async (recorded) => {
        deps.logger.info('groups held for paused subscriptions', { groups: recorded.map(({ messageGroupId, hold }) => ({ message_group_id: messageGroupId, subscription_id: hold.subscriptionId })) });
        try {
          await confirmHolds(recorded, deps.holds);
        } catch (error) {
          // The holds stand: a resume, or the lag job within a minute, lets them go (see pause.ts).
          deps.logger.error('holds not confirmed', { error, groups: recorded.length });
        }
      },
    });
    if (unrecorded > 0) deps.logger.warn('holds not recorded: applied for a minute only, and made again at the next receive', { unrecorded, recorded: holds.length });
    // One notice per subscription this batch paused, once its groups are held.
    const groupOf = new Map(records.map((record) => [record.messageId, record.messageGroupId]));
    const notices = pauseNoticesOf([...plan.outcomes].map(([messageId, outcome]) => [groupOf.get(messageId) ?? '', outcome] as const));
    await Promise.all(
      notices.map(async (notice) => {
        deps.logger.warn('subscription paused automatically: its key failed for AUTO_PAUSE_AFTER_SECONDS; resume it once its endpoint is fixed', { ...notice });
        try {
          await deps.publishPauseNotice(notice);
        } catch (error) {
          // The pause stands and shows in GET /v1/subscriptions/{id} and the lag view; the line above is its notice.
          deps.logger.error('pause notice not published', { subscription_id: notice.subscription_id, error });
        }
      }),
    );
    deps.publishCounts(countOutcomes(plan.outcomes.values(), { failedAttempts, faults }));
    return { batchItemFailures: decisions.failedMessageIds.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

/** Publishes counts as one EMF record in the `OrderedWebhooks` namespace, dimension `service=consumer`. */
export function publishCountsWithPowertools(metrics: Metrics): (counts: ConsumerCounts) => void {
  return (counts) => {
    metrics.addMetric(CONSUMER_METRICS.delivered, MetricUnit.Count, counts.delivered);
    metrics.addMetric(CONSUMER_METRICS.failedAttempts, MetricUnit.Count, counts.failedAttempts);
    metrics.addMetric(CONSUMER_METRICS.deadLettered, MetricUnit.Count, counts.deadLettered);
    metrics.addMetric(CONSUMER_METRICS.faults, MetricUnit.Count, counts.faults);
    metrics.publishStoredMetrics();
  };
}

/**
 * The adapter methods the consumer calls: the wiring takes these alone, and its function is
 * granted their accesses. Lambda's poller makes its own calls on the delivery queue (receive,
 * delete, read attributes) with the function's role: the stack grants those with the event source
 * mapping, not here.
 */
const USES = {
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['get', 'pause']),
  events: uses(EVENT_STORE_ACCESS, ['findSettled', 'recordSequence', 'markDelivered', 'markDeliveredUnlessSettled', 'markDeadLettered']),
  orderingKeys: uses(ORDERING_KEY_STORE_ACCESS, ['beginAttempt', 'beginBatch', 'findNumber', 'recordFailure', 'recordGivenUp', 'recordRecovered', 'grantAttempts', 'findDelivered', 'recordDelivered']),
  deadLetters: uses(DEAD_LETTER_STORE_ACCESS, ['put']),
  keptEvents: uses(KEPT_EVENT_STORE_ACCESS, ['keepNumbers']),
  backstopQueue: uses(BACKSTOP_QUEUE_ACCESS, ['quarantine']),
  groups: uses(GROUP_STORE_ACCESS, ['recordProgress', 'countDeadLetter', 'forgetHold']),
  notices: uses(NOTICE_TOPIC_ACCESS, ['publishPause']),
  // Whatever PAUSE_EVACUATION says now: a park made under `store` is kept in order until it ends.
  parks: uses(PARK_STORE_ACCESS, ['readState', 'park', 'noteReturned', 'readParked', 'removeParked', 'end']),
  // Events parked behind a resumed backlog still coming back are sent back at once.
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['changeVisibility', 'letGo', 'sendBatch']),
};

/** What the consumer's calls need from IAM: exactly what the stack grants its function, beside its event source mapping's. */
export const CONSUMER_ACCESS = accessOf(USES);

/** The resources the consumer uses: it is told their names, and reads them at cold start. */
export const CONSUMER_RESOURCES = resourcesOf(CONSUMER_ACCESS);

type ConsumerWiring = HandlerWiring<(typeof CONSUMER_RESOURCES)[number]>;

/** Connects the delivery ports to DynamoDB, SQS and HTTP. */
export function createDeliveryPorts(input: ConsumerWiring): DeliveryPorts {
  const { dynamo, resources, config } = input;
  const queue = pick(createDeliveryQueue(input.sqs, resources.deliveryQueueUrl, input.logger), USES.deliveryQueue);
  const parks = pick(
    createParkStore(dynamo, {
      tables: { deadLetters: resources.deadLettersTable, subscriptions: resources.subscriptionsTable, groups: resources.groupsTable },
      payloads: createPayloadBucket(input.s3, resources.payloadBucket),
    }),
    USES.parks,
  );
  const subscriptions = pick(createSubscriptionStore(dynamo, resources.subscriptionsTable), USES.subscriptions);
  return {
    store: {
      ...pick(createEventStore(dynamo, { tableName: resources.eventsTable, ttlDays: config.deliveryStateTtlDays }), USES.events),
      ...pick(createOrderingKeyStore(dynamo, resources.orderingKeysTable), USES.orderingKeys),
    },
    // Strongly consistent: a batch that starts after a pause was answered must see it.
    findTarget: async (subscriptionId) => toDeliveryTarget(await subscriptions.get(subscriptionId)),
    send: createWebhookSender({ timeoutMs: config.deliveryTimeoutMs, allowPrivateEndpoints: config.allowPrivateEndpoints }),
    deadLetters: pick(
      createDeadLetterStore(dynamo, {
        tableName: resources.deadLettersTable,
        ttlDays: config.deliveryStateTtlDays,
        // The dead-letter store's own calls on the bucket are among its declared accesses.
        payloads: createPayloadBucket(input.s3, resources.payloadBucket),
      }),
      USES.deadLetters,
    ),
    ...(config.eventRetentionDays === 0
      ? {}
      : {
          keepNumbers: pick(
            createKeptEventStore(dynamo, { tableName: resources.deadLettersTable, retentionDays: config.eventRetentionDays, payloads: createPayloadBucket(input.s3, resources.payloadBucket) }),
            USES.keptEvents,
          ).keepNumbers,
        }),
    parks,
    sendParkedBack: async (subscriptionId, messageGroupId) => {
      const deadline = Date.now() + SEND_BACK_SECONDS * 1000;
      // No mark to remove here (its id unknown): the lag job removes a mark whose park is gone.
      await stepUnpark(subscriptionId, new Map([[messageGroupId, '']]), { store: { ...parks, unmark: async () => undefined }, enqueue: queue.sendBatch, hasTime: () => Date.now() < deadline, now: () => new Date() });
    },
    countDeadLetter: pick(createGroupStore(dynamo, resources.groupsTable), USES.groups).countDeadLetter,
    quarantine: pick(createBackstopQueue(input.sqs, resources.deadLetterQueueUrl), USES.backstopQueue).quarantine,
    pause: async ({ subscriptionId, reason, now }) => {
      const subscription = await subscriptions.pause({ subscriptionId, reason, now });
      const pause = subscription === undefined ? undefined : pauseOf(subscription);
      // The pause made now carries this call's time; one in force before keeps its own.
      return pause === undefined ? undefined : { pause, isNew: pause.pausedAt === now };
    },
    now: () => new Date(),
    random: Math.random,
  };
}

/** The most a batch spends sending parked events back (see `DeliveryPorts.sendParkedBack`): a few seconds of the consumer's timeout. */
const SEND_BACK_SECONDS = 5;

/** The retry policy of a configuration. */
export function retryPolicyOf(config: Config): RetryPolicy {
  return {
    maxDeliveryAttempts: config.maxDeliveryAttempts,
    onExhausted: config.onExhausted,
    retryBaseSeconds: config.retryBaseSeconds,
    retryMaxSeconds: config.retryMaxSeconds,
    visibilityCeilingSeconds: visibilityCeilingSeconds(config),
    eventsPerMessage: maxEventsPerMessage(config),
    autoPauseAfterSeconds: config.autoPauseAfterSeconds,
    parkAfterSeconds: config.pauseEvacuation === PauseEvacuation.store ? config.heldAgeAlarmSeconds : undefined,
  };
}

/** Wraps the delivery ports, e.g. for the local stack's tests to inject a crash at a chosen point. */
export type DeliveryPortsWrapper = (ports: DeliveryPorts) => DeliveryPorts;

/**
 * Everything the consumer needs, from a configuration and clients: shared by Lambda and the local
 * stack. Counts go to `publishCounts`: CloudWatch EMF in Lambda; the local stack's recorder
 * (local/metrics-recorder.ts), as it has no CloudWatch.
 */
export function wireConsumerHandler(
  input: ConsumerWiring,
  wrapPorts: DeliveryPortsWrapper = (ports) => ports,
  publishCounts: (counts: ConsumerCounts) => void = () => undefined,
): ConsumerHandler {
  const queue = pick(createDeliveryQueue(input.sqs, input.resources.deliveryQueueUrl, input.logger), USES.deliveryQueue);
  const groups = pick(createGroupStore(input.dynamo, input.resources.groupsTable), USES.groups);
  const notices = pick(createNoticeTopic(input.sns, input.resources.noticeTopic), USES.notices);
  const ports = wrapPorts(createDeliveryPorts(input));
  return createConsumerHandler({
    publishCounts,
    publishPauseNotice: notices.publishPause,
    ports,
    policy: retryPolicyOf(input.config),
    recordTimeBudgetMs: recordTimeBudgetMs(input.config),
    changeVisibility: queue.changeVisibility,
    recordGroupProgress: groups.recordProgress,
    holds: { isPaused: async (subscriptionId) => (await ports.findTarget(subscriptionId))?.pause !== undefined, letGo: queue.letGo, forgetHold: groups.forgetHold },
    logger: input.logger,
  });
}

/** Lambda entry point. */
export const handler: LambdaHandler<SQSEvent, SQSBatchResponse> = lambdaEntry('consumer', CONSUMER_RESOURCES, (wiring) =>
  wireConsumerHandler(
    wiring,
    undefined,
    publishCountsWithPowertools(new Metrics({ namespace: CONSUMER_METRICS.namespace, serviceName: CONSUMER_METRICS.service })),
  ),
);

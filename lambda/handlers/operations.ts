/**
 * Operations function: the lag view and dead letters (CONTRACT §2), and the operator's actions
 * added to the contract: redrive a subscription's dead letters, skip a stuck head, and the
 * drain-and-switch of the routing.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import { REDRIVE_STEP_SECONDS } from '../config.js';
import { ErrorCode, errorResponse, type ApiResponse } from '../core/api-error.js';
import { eventIdSchema, parseWith, readJsonBody, subscriptionIdSchema, type Parsed } from '../core/event.js';
import { lagPositionSchema, toLagPage, type GroupLag } from '../core/lag.js';
import { encodeCursor, parsePageQuery } from '../core/paging.js';
import { importBackstopStep, type BackstopImportStep } from '../core/backstop-import.js';
import { redriveStep, type RedriveStep } from '../core/redrive.js';
import { messageGroupIdFor } from '../core/routing.js';
import { checkSwitch, toRoutingView, type PendingWork, type RoutingSettings, type SwitchRefusal } from '../core/routing-settings.js';
import { findSkipTarget } from '../core/skip.js';
import type { DeadLetterRow } from '../core/dead-letter.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { BACKSTOP_QUEUE_ACCESS, createBackstopQueue } from '../adapters/backstop-queue.js';
import { createDeadLetterStore, DEAD_LETTER_STORE_ACCESS } from '../adapters/dead-letter-store.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createEventStore, EVENT_STORE_ACCESS } from '../adapters/event-store.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createOrderingKeyStore, ORDERING_KEY_STORE_ACCESS } from '../adapters/ordering-key-store.js';
import { createPayloadBucket } from '../adapters/payload-bucket.js';
import { createSettingsStore, SETTINGS_STORE_ACCESS } from '../adapters/settings-store.js';
import { createSubscriptionStore, SUBSCRIPTION_STORE_ACCESS } from '../adapters/subscription-store.js';
import { createHttpHandler, type HttpHandler } from './http.js';
import { wiredOnFirstCall, wiringFromEnvironment, type HandlerWiring } from './wiring.js';

/**
 * The adapter methods the operations function calls, route by route: the wiring takes these
 * alone, and its function is granted their accesses.
 */
const USES = {
  // GET /v1/lag and the routing switch's pending work list the index; skip reads a group; the
  // import records progress; redrive moves counts.
  groups: uses(GROUP_STORE_ACCESS, ['listActiveGroups', 'getGroup', 'recordProgress', 'recordRedrive']),
  // GET /v1/dead-letters lists rows; redrive reads, removes and counts; the import writes.
  deadLetters: uses(DEAD_LETTER_STORE_ACCESS, ['listRows', 'readPage', 'remove', 'count', 'put']),
  // The import: whether an imported event was settled, then its dead-lettering.
  events: uses(EVENT_STORE_ACCESS, ['isSettled', 'findSequence', 'markDeadLettered']),
  // A redrive names an existing subscription.
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['get']),
  // Skip marks the head; the import reads it for the event's sequence.
  orderingKeys: uses(ORDERING_KEY_STORE_ACCESS, ['findHead', 'requestSkip']),
  // GET and PUT /v1/routing, pause and resume; redrive routes by the routing in force.
  settings: uses(SETTINGS_STORE_ACCESS, ['getRouting', 'setPaused', 'switchRouting']),
  // The import of SQS's backstop: never a send, never a purge.
  backstopQueue: uses(BACKSTOP_QUEUE_ACCESS, ['receive', 'release', 'remove']),
  // Redrive enqueues; the routing view and switch read the counts. Never a receive.
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['sendBatch', 'counts']),
};

/** What the operations function's calls need from IAM: exactly what the stack grants it. */
export const OPERATIONS_ACCESS = accessOf(USES);

/** The resources the operations function uses: it is told their names, and reads them at cold start. */
export const OPERATIONS_RESOURCES = resourcesOf(OPERATIONS_ACCESS);

/** What the routing switch reads and writes. */
export interface RoutingPorts {
  readonly get: () => Promise<RoutingSettings>;
  readonly setPaused: (isPaused: boolean, at: string) => Promise<RoutingSettings>;
  readonly switchRouting: (input: { readonly expectedVersion: number; readonly partitionCount: number | undefined; readonly at: string }) => Promise<boolean>;
  readonly pendingWork: () => Promise<PendingWork>;
}

export interface OperationsHandlerDeps {
  readonly listActiveGroups: () => Promise<GroupLag[]>;
  readonly getGroup: (messageGroupId: string) => Promise<GroupLag | undefined>;
  /** A page of a subscription's dead letters, in position order, after `after`. */
  readonly listDeadLetters: (input: { readonly subscriptionId: string; readonly after: string | undefined; readonly limit: number }) => Promise<{ rows: DeadLetterRow[]; nextAfter: string | undefined }>;
  /** Whether the subscription exists: actions on an unknown one answer 404. */
  readonly hasSubscription: (subscriptionId: string) => Promise<boolean>;
  readonly requestSkip: (input: { readonly orderingKey: string; readonly eventId: string; readonly at: string }) => Promise<boolean>;
  readonly redrive: (subscriptionId: string) => Promise<RedriveStep>;
  /** One step of the import of the backstop queue into the store of dead letters. */
  readonly importBackstop: () => Promise<BackstopImportStep>;
  readonly routing: RoutingPorts;
  readonly now: () => Date;
  readonly logger: Logger;
}

const redriveBodySchema = z.strictObject({ subscription_id: subscriptionIdSchema });
const skipBodySchema = z.strictObject({ event_id: eventIdSchema.optional() });
const switchBodySchema = z.strictObject({
  partition_count: z.number().int().min(1).max(1_000_000).nullable(),
  expected_version: z.number().int().nonnegative(),
});

/** Reads and validates a JSON body; an absent body reads as `{}` where `isOptional`. */
function parseBody<T>(body: string | undefined, isBase64Encoded: boolean, schema: z.ZodType<T>, isOptional = false): Parsed<T> {
  const json = isOptional && (body === undefined || body === '') ? ({ ok: true, value: {} } as const) : readJsonBody(body, isBase64Encoded);
  return json.ok ? parseWith(schema, json.value, 'The request body is not valid.') : json;
}

/** Where a page of `GET /v1/dead-letters` ends: a position in the store, for one subscription. */
const deadLetterPositionSchema = z.strictObject({
  /** Tells a dead-letters cursor from any other list's. */
  list: z.literal('dead_letters'),
  subscription_id: subscriptionIdSchema,
  position: z.string().min(1).max(1024),
});

const conflict = (code: ErrorCode, message: string): ApiResponse => errorResponse(409, code, message);

const SWITCH_MESSAGES: Readonly<Record<SwitchRefusal, string>> = {
  not_paused: 'Pause ingest first (POST /v1/routing/pause).',
  pause_too_recent: 'Ingest was paused less than 30 s ago: a request may still be enqueueing under the old routing.',
  queue_not_empty: 'Events are still pending; wait until the queue and the lag view are empty.',
  version_conflict: 'The routing changed since you read it; read it again.',
};

export function createOperationsHandler(deps: OperationsHandlerDeps): HttpHandler {
  const routingView = async (routing?: RoutingSettings) => ({
    statusCode: 200,
    body: toRoutingView(routing ?? (await deps.routing.get()), await deps.routing.pendingWork()),
  });
  return createHttpHandler(
    {
      'GET /v1/lag': async (event) => {
        const page = parsePageQuery(event.queryStringParameters, lagPositionSchema);
        if (!page.ok) return page.response;
        const lag = toLagPage(await deps.listActiveGroups(), deps.now(), page.value);
        return { statusCode: 200, body: { groups: lag.items, next_cursor: lag.nextCursor } };
      },
      'GET /v1/dead-letters': async (event) => {
        const subscriptionId = parseWith(subscriptionIdSchema, event.queryStringParameters?.subscription_id ?? '', 'Name the subscription: ?subscription_id=…', ['subscription_id']);
        if (!subscriptionId.ok) return subscriptionId.response;
        const page = parsePageQuery(event.queryStringParameters, deadLetterPositionSchema);
        if (!page.ok) return page.response;
        const { after, limit } = page.value;
        if (after !== undefined && after.subscription_id !== subscriptionId.value) {
          return errorResponse(400, ErrorCode.invalidRequest, 'The paging parameters are not valid.', [{ path: 'cursor', message: 'belongs to another subscription; start again without it' }]);
        }
        const { rows, nextAfter } = await deps.listDeadLetters({ subscriptionId: subscriptionId.value, after: after?.position, limit });
        const next = nextAfter === undefined ? null : encodeCursor({ list: 'dead_letters', subscription_id: subscriptionId.value, position: nextAfter });
        return { statusCode: 200, body: { items: rows, next_cursor: next } };
      },
      'POST /v1/dead-letters/redrive': async (event) => {
        const body = parseBody(event.body, event.isBase64Encoded, redriveBodySchema);
        if (!body.ok) return body.response;
        if (!(await deps.hasSubscription(body.value.subscription_id))) return errorResponse(404, ErrorCode.notFound, `No subscription ${body.value.subscription_id}.`);
        // A redrive routes by the routing in force: not while it may be switching.
        if ((await deps.routing.get()).isPaused) return conflict(ErrorCode.ingestPaused, 'Ingest is paused for a routing switch; redrive after it resumes.');
        const step = await deps.redrive(body.value.subscription_id);
        deps.logger.info('dead letters redriven', { subscriptionId: body.value.subscription_id, redriven: step.redriven.length, remaining: step.remaining });
        return { statusCode: 200, body: { subscription_id: body.value.subscription_id, redriven: step.redriven, remaining: step.remaining, is_done: step.isDone } };
      },
      'POST /v1/dead-letters/import': async () => {
        const step = await deps.importBackstop();
        if (step.imported.length > 0 || step.unreadable > 0) {
          deps.logger.warn('backstop imported', { imported: step.imported.length, unreadable: step.unreadable, eventIds: step.imported.map((letter) => letter.event_id) });
        }
        return { statusCode: 200, body: { imported: step.imported, unreadable: step.unreadable, is_done: step.isDone } };
      },
      'POST /v1/groups/{message_group_id}/skip': async (event) => {
        const messageGroupId = event.pathParameters?.message_group_id ?? '';
        const body = parseBody(event.body, event.isBase64Encoded, skipBodySchema, true);
        if (!body.ok) return body.response;
        const group = await deps.getGroup(messageGroupId);
        if (group === undefined) return errorResponse(404, ErrorCode.notFound, `No message group ${messageGroupId}.`);
        const target = findSkipTarget(group, body.value.event_id);
        if ('refusal' in target) return conflict(target.refusal, target.refusal === 'no_failing_head' ? 'The group has no failing head to skip.' : 'The group’s head is another event now.');
        const isRequested = await deps.requestSkip({ ...target, at: deps.now().toISOString() });
        if (!isRequested) return conflict(ErrorCode.headChanged, 'The group’s head is another event now.');
        deps.logger.warn('skip requested', { messageGroupId, eventId: target.eventId });
        return { statusCode: 202, body: { message_group_id: messageGroupId, event_id: target.eventId, status: 'skip_requested' } };
      },
      'GET /v1/routing': async () => routingView(),
      'POST /v1/routing/pause': async () => {
        const routing = await deps.routing.setPaused(true, deps.now().toISOString());
        deps.logger.warn('ingest paused', { version: routing.version });
        return routingView(routing);
      },
      'POST /v1/routing/resume': async () => {
        const routing = await deps.routing.setPaused(false, deps.now().toISOString());
        deps.logger.warn('ingest resumed', { version: routing.version });
        return routingView(routing);
      },
      'PUT /v1/routing': async (event) => {
        const body = parseBody(event.body, event.isBase64Encoded, switchBodySchema);
        if (!body.ok) return body.response;
        const [current, pending] = await Promise.all([deps.routing.get(), deps.routing.pendingWork()]);
        const now = deps.now();
        const refusal = checkSwitch({ current, expectedVersion: body.value.expected_version, pending, now });
        if (refusal !== undefined) return conflict(refusal, SWITCH_MESSAGES[refusal]);
        const partitionCount = body.value.partition_count ?? undefined;
        const isSwitched = await deps.routing.switchRouting({ expectedVersion: current.version, partitionCount, at: now.toISOString() });
        if (!isSwitched) return conflict(ErrorCode.versionConflict, SWITCH_MESSAGES.version_conflict);
        deps.logger.warn('routing switched', { from: current.partitionCount ?? null, to: partitionCount ?? null, version: current.version + 1 });
        return routingView();
      },
    },
    deps.logger,
  );
}


type OperationsWiring = HandlerWiring<(typeof OPERATIONS_RESOURCES)[number]>;

/** The operations handler from a configuration and clients: shared by Lambda and the local stack. */
export function wireOperationsHandler(input: OperationsWiring): HttpHandler {
  const { dynamo, sqs, resources, config, logger } = input;
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
      recordProgress: (progress) => groups.recordProgress(progress, new Date()),
      now: () => new Date(),
      hasTime: () => Date.now() < deadline,
    });
  };
  const redrive = async (subscriptionId: string): Promise<RedriveStep> => {
    const deadline = Date.now() + REDRIVE_STEP_SECONDS * 1000;
    const { partitionCount } = await settings.getRouting();
    return redriveStep(subscriptionId, {
      store: deadLetters,
      enqueue: deliveryQueue.sendBatch,
      recordRedriven: ({ letter, toGroup, at }) => groups.recordRedrive({ fromGroup: letter.messageGroupId, toGroup, orderingKey: letter.orderingKey, events: 1, at }),
      groupOf: (orderingKey) => messageGroupIdFor(orderingKey, partitionCount),
      now: () => new Date(),
      hasTime: () => Date.now() < deadline,
    });
  };
  return createOperationsHandler({
    listActiveGroups: groups.listActiveGroups,
    getGroup: groups.getGroup,
    listDeadLetters: deadLetters.listRows,
    hasSubscription: async (subscriptionId) => (await subscriptions.get(subscriptionId)) !== undefined,
    requestSkip: orderingKeys.requestSkip,
    redrive,
    importBackstop,
    routing: {
      get: settings.getRouting,
      setPaused: settings.setPaused,
      switchRouting: settings.switchRouting,
      pendingWork: async () => {
        const [counts, active] = await Promise.all([deliveryQueue.counts(), groups.listActiveGroups()]);
        return { ...counts, groupsWithPending: active.filter((group) => group.depth > 0).length };
      },
    },
    now: () => new Date(),
    logger,
  });
}

/** Lambda entry point. */
export const handler: HttpHandler = wiredOnFirstCall(() => wireOperationsHandler(wiringFromEnvironment('operations', OPERATIONS_RESOURCES)));

/**
 * Operations function: the lag view and dead letters (CONTRACT §2), and the operator's actions
 * added to the contract: redrive a subscription's dead letters, skip a stuck head, and the
 * drain-and-switch of the routing.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { REDRIVE_STEP_SECONDS } from '../config.js';
import { ErrorCode, errorResponse, type ApiResponse } from '../core/api-error.js';
import { eventIdSchema, parseWith, readJsonBody, subscriptionIdSchema, type Parsed } from '../core/event.js';
import { lagPositionSchema, toLagPage, type GroupLag } from '../core/lag.js';
import { parsePageQuery } from '../core/paging.js';
import { redriveStep, type RedrivePorts, type RedriveStep } from '../core/redrive.js';
import { messageGroupIdFor } from '../core/routing.js';
import { checkSwitch, toRoutingView, type PendingWork, type RoutingSettings, type SwitchRefusal } from '../core/routing-settings.js';
import { findSkipTarget } from '../core/skip.js';
import { createDeadLetterQueue } from '../adapters/dead-letter-queue.js';
import { createEventStore, type DeadLetterRow } from '../adapters/event-store.js';
import { createGroupStore } from '../adapters/group-store.js';
import { createOrderingKeyStore } from '../adapters/ordering-key-store.js';
import { createSettingsStore } from '../adapters/settings-store.js';
import { queueCounts, sendMessageBatch } from '../adapters/sqs-queues.js';
import { createHttpHandler, type HttpHandler } from './http.js';
import { wiredOnFirstCall, wiringFromEnvironment, type HandlerWiring } from './wiring.js';

/** The resources the operations function uses, and is granted. */
export const OPERATIONS_RESOURCES = [
  'groupsTable',
  'eventsTable',
  'orderingKeysTable',
  'settingsTable',
  'deliveryQueueUrl',
  'deadLetterQueueUrl',
] as const;

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
  readonly listDeadLetters: (subscriptionId: string) => Promise<DeadLetterRow[]>;
  readonly requestSkip: (input: { readonly orderingKey: string; readonly eventId: string; readonly at: string }) => Promise<boolean>;
  readonly redrive: (subscriptionId: string) => Promise<RedriveStep>;
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
        return { statusCode: 200, body: { items: await deps.listDeadLetters(subscriptionId.value) } };
      },
      'POST /v1/dead-letters/redrive': async (event) => {
        const body = parseBody(event.body, event.isBase64Encoded, redriveBodySchema);
        if (!body.ok) return body.response;
        // A redrive routes by the routing in force: not while it may be switching.
        if ((await deps.routing.get()).isPaused) return conflict(ErrorCode.ingestPaused, 'Ingest is paused for a routing switch; redrive after it resumes.');
        const step = await deps.redrive(body.value.subscription_id);
        deps.logger.info('dead letters redriven', { subscriptionId: body.value.subscription_id, redriven: step.redriven.length, remaining: step.remaining });
        return { statusCode: 200, body: { subscription_id: body.value.subscription_id, redriven: step.redriven, remaining: step.remaining, is_done: step.isDone } };
      },
      'POST /v1/groups/{message_group_id}/skip': async (event) => {
        const messageGroupId = event.pathParameters?.message_group_id ?? '';
        const body = parseBody(event.body, event.isBase64Encoded, skipBodySchema, true);
        if (!body.ok) return body.response;
        const target = findSkipTarget(await deps.getGroup(messageGroupId), body.value.event_id);
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
  const events = createEventStore(dynamo, { tableName: resources.eventsTable, ttlDays: config.deliveryStateTtlDays });
  const groups = createGroupStore(dynamo, resources.groupsTable);
  const settings = createSettingsStore(dynamo, resources.settingsTable, config.partitionCount);
  const deadLetterQueue = createDeadLetterQueue(sqs, resources.deadLetterQueueUrl);
  const redrivePorts = (deadline: number): RedrivePorts => ({
    listDeadLetters: events.listDeadLetters,
    ...deadLetterQueue,
    enqueue: async (message) => (await sendMessageBatch(sqs, resources.deliveryQueueUrl, [message], logger)).size === 0,
    markRedriven: async ({ queued, fromGroup, at }) => {
      const isListed = await events.markRedriven({ eventId: queued.event.event_id, messageGroupId: queued.message_group_id, at });
      if (isListed) await groups.recordRedrive({ fromGroup, toGroup: queued.message_group_id, orderingKey: queued.ordering_key, events: 1, at });
      return isListed;
    },
    wasRedriven: events.wasRedriven,
    groupOf: async (orderingKey) => messageGroupIdFor(orderingKey, (await settings.getRouting()).partitionCount),
    // The event id may be 128 characters long: a digest keeps the id within SQS's 128.
    deduplicationIdOf: (eventId, at) => `redrive-${createHash('sha256').update(`${eventId} ${at}`).digest('hex')}`,
    now: () => new Date(),
    hasTime: () => Date.now() < deadline,
  });
  return createOperationsHandler({
    listActiveGroups: groups.listActiveGroups,
    getGroup: groups.getGroup,
    listDeadLetters: events.listDeadLetters,
    requestSkip: createOrderingKeyStore(dynamo, resources.orderingKeysTable).requestSkip,
    redrive: (subscriptionId) => redriveStep(subscriptionId, redrivePorts(Date.now() + REDRIVE_STEP_SECONDS * 1000)),
    routing: {
      get: settings.getRouting,
      setPaused: settings.setPaused,
      switchRouting: settings.switchRouting,
      pendingWork: async () => {
        const [counts, active] = await Promise.all([queueCounts(sqs, resources.deliveryQueueUrl), groups.listActiveGroups()]);
        return { ...counts, groupsWithPending: active.filter((group) => group.depth > 0).length };
      },
    },
    now: () => new Date(),
    logger,
  });
}

/** Lambda entry point. */
export const handler: HttpHandler = wiredOnFirstCall(() => wireOperationsHandler(wiringFromEnvironment('operations', OPERATIONS_RESOURCES)));


/**
 * Subscriptions function: `PUT` and `GET /v1/subscriptions/{subscription_id}` (docs/api.md#subscriptions),
 * `GET /v1/subscriptions/{subscription_id}/secret` (the one route that answers a stored secret),
 * `POST /v1/subscriptions/{subscription_id}/secret/rotate`, and its `/pause` and `/resume`.
 */
import { randomBytes } from 'node:crypto';
import { consumerTimeoutSeconds } from '../config.js';
import type { Logger } from '@aws-lambda-powertools/logger';
import { ErrorCode } from '../core/api-error.js';
import { orderingChangeAnswerOf, type OrderingChangeAnswer, type PauseAnswer, type ReplayView, type ResumeAnswer, type SubscriptionAnswer, type SubscriptionPutAnswer, type SubscriptionSecretAnswer, type SubscriptionsAnswer } from '../core/answers.js';
import { parseWith, readJsonBody } from '../core/event.js';
import { encodeCursor, parsePageQuery } from '../core/paging.js';
import { heldGroupsOf, type GroupLag } from '../core/lag.js';
import { messageGroupIdFor, Ordering } from '../core/routing.js';
import { holdsSettledBefore, letGoAll, type HoldPorts } from '../core/pause.js';
import { stepUnpark, type UnparkStep } from '../core/park.js';
import {
  isHeldForOrderingChange,
  nextOrderingChangeStep,
  ORDERING_CHANGE_WAIT_SECONDS,
  OrderingChangeStepKind,
  orderingChangeUnderWay,
  pendingOfSubscription,
  refuseOrderingChange,
  type OrderingChangeMark,
} from '../core/ordering-change.js';
import { DEFAULT_ROTATION_GRACE_SECONDS, generateSecret, previousSecretExpiry, secretsInForce } from '../core/secret.js';
import { OPERATOR_PAUSE_REASON, orderingChangeBodySchema, parseSubscriptionBody, parseSubscriptionId, pauseBodySchema, rotateSecretBodySchema, subscriptionPositionSchema, subscriptionsQuerySchema, type RotateSecretResponse } from '../core/subscription.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createParkStore, PARK_STORE_ACCESS } from '../adapters/park-store.js';
import { createPayloadBucket } from '../adapters/payload-bucket.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createSettingsStore, SETTINGS_STORE_ACCESS } from '../adapters/settings-store.js';
import {
  createSubscriptionStore,
  orderingChangeOf,
  pauseOf,
  SUBSCRIPTION_STORE_ACCESS,
  SubscriptionPutKind,
  type Subscription,
  type SubscriptionStore,
} from '../adapters/subscription-store.js';
import { checkEndpoint, type EndpointCheck } from '../adapters/endpoint-check.js';
import { createHttpHandler, HTTP_LOG_CONTEXT, parseBody, type HttpEntry, type HttpHandler } from './http.js';
import { errorResponse, withRetryAfter, type Answer, type ApiResponse, type ErrorBody } from './responses.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

/** A replay as the answer shows it; null for none. */
function replayView(replay: Subscription['replay']): ReplayView | null {
  if (replay === undefined) return null;
  const { since, until, started_at, reached, replayed, dead_lettered, not_delivered, cancelled_at } = replay;
  return { since, until, started_at, reached: reached ?? null, replayed, dead_lettered, not_delivered, cancelled_at: cancelled_at ?? null };
}

function pauseFields(subscription: Subscription): Pick<SubscriptionAnswer, 'is_paused' | 'paused_at' | 'pause_reason'> {
  const pause = pauseOf(subscription);
  return { is_paused: pause !== undefined, paused_at: pause?.pausedAt ?? null, pause_reason: pause?.reason ?? null };
}

/** A subscription as `GET` answers it, alone or in a list: never its secret. */
function subscriptionAnswerOf(subscription: Subscription, lastDeliveredAt: string | undefined, now: Date): SubscriptionAnswer {
  const { subscription_id, tenant_id, url, batch_size, ordering, created_at } = subscription;
  const parked_groups = Object.keys(subscription.parked_groups ?? {}).length;
  const change = orderingChangeOf(subscription);
  return {
    subscription_id,
    tenant_id,
    url,
    batch_size,
    ordering,
    event_types: subscription.event_types ?? null,
    created_at,
    ...pauseFields(subscription),
    replay: replayView(subscription.replay),
    last_replay: replayView(subscription.last_replay),
    parked_groups,
    last_delivered_at: lastDeliveredAt ?? null,
    // A mark no longer holding events is a change given up: not shown.
    ordering_change: change !== undefined && isHeldForOrderingChange(change, now) ? { ordering: change.ordering, started_at: change.startedAt } : null,
  };
}

/**
 * The time a resume spends sending a parked backlog back: the rest of API Gateway's 30 s is for
 * the holds it lets go; the lag job sends what is left, every minute.
 */
const UNPARK_ON_RESUME_SECONDS = 10;

const NO_SUCH_SUBSCRIPTION = { code: ErrorCode.notFound, message: 'No such subscription.' } as const;

export interface SubscriptionsHandlerDeps {
  readonly store: Pick<SubscriptionStore, 'get' | 'put' | 'beginOrderingChange' | 'liftOrderingChange' | 'rotateSecret' | 'pause' | 'resume' | 'list'>;
  /** Refuses endpoints that resolve to private addresses (deployed), or allows all (local). */
  readonly checkEndpoint: (url: string) => Promise<EndpointCheck>;
  /** The lag view's active groups: what is pending when a PUT changes `ordering`, and the groups a resume of a subscription ordered by resource lets go. */
  readonly listActiveGroups: (options?: { readonly isConsistent?: boolean }) => Promise<readonly GroupLag[]>;
  /** One group as last written (strongly consistent): the one group of a subscription ordered by subscription. */
  readonly getGroup: (messageGroupId: string) => Promise<GroupLag | undefined>;
  /** Groups by id, for display (see `readGroups`): a subscription's last delivery is its own group's. */
  readonly readGroups: (messageGroupIds: readonly string[]) => Promise<ReadonlyMap<string, GroupLag>>;
  /** The partition count of the routing in force (strongly consistent); undefined: one group per key. */
  readonly partitionCount: () => Promise<number | undefined>;
  /** Lets the held groups of a resumed subscription go (see `letGoAll`). */
  readonly holds: Pick<HoldPorts, 'letGo' | 'forgetHold'>;
  /** The consumer's timeout: a hold made longer ago than this can no longer be applied again (see pause.ts). */
  readonly consumerTimeoutSeconds: number;
  /** How long after a change of `ordering` is begun a repeated PUT may make it: ORDERING_CHANGE_WAIT_SECONDS, shorter in tests. */
  readonly orderingChangeWaitSeconds: number;
  /** Sends a resumed subscription's parked events back, one bounded step (see `stepUnpark`); `marks` are its parked groups. */
  readonly unpark: (subscriptionId: string, marks: ReadonlyMap<string, string>) => Promise<UnparkStep>;
  readonly randomBytes: (size: number) => Uint8Array;
  readonly now: () => Date;
  readonly logger: Logger;
}

export function createSubscriptionsHandler(deps: SubscriptionsHandlerDeps): HttpHandler {
  /**
   * The groups a subscription's messages can be in now, each read strongly. Ordered by
   * subscription, its one key's group under the routing in force: a routing switch waits for an
   * empty queue, so no message, and no hold, is left in a group of an earlier routing. Ordered by
   * resource, every active group, read through the index (a resource key's group is its own).
   */
  const groupsOfSubscription = async (subscription: Subscription): Promise<readonly GroupLag[]> => {
    if (subscription.ordering === Ordering.resource) return deps.listActiveGroups({ isConsistent: true });
    const group = await deps.getGroup(messageGroupIdFor(subscription.subscription_id, await deps.partitionCount()));
    return group === undefined ? [] : [group];
  };
  /**
   * When each subscription's events were last delivered, where one group holds exactly them: a
   * subscription ordered by subscription, under one group per key. Ordered by resource (a group
   * per resource) or partitioned (a group shared with others), none says it: the lag view's groups do.
   */
  const lastDeliveriesOf = async (subscriptions: readonly Subscription[]): Promise<ReadonlyMap<string, string | undefined>> => {
    const own = subscriptions.filter((subscription) => subscription.ordering !== Ordering.resource);
    if (own.length === 0 || (await deps.partitionCount()) !== undefined) return new Map();
    const groupIds = new Map(own.map((subscription) => [subscription.subscription_id, messageGroupIdFor(subscription.subscription_id, undefined)]));
    const groups = await deps.readGroups([...groupIds.values()]);
    return new Map([...groupIds].map(([subscriptionId, groupId]) => [subscriptionId, groups.get(groupId)?.lastDeliveredAt]));
  };
  /**
   * A PUT asking for another `ordering` (ordering-change.ts). With a change begun for it (`POST
   * …/ordering-change`) and old enough, it makes that change after a strong read of the lag view
   * (or lifts it when events are pending); begun too recently, it is refused with the seconds left.
   * Without one it changes at once when the lag view shows nothing pending, as a PUT always did (a
   * request under way that read the old ordering may still key an event the old way: the docs say
   * so). The answer when the PUT must stop here, else the mark the write makes the change under.
   */
  const changeOrdering = async (current: Subscription, to: Ordering): Promise<{ readonly refusal: ApiResponse<ErrorBody> } | { readonly mark: OrderingChangeMark | undefined }> => {
    const subscriptionId = current.subscription_id;
    const step = nextOrderingChangeStep({ mark: orderingChangeOf(current), to, now: deps.now(), waitSeconds: deps.orderingChangeWaitSeconds });
    if (step.kind === OrderingChangeStepKind.wait) {
      return { refusal: withRetryAfter(errorResponse(orderingChangeUnderWay({ from: current.ordering, mark: step.mark, retryAfterSeconds: step.retryAfterSeconds })), step.retryAfterSeconds) };
    }
    const isMade = step.kind === OrderingChangeStepKind.make;
    // Made under a mark: read strongly, after every request that read the old ordering was counted.
    const refusal = refuseOrderingChange({ from: current.ordering, to, pending: pendingOfSubscription(await deps.listActiveGroups(isMade ? { isConsistent: true } : {}), subscriptionId) });
    if (refusal !== undefined) {
      if (isMade) await deps.store.liftOrderingChange({ subscriptionId, mark: step.mark });
      deps.logger.info('subscription ordering change refused', { subscription_id: subscriptionId, from: current.ordering, to });
      return { refusal: errorResponse(refusal) };
    }
    return { mark: isMade ? step.mark : undefined };
  };
  /**
   * `POST …/ordering-change`: begins a change (ordering-change.ts), or answers the one begun for
   * the same ordering and not yet made; refused while the lag view shows events pending.
   */
  const beginOrderingChange = async (current: Subscription, to: Ordering): Promise<ApiResponse<OrderingChangeAnswer | ErrorBody>> => {
    const subscriptionId = current.subscription_id;
    const now = deps.now();
    const step = nextOrderingChangeStep({ mark: orderingChangeOf(current), to, now, waitSeconds: deps.orderingChangeWaitSeconds });
    const answer = (mark: OrderingChangeMark, retryAfterSeconds: number): ApiResponse<OrderingChangeAnswer> =>
      withRetryAfter({ statusCode: 202, body: orderingChangeAnswerOf(subscriptionId, current.ordering, mark, deps.orderingChangeWaitSeconds) }, retryAfterSeconds);
    if (step.kind === OrderingChangeStepKind.wait) return answer(step.mark, step.retryAfterSeconds);
    if (step.kind === OrderingChangeStepKind.make) return answer(step.mark, 0);
    const refusal = refuseOrderingChange({ from: current.ordering, to, pending: pendingOfSubscription(await deps.listActiveGroups(), subscriptionId) });
    if (refusal !== undefined) return errorResponse(refusal);
    const mark = { ordering: to, startedAt: now.toISOString() };
    if (!(await deps.store.beginOrderingChange({ subscriptionId, tenantId: current.tenant_id, from: current.ordering, mark }))) {
      return errorResponse({ code: ErrorCode.orderingChangePending, message: 'The subscription changed meanwhile; nothing was begun. Read it, then ask again.', details: [{ path: 'ordering', message: 'changed by another request' }] });
    }
    deps.logger.info('subscription ordering change begun', { subscription_id: subscriptionId, from: current.ordering, to });
    return answer(mark, deps.orderingChangeWaitSeconds);
  };
  return createHttpHandler(
    {
      'PUT /v1/subscriptions/{subscription_id}': async (event): Answer<SubscriptionPutAnswer> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        if (!id.ok) return errorResponse(id.refusal);
        const json = readJsonBody(event.body, event.isBase64Encoded);
        if (!json.ok) return errorResponse(json.refusal);
        const body = parseSubscriptionBody(json.value);
        if (!body.ok) return errorResponse(body.refusal);
        const check = await deps.checkEndpoint(body.value.url);
        if (!check.isAllowed) {
          return errorResponse({
            code: ErrorCode.endpointNotAllowed,
            message: `The endpoint is not allowed: ${check.reason}.`,
            details: [{ path: 'url', message: check.reason }],
          });
        }
        const { ordering } = body.value;
        let orderingChange: OrderingChangeMark | undefined;
        if (ordering !== undefined) {
          const current = await deps.store.get(id.value);
          // Another tenant's subscription is refused by the write below, without telling what it has pending.
          if (current !== undefined && current.tenant_id === body.value.tenant_id && current.ordering !== ordering) {
            const change = await changeOrdering(current, ordering);
            if ('refusal' in change) return change.refusal;
            orderingChange = change.mark;
          }
        }
        // Without a secret, a replacement keeps the one its receiver verifies; a creation gets this one.
        const secret = body.value.secret ?? generateSecret(deps.randomBytes);
        const outcome = await deps.store.put({
          subscription_id: id.value,
          tenant_id: body.value.tenant_id,
          url: body.value.url,
          batch_size: body.value.batch_size,
          ordering,
          event_types: body.value.event_types,
          secret,
          shouldKeepExistingSecret: body.value.secret === undefined,
          now: deps.now().toISOString(),
          ...(orderingChange === undefined ? {} : { orderingChange }),
        });
        if (outcome.kind === SubscriptionPutKind.orderingChangeLost) {
          return errorResponse({
            code: ErrorCode.orderingChangePending,
            message: 'Another request made, began again or gave up this change of ordering meanwhile; nothing was changed. Read the subscription, then PUT again.',
            details: [{ path: 'ordering', message: 'the change under way is no longer the one this PUT was to make' }],
          });
        }
        if (outcome.kind === SubscriptionPutKind.tenantMismatch) {
          return errorResponse({
            code: ErrorCode.tenantMismatch,
            message: 'The subscription belongs to another tenant; nothing was changed.',
            details: [{ path: 'tenant_id', message: 'does not match the subscription’s tenant' }],
          });
        }
        const isCreated = outcome.kind === SubscriptionPutKind.created;
        deps.logger.info(isCreated ? 'subscription created' : 'subscription replaced', { subscription_id: id.value });
        const { subscription_id, tenant_id, url, batch_size, ordering: stored, event_types } = outcome.subscription;
        // Only a secret this call made is answered: a given or kept one is read with GET …/secret, granted apart.
        const isSecretGenerated = body.value.secret === undefined && outcome.subscription.secret === secret;
        return {
          statusCode: isCreated ? 201 : 200,
          body: { subscription_id, tenant_id, url, ...(isSecretGenerated ? { secret } : {}), batch_size, ordering: stored, event_types: event_types ?? null },
        };
      },
      'POST /v1/subscriptions/{subscription_id}/ordering-change': async (event): Answer<OrderingChangeAnswer> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        const body = parseBody(event, orderingChangeBodySchema);
        if (!body.ok) return errorResponse(body.refusal);
        const current = id.ok ? await deps.store.get(id.value) : undefined;
        if (current === undefined) return errorResponse(NO_SUCH_SUBSCRIPTION);
        if (current.ordering === body.value.ordering) {
          return errorResponse({ code: ErrorCode.invalidRequest, message: `The subscription is ordered by ${current.ordering} already; nothing was begun.`, details: [{ path: 'ordering', message: 'is the ordering in force' }] });
        }
        return beginOrderingChange(current, body.value.ordering);
      },
      'GET /v1/subscriptions/{subscription_id}': async (event): Answer<SubscriptionAnswer> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        // An id no PUT can create names no subscription: the contract answers GET with 200 or 404.
        const subscription = id.ok ? await deps.store.get(id.value) : undefined;
        if (!id.ok || subscription === undefined) {
          return errorResponse(NO_SUCH_SUBSCRIPTION);
        }
        const lastDeliveries = await lastDeliveriesOf([subscription]);
        return { statusCode: 200, body: subscriptionAnswerOf(subscription, lastDeliveries.get(subscription.subscription_id), deps.now()) };
      },
      'GET /v1/subscriptions/{subscription_id}/secret': async (event): Answer<SubscriptionSecretAnswer> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        // As GET: an id no PUT can create names no subscription.
        const subscription = id.ok ? await deps.store.get(id.value) : undefined;
        if (!id.ok || subscription === undefined) return errorResponse(NO_SUCH_SUBSCRIPTION);
        // That a secret was read is logged, by subscription; the secret never is.
        deps.logger.info('subscription secret read', { subscription_id: id.value });
        return { statusCode: 200, body: secretsInForce(subscription, deps.now()) };
      },
      'GET /v1/subscriptions': async (event): Answer<SubscriptionsAnswer> => {
        const query = event.queryStringParameters ?? {};
        const tenant = parseWith(subscriptionsQuerySchema, { tenant_id: query.tenant_id }, 'The query is not valid.');
        if (!tenant.ok) return errorResponse(tenant.refusal);
        const page = parsePageQuery(query, subscriptionPositionSchema);
        if (!page.ok) return errorResponse(page.refusal);
        const { items, next } = await deps.store.list({ tenantId: tenant.value.tenant_id, after: page.value.after, limit: page.value.limit });
        const lastDeliveries = await lastDeliveriesOf(items);
        return {
          statusCode: 200,
          body: { items: items.map((subscription) => subscriptionAnswerOf(subscription, lastDeliveries.get(subscription.subscription_id), deps.now())), next_cursor: next === undefined ? null : encodeCursor(next) },
        };
      },
      'POST /v1/subscriptions/{subscription_id}/pause': async (event): Answer<PauseAnswer> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        // As GET: an id no PUT can create names no subscription.
        if (!id.ok) return errorResponse(NO_SUCH_SUBSCRIPTION);
        const body = parseBody(event, pauseBodySchema, { isOptional: true });
        if (!body.ok) return errorResponse(body.refusal);
        const subscription = await deps.store.pause({ subscriptionId: id.value, reason: body.value.reason ?? OPERATOR_PAUSE_REASON, now: deps.now().toISOString() });
        if (subscription === undefined) return errorResponse(NO_SUCH_SUBSCRIPTION);
        const answer: PauseAnswer = { subscription_id: id.value, ...pauseFields(subscription) };
        // The reason is the operator's text: it stays in the store and the answers, not in logs.
        deps.logger.info('subscription paused', { subscription_id: id.value, paused_at: answer.paused_at });
        return { statusCode: 200, body: answer };
      },
      'POST /v1/subscriptions/{subscription_id}/resume': async (event): Answer<ResumeAnswer> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        if (!id.ok) return errorResponse(NO_SUCH_SUBSCRIPTION);
        const now = deps.now();
        const subscription = await deps.store.resume({ subscriptionId: id.value, now: now.toISOString() });
        if (subscription === undefined || subscription.resumed_at === undefined) return errorResponse(NO_SUCH_SUBSCRIPTION);
        // After the pause ended, never before: a group held after this read sees the pause ended
        // itself (see pause.ts). A resume of a subscription not paused lets go what a resume
        // interrupted earlier left held.
        // Read strongly: a hold recorded a moment ago must be seen (see pause.ts).
        const held = heldGroupsOf(await groupsOfSubscription(subscription), id.value);
        const released = await letGoAll(held, deps.holds, { forgetMadeBefore: holdsSettledBefore(now, deps.consumerTimeoutSeconds) });
        // A parked backlog goes back first, behind nothing of its keys (see core/park.ts); the lag job sends what is left.
        const marks = new Map(Object.entries(subscription.parked_groups ?? {}));
        const unparked =
          marks.size === 0
            ? undefined
            : await deps.unpark(id.value, marks).catch((error: unknown) => {
                // The pause is over either way: the lag job sends the backlog back within a minute.
                deps.logger.error('parked backlog not sent back on resume; the lag job sends it', { subscription_id: id.value, error });
                return undefined;
              });
        deps.logger.info('subscription resumed', { subscription_id: id.value, released_groups: released, unparked_events: unparked?.sent ?? 0, parked_groups_ended: unparked?.ended ?? 0 });
        const answer: ResumeAnswer = { subscription_id: id.value, ...pauseFields(subscription), resumed_at: subscription.resumed_at, released_groups: released, unparked_events: unparked?.sent ?? 0 };
        return { statusCode: 200, body: answer };
      },
      'POST /v1/subscriptions/{subscription_id}/secret/rotate': async (event): Answer<RotateSecretResponse> => {
        const id = parseSubscriptionId(event.pathParameters?.subscription_id);
        if (!id.ok) return errorResponse(id.refusal);
        const body = parseBody(event, rotateSecretBodySchema, { isOptional: true });
        if (!body.ok) return errorResponse(body.refusal);
        const now = deps.now();
        const secret = body.value.secret ?? generateSecret(deps.randomBytes);
        const expiresAt = previousSecretExpiry(now, body.value.grace_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS).toISOString();
        const isRotated = await deps.store.rotateSecret({ subscriptionId: id.value, secret, previousSecretExpiresAt: expiresAt, now: now.toISOString() });
        if (!isRotated) return errorResponse(NO_SUCH_SUBSCRIPTION);
        deps.logger.info('subscription secret rotated', { subscription_id: id.value, previous_secret_expires_at: expiresAt });
        // As PUT: a secret the request gave is not answered back.
        const answer: RotateSecretResponse = { subscription_id: id.value, ...(body.value.secret === undefined ? { secret } : {}), previous_secret_expires_at: expiresAt };
        return { statusCode: 200, body: answer };
      },
    },
    deps.logger,
  );
}

/** The adapter methods the subscriptions function calls: the wiring takes these alone, and its function is granted their accesses. */
const USES = {
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['get', 'put', 'beginOrderingChange', 'liftOrderingChange', 'rotateSecret', 'pause', 'resume', 'list']),
  groups: uses(GROUP_STORE_ACCESS, ['listActiveGroups', 'getGroup', 'readGroups', 'forgetHold']),
  settings: uses(SETTINGS_STORE_ACCESS, ['getRouting']),
  // Resume sends a parked backlog back: reads it, sends it, removes it, ends each park whose copies were settled.
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['letGo', 'sendBatch']),
  parks: uses(PARK_STORE_ACCESS, ['readState', 'readParked', 'removeParked', 'end', 'unmark']),
};

/** What the subscriptions function's calls need from IAM: exactly what the stack grants it. */
export const SUBSCRIPTIONS_ACCESS = accessOf(USES);

/** The resources the subscriptions function uses: it is told their names, and reads them at cold start. */
export const SUBSCRIPTIONS_RESOURCES = resourcesOf(SUBSCRIPTIONS_ACCESS);

/** The subscriptions handler from a configuration and clients: shared by Lambda and the local stack. */
export function wireSubscriptionsHandler(
  input: HandlerWiring<(typeof SUBSCRIPTIONS_RESOURCES)[number]>,
  /** Tests only: a shorter wait before a change of `ordering` may be made, and the function's clock. */
  options: { readonly orderingChangeWaitSeconds?: number; readonly now?: () => Date } = {},
): HttpHandler {
  const groups = pick(createGroupStore(input.dynamo, input.resources.groupsTable), USES.groups);
  const settings = pick(createSettingsStore(input.dynamo, input.resources.settingsTable, input.config.partitionCount), USES.settings);
  const deliveryQueue = pick(createDeliveryQueue(input.sqs, input.resources.deliveryQueueUrl, input.logger), USES.deliveryQueue);
  const parks = pick(
    createParkStore(input.dynamo, {
      tables: { deadLetters: input.resources.deadLettersTable, subscriptions: input.resources.subscriptionsTable, groups: input.resources.groupsTable },
      payloads: createPayloadBucket(input.s3, input.resources.payloadBucket),
    }),
    USES.parks,
  );
  return createSubscriptionsHandler({
    store: pick(createSubscriptionStore(input.dynamo, input.resources.subscriptionsTable), USES.subscriptions),
    checkEndpoint: (url) => checkEndpoint(url, input.config.allowPrivateEndpoints),
    listActiveGroups: groups.listActiveGroups,
    getGroup: groups.getGroup,
    readGroups: groups.readGroups,
    partitionCount: async () => (await settings.getRouting()).partitionCount,
    holds: { letGo: deliveryQueue.letGo, forgetHold: groups.forgetHold },
    consumerTimeoutSeconds: consumerTimeoutSeconds(input.config),
    orderingChangeWaitSeconds: options.orderingChangeWaitSeconds ?? ORDERING_CHANGE_WAIT_SECONDS,
    unpark: (subscriptionId, marks) => {
      const deadline = Date.now() + UNPARK_ON_RESUME_SECONDS * 1000;
      return stepUnpark(subscriptionId, marks, { store: parks, enqueue: deliveryQueue.sendBatch, hasTime: () => Date.now() < deadline, now: () => new Date() });
    },
    randomBytes,
    now: options.now ?? (() => new Date()),
    logger: input.logger,
  });
}

/** Lambda entry point. */
export const handler: HttpEntry = lambdaEntry('subscriptions', SUBSCRIPTIONS_RESOURCES, (wiring) => wireSubscriptionsHandler(wiring), HTTP_LOG_CONTEXT);

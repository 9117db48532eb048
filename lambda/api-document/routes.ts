/**
 * What the API document says about each route of ROUTES: its summary, the schemas of what it
 * takes (path, query, body) and of what it answers, and the error codes it can answer. The schemas
 * are the ones the handlers validate with and are typed against; nothing here restates a shape.
 */
import * as z from 'zod';
import { ErrorCode } from '../core/api-error.js';
import {
  deadLettersAnswerSchema,
  eventsAnswerSchema,
  groupAnswerSchema,
  healthAnswerSchema,
  importAnswerSchema,
  lagAnswerSchema,
  metricsAnswerSchema,
  pauseAnswerSchema,
  redriveAnswerSchema,
  replayAnswerSchema,
  replayCancelAnswerSchema,
  resumeAnswerSchema,
  orderingChangeAnswerSchema,
  skipAnswerSchema,
  subscriptionAnswerSchema,
  subscriptionsAnswerSchema,
  subscriptionPutAnswerSchema,
  subscriptionSecretAnswerSchema,
} from '../core/answers.js';
import { MAX_PAYLOAD_PAGE_BYTES, MAX_PAYLOAD_PAGE_LIMIT } from '../core/dead-letter.js';
import { ORDERING_CHANGE_HOLD_SECONDS, ORDERING_CHANGE_WAIT_SECONDS, ORDERING_CHANGE_WINDOW_SECONDS } from '../core/ordering-change.js';
import { batchSchema, requestEventSchema, subscriptionIdSchema } from '../core/event.js';
import { MAX_DELIVERIES_PER_REQUEST } from '../core/ingest.js';
import { MAX_MESSAGE_GROUP_ID_LENGTH } from '../core/limits.js';
import { metricsQuerySchema } from '../core/metrics.js';
import { pageQuerySchema } from '../core/paging.js';
import { replayBodySchema } from '../core/replay.js';
import { routingViewSchema } from '../core/routing-settings.js';
import { orderingChangeBodySchema, pauseBodySchema, rotateSecretBodySchema, rotateSecretResponseSchema, subscriptionBodySchema, subscriptionsQuerySchema } from '../core/subscription.js';
import { redriveBodySchema } from '../handlers/operations/dead-letters.js';
import { switchBodySchema } from '../handlers/operations/routing.js';
import { skipBodySchema } from '../handlers/operations/skip.js';
import { enqueueRefusedBodySchemaOf, partlyEnqueuedBodySchema, toRedriveRefusalResponse } from '../handlers/responses.js';
import type { RouteKey } from '../routes.js';

/** The `{name}` segments of a route key's path. */
type PathParameterNames<K extends string> = K extends `${string}{${infer Name}}${infer Rest}` ? Name | PathParameterNames<Rest> : never;

/** One successful answer of a route. */
export interface SuccessDescription {
  readonly description: string;
  readonly schema: z.ZodType;
}

/** A response header a route sets on some statuses. */
export interface HeaderDescription {
  readonly description: string;
  readonly schema: z.ZodType;
}

/** What the API document says about any route, whatever its path. */
interface RouteDescriptionBase {
  /** Unique over the API: what generated clients name the call. */
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  /** Query parameters, as a client sends them (strings). */
  readonly query?: z.ZodObject;
  readonly body?: { readonly schema: z.ZodType; readonly isRequired: boolean; readonly description?: string };
  /** Each successful status and its body. */
  readonly answers: Readonly<Partial<Record<200 | 201 | 202, SuccessDescription>>>;
  /** The error codes the route itself can answer; `internal_error` (500) is every route's and added to all. */
  readonly errors: readonly ErrorCode[];
  /** An error body other than the contract's plain one, by code (e.g. `enqueue_failed` also carries `results`). */
  readonly errorBodies?: Readonly<Partial<Record<ErrorCode, z.ZodType>>>;
  /** The status of a code where the route answers another than ERROR_STATUS_CODES says. */
  readonly statusOf?: (code: ErrorCode) => number;
  /** Response headers, by status. */
  readonly headers?: Readonly<Partial<Record<number, Readonly<Record<string, HeaderDescription>>>>>;
}

/** What the API document says about the route `K`: a schema for each `{name}` of its path, and no other. */
export type RouteDescription<K extends string> = RouteDescriptionBase &
  ([PathParameterNames<K>] extends [never]
    ? { readonly path?: never }
    : { /** The schema of each path parameter. */ readonly path: Readonly<Record<PathParameterNames<K>, z.ZodType>> });

/** A route's description as the document builder reads it. */
export type AnyRouteDescription = RouteDescriptionBase & { readonly path?: Readonly<Record<string, z.ZodType>> };

/** Every route of ROUTES, described: a route added there without a description here fails type-check. */
export type RouteDescriptions = { readonly [K in RouteKey]: RouteDescription<K> };

const BODY_ERRORS = [ErrorCode.invalidJson, ErrorCode.invalidRequest, ErrorCode.payloadTooLarge] as const;

const retryAfter: HeaderDescription = { description: 'Seconds to wait before retrying the whole request.', schema: z.string().regex(/^[0-9]+$/) };

/** A message group id, as the lag view names it. */
const messageGroupIdSchema = z.string().min(1).meta({ description: `A message group id as the lag view names it; one longer than ${MAX_MESSAGE_GROUP_ID_LENGTH} characters names none (404).` });

const pausedSwitchNote = 'Answers the routing as it is now.';

export const ROUTE_DESCRIPTIONS: RouteDescriptions = {
  'GET /health': {
    operationId: 'getHealth',
    summary: 'Whether the service can accept events.',
    answers: { 200: { description: 'The service accepts events.', schema: healthAnswerSchema } },
    errors: [],
  },
  'GET /openapi.json': {
    operationId: 'getApiDocument',
    summary: 'This document: OpenAPI 3.1, generated from the zod schemas the handlers validate with.',
    answers: {
      200: {
        description: 'The OpenAPI 3.1 document of this API.',
        schema: z.looseObject({ openapi: z.string().regex(/^3\.1\./), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.looseObject({})) }),
      },
    },
    errors: [],
  },
  'POST /v1/events': {
    operationId: 'postEvents',
    summary: 'Accept one event, or a batch of 1 to 100, for ordered delivery.',
    description:
      'Events of one ordering key in one request are enqueued in request order. An invalid request enqueues nothing. ' +
      'Payloads travel as posted: the receiver\'s `data` is each `payload`\'s JSON text exactly as it stood in the request, or the request is refused: ' +
      'a body that is not UTF-8, or starts with a byte order mark, is 400 `invalid_json`; an object anywhere in the body that repeats a key is 400 `invalid_request` naming its path (e.g. `events[1].payload.a`). ' +
      'While ingest is paused for a routing switch, or a subscription of the request is changing its `ordering` (its `ordering_change`), answers 503 `ingest_paused` with `Retry-After`, enqueuing nothing of the request. On 503 `enqueue_failed`, ' +
      'no event of a key after a `failed` one was enqueued (`not_enqueued`): retrying the whole request is always safe. ' +
      'When SQS refuses an event on every retry, the answer is never 503: 400 `invalid_request` naming it when its contents are refused, ' +
      '500 `internal_error` when SQS refuses the service itself (its configuration); both then carry `results` as 503 does. ' +
      'An event without `subscription_id` is a fan-out: it goes to every subscription of its `tenant_id` whose `event_types` take its `type` (fixed at its first acceptance: a resend goes to the same ones, a subscription created later gets none of it), ' +
      'each delivery in its subscription\'s own order; its result has `message_group_id` null and one entry per delivery in `deliveries`, possibly none. ' +
      `A request of more than ${MAX_DELIVERIES_PER_REQUEST} deliveries (a fan-out counted once per subscription) is 400 \`invalid_request\` naming \`events\`. ` +
      'An `event_id` is unique within its tenant and destination (the subscription it names, or the tenant\'s fan-out): another tenant\'s or destination\'s event with the same id is another event. ' +
      'An event whose tenant, destination and id were accepted before with the same `type` and `payload` is `duplicate`; with another `type` or `payload` the request is 409 `event_id_conflict` naming `events[i].event_id`, and nothing of it is enqueued.',
    body: { schema: z.union([requestEventSchema, batchSchema]), isRequired: true, description: 'One event, or `{"events": [...]}`; the whole request at most 1 MiB.' },
    answers: { 202: { description: 'One result per event, in request order; `duplicate`: this `event_id` was accepted before for the same tenant and destination, with the same type and payload.', schema: eventsAnswerSchema } },
    errors: [...BODY_ERRORS, ErrorCode.unknownSubscription, ErrorCode.eventIdConflict, ErrorCode.enqueueFailed, ErrorCode.ingestPaused],
    errorBodies: {
      [ErrorCode.enqueueFailed]: partlyEnqueuedBodySchema,
      // `results` only when SQS refused some events permanently (some before them may be enqueued).
      [ErrorCode.invalidRequest]: enqueueRefusedBodySchemaOf(ErrorCode.invalidRequest).partial({ results: true }),
      [ErrorCode.internalError]: enqueueRefusedBodySchemaOf(ErrorCode.internalError).partial({ results: true }),
    },
    headers: { 503: { 'retry-after': retryAfter } },
  },
  'GET /v1/subscriptions': {
    operationId: 'listSubscriptions',
    summary: 'A tenant’s subscriptions, in the order of their ids, one page at a time; never a secret.',
    description: 'Read from an index DynamoDB keeps eventually consistent: a subscription created within about a second may be missing from its page.',
    query: subscriptionsQuerySchema.extend(pageQuerySchema.shape),
    answers: { 200: { description: 'One page of the tenant’s subscriptions, as `GET /v1/subscriptions/{subscription_id}` answers each.', schema: subscriptionsAnswerSchema } },
    errors: [ErrorCode.invalidRequest],
  },
  'PUT /v1/subscriptions/{subscription_id}': {
    operationId: 'putSubscription',
    summary: 'Create or replace a subscription.',
    description:
      'Without `secret`, a creation gets a generated one, answered once in `secret`, and a replacement keeps its own; a secret given or kept is not answered (read it with `GET /v1/subscriptions/{subscription_id}/secret`). Deployed, URLs that resolve to private, ' +
      'loopback, link-local or metadata addresses are refused (422 `endpoint_not_allowed`); a subscription id another tenant holds is 409 `tenant_mismatch`. ' +
      'Without `batch_size` or `ordering`, a creation gets the defaults (1, `"subscription"`) and a replacement keeps its own. ' +
      'A change of `ordering` is refused with 409 `ordering_change_pending`, naming the pending events and message groups, while any of the subscription\'s events is pending. ' +
      'Without a change begun by `POST …/ordering-change`, it is made at once (a request under way that read the old ordering may still key an event the old way); after one, from its `make_after`, it is made with no such race, and before it, refused 409 `ordering_change_pending` with `Retry-After`. ' +
      'Every webhook carries `webhook-ordering-key`: the subscription id, or the event\'s `resource_id` under `ordering: "resource"`, ' +
      'every character but visible ASCII (and `%` itself) percent-encoded as UTF-8; `webhook-sequence` counts per that key.',
    path: { subscription_id: subscriptionIdSchema },
    body: { schema: subscriptionBodySchema, isRequired: true },
    answers: {
      200: { description: 'Replaced.', schema: subscriptionPutAnswerSchema },
      201: { description: 'Created.', schema: subscriptionPutAnswerSchema },
    },
    errors: [...BODY_ERRORS, ErrorCode.tenantMismatch, ErrorCode.orderingChangePending, ErrorCode.endpointNotAllowed],
    headers: { 409: { 'retry-after': { description: 'With `ordering_change_pending` for a change of `ordering` begun too recently: seconds until the PUT may make it.', schema: retryAfter.schema } } },
  },
  'GET /v1/subscriptions/{subscription_id}': {
    operationId: 'getSubscription',
    summary: 'A subscription, without its secret.',
    path: { subscription_id: subscriptionIdSchema },
    answers: { 200: { description: 'The subscription.', schema: subscriptionAnswerSchema } },
    errors: [ErrorCode.notFound],
  },
  'GET /v1/subscriptions/{subscription_id}/secret': {
    operationId: 'getSubscriptionSecret',
    summary: 'The signing secrets of a subscription in force now: the one route that answers a stored secret.',
    description:
      'Its own route, so that deployed it is its own IAM grant: reading a subscription, replacing it or rotating its secret never answers a secret the call did not generate. ' +
      '`previous_secret` and `previous_secret_expires_at` only during a rotation\'s grace, while the previous secret still signs.',
    path: { subscription_id: subscriptionIdSchema },
    answers: { 200: { description: 'The secret, and during a rotation\'s grace the previous one.', schema: subscriptionSecretAnswerSchema } },
    errors: [ErrorCode.notFound],
  },
  'POST /v1/subscriptions/{subscription_id}/secret/rotate': {
    operationId: 'rotateSubscriptionSecret',
    summary: 'Give a subscription a new signing secret while the previous one keeps signing for a grace period.',
    description:
      'During the grace (`grace_seconds`, default 86400, at most 604800; 0 ends it at once) every webhook carries two `v1,` signatures, ' +
      'one per secret, so a receiver can switch at its own pace. A second rotation ends the grace of the secret before it. ' +
      'The new secret is answered only when this rotation generated it; a secret given in the request, and the previous secret, are never answered.',
    path: { subscription_id: subscriptionIdSchema },
    body: { schema: rotateSecretBodySchema, isRequired: false, description: 'Optional: the new secret (generated when absent) and the grace.' },
    answers: { 200: { description: 'The end of the previous secret\'s grace, and the new secret when this rotation generated it.', schema: rotateSecretResponseSchema } },
    errors: [ErrorCode.invalidJson, ErrorCode.invalidRequest, ErrorCode.payloadTooLarge, ErrorCode.notFound],
  },
  'POST /v1/subscriptions/{subscription_id}/pause': {
    operationId: 'pauseSubscription',
    summary: 'Stop delivering a subscription\'s events, in order, until it is resumed.',
    description:
      'While paused, no event of the subscription is attempted and no attempt is counted; its events are still accepted (`POST /v1/events` answers as ever) and wait in order, ' +
      'each message group held where it stands. Other subscriptions are not affected, except those sharing a partition in partition mode, which wait with it. ' +
      'A consumer batch already under way when the pause is answered delivers what it holds (at most one receive of each of the subscription\'s groups), nothing after. ' +
      'Idempotent: pausing a paused subscription answers the pause in force, its time and reason unchanged. `PUT` keeps a pause.',
    path: { subscription_id: subscriptionIdSchema },
    body: { schema: pauseBodySchema, isRequired: false, description: 'Optional: why.' },
    answers: { 200: { description: 'The pause in force.', schema: pauseAnswerSchema } },
    errors: [ErrorCode.invalidJson, ErrorCode.invalidRequest, ErrorCode.payloadTooLarge, ErrorCode.notFound],
  },
  'POST /v1/subscriptions/{subscription_id}/resume': {
    operationId: 'resumeSubscription',
    summary: 'Deliver a paused subscription again, from each key\'s head, in order, within seconds.',
    description:
      'Ends the pause, then lets go every message group held for it: each continues from its head, in order, with the sequence numbers it would have had. ' +
      'Idempotent: resuming a subscription that is not paused answers `is_paused: false` (recording `resumed_at`) and lets go any group still held (what an interrupted resume left). ' +
      'A held head\'s attempts start where they stood; no attempt was counted while paused. ' +
      'A backlog parked while paused (`PAUSE_EVACUATION=store`) is sent back first, one bounded step here and the rest by the lag job every minute: ' +
      'nothing later of its keys is delivered before it.',
    path: { subscription_id: subscriptionIdSchema },
    answers: { 200: { description: 'Not paused, how many held groups were let go now, and how many parked events were sent back.', schema: resumeAnswerSchema } },
    errors: [ErrorCode.notFound],
  },
  'POST /v1/subscriptions/{subscription_id}/ordering-change': {
    operationId: 'beginOrderingChange',
    summary: 'Begin a change of `ordering` that no request under way can race; a PUT with the new `ordering` makes it a minute later.',
    description:
      'Refused with 409 `ordering_change_pending` while the lag view shows any of the subscription\'s events pending (nothing begun). Otherwise marks the change begun (the subscription\'s `ordering_change`): ' +
      'from then on the subscription\'s new events are answered 503 `ingest_paused`, and its replays and redrives 409 `ingest_paused`, so that no request that read the old ordering enqueues after the change. ' +
      `A PUT with the new \`ordering\` from \`make_after\` (${ORDERING_CHANGE_WAIT_SECONDS} s later) to \`make_before\` (${ORDERING_CHANGE_WINDOW_SECONDS} s after the start) reads the lag view strongly and makes it, or gives it up when events are pending; a PUT naming the ordering in force gives it up; ` +
      `unmade, it stops holding events ${ORDERING_CHANGE_HOLD_SECONDS} s after the start. Asked again for the same ordering, it answers the change under way.`,
    path: { subscription_id: subscriptionIdSchema },
    body: { schema: orderingChangeBodySchema, isRequired: true },
    answers: { 202: { description: 'The change begun (or under way), with when the PUT that makes it may come.', schema: orderingChangeAnswerSchema } },
    errors: [...BODY_ERRORS, ErrorCode.notFound, ErrorCode.orderingChangePending],
    headers: { 202: { 'retry-after': { description: 'Seconds until a PUT may make the change.', schema: retryAfter.schema } } },
  },
  'POST /v1/subscriptions/{subscription_id}/replay': {
    operationId: 'replaySubscription',
    summary: 'Send again every event of a subscription accepted in a window and delivered, per key in its original order; one bounded step per call, repeat until `is_done`.',
    description:
      'Each event goes again with its original `webhook-id` and `webhook-sequence`, marked `webhook-redelivery: true`, into its key\'s message group behind whatever is queued there; ' +
      'live events accepted meanwhile queue behind it. Events of the window that are dead letters are not replayed (a redrive sends them), nor those not delivered yet. ' +
      'Bodies are kept `EVENT_RETENTION_DAYS` (default 7; 0 keeps none). One replay per subscription at a time: the same window again (or `since` alone) follows the one under way, ' +
      'and only one step runs at once (another caller\'s step answers the replay as it stood); another window is refused with 409 `replay_in_progress`. ' +
      'A key\'s events accepted by concurrent requests within the same instant may be read across two steps out of their order. Refused with 409 `ingest_paused` during a routing switch, and while the subscription is changing its `ordering`.',
    path: { subscription_id: subscriptionIdSchema },
    body: { schema: replayBodySchema, isRequired: true },
    answers: { 200: { description: 'The replay as it stands after this call.', schema: replayAnswerSchema } },
    errors: [...BODY_ERRORS, ErrorCode.notFound, ErrorCode.replayInProgress, ErrorCode.ingestPaused],
    statusOf: (code) => toRedriveRefusalResponse({ code, message: '' }).statusCode,
  },
  'DELETE /v1/subscriptions/{subscription_id}/replay': {
    operationId: 'cancelReplay',
    summary: 'Cancel the replay under way for a subscription.',
    description:
      'What it sent stays sent (and is delivered); a step under way ends its pass. The replay is kept, marked cancelled, as the subscription\'s last one: its window may be replayed again. ' +
      '404 for an unknown subscription, or when no replay is under way.',
    path: { subscription_id: subscriptionIdSchema },
    answers: { 200: { description: 'The replay cancelled, as it stood.', schema: replayCancelAnswerSchema } },
    errors: [ErrorCode.notFound],
  },
  'GET /v1/lag': {
    operationId: 'getLag',
    summary: 'Lag per message group with pending or dead-lettered events, worst first, one page at a time.',
    query: pageQuerySchema,
    answers: { 200: { description: 'One page of the lag view.', schema: lagAnswerSchema } },
    errors: [ErrorCode.invalidRequest],
  },
  'GET /v1/groups/{message_group_id}': {
    operationId: 'getGroup',
    summary: 'One message group’s row of the lag view: its depth, oldest wait, failing head (the event a skip names) and dead letters, also once drained.',
    description: 'What waits behind the head is in the queue, which the API does not read: the row gives how many (`depth`), not which.',
    path: { message_group_id: messageGroupIdSchema },
    answers: { 200: { description: 'The group as the lag view shows it.', schema: groupAnswerSchema } },
    errors: [ErrorCode.notFound],
  },
  'GET /v1/metrics': {
    operationId: 'getMetrics',
    summary: 'The consumer’s deliveries, failed attempts and dead letters per minute over the last minutes, and the lag figures now: the operator console’s overview.',
    description:
      'One point per whole minute, oldest first, the last being the current minute so far; a minute with no data is zeros. ' +
      'Deployed, the counts are the sums per minute of the consumer’s CloudWatch metrics (a minute or so behind, as CloudWatch ingests them); locally, of what the local stack’s consumer counted since it started. ' +
      'The lag figures are taken at the request from the active groups, as the lag job takes them.',
    query: metricsQuerySchema,
    answers: { 200: { description: 'The series and the lag figures.', schema: metricsAnswerSchema } },
    errors: [ErrorCode.invalidRequest],
  },
  'GET /v1/dead-letters': {
    operationId: 'listDeadLetters',
    summary: 'A subscription’s dead letters, oldest first, one page at a time.',
    description: `With \`include=payload\`, each row also gives its event's \`type\` and \`payload\`, and a page holds at most ${MAX_PAYLOAD_PAGE_LIMIT} rows (the default then) and stops before its rows pass ${MAX_PAYLOAD_PAGE_BYTES / 1024 / 1024} MiB as Lambda's answer carries them (the body escaped once more), its \`next_cursor\` continuing.`,
    query: z
      .object({ subscription_id: subscriptionIdSchema })
      .extend(pageQuerySchema.shape)
      .extend({ include: z.literal('payload').optional().meta({ description: 'Add each event\'s `type` and `payload` to its row.' }) }),
    answers: { 200: { description: 'One page of the subscription’s dead letters.', schema: deadLettersAnswerSchema } },
    errors: [ErrorCode.invalidRequest],
  },
  'POST /v1/dead-letters/redrive': {
    operationId: 'redriveDeadLetters',
    summary: 'One bounded step of the redrive of a subscription’s dead letters; repeat until `is_done`.',
    description: 'Refused with 409 `ingest_paused` during a routing switch, and while the subscription is changing its `ordering`.',
    body: { schema: redriveBodySchema, isRequired: true },
    answers: { 200: { description: 'What this step redrove, in original sequence order per key.', schema: redriveAnswerSchema } },
    errors: [...BODY_ERRORS, ErrorCode.notFound, ErrorCode.ingestPaused],
    statusOf: (code) => toRedriveRefusalResponse({ code, message: '' }).statusCode,
  },
  'POST /v1/dead-letters/import': {
    operationId: 'importBackstop',
    summary: 'One step of the import of SQS’s backstop dead-letter queue into the dead letters; repeat until `is_done`.',
    answers: { 200: { description: 'What this step imported.', schema: importAnswerSchema } },
    errors: [],
  },
  'POST /v1/groups/{message_group_id}/skip': {
    operationId: 'skipHead',
    summary: 'Dead-letter the group’s failing head at its next retry, so that its key moves on.',
    description: 'With `event_id`, only if that event is still the head (else 409 `head_changed`).',
    path: { message_group_id: messageGroupIdSchema },
    body: { schema: skipBodySchema, isRequired: false },
    answers: { 202: { description: 'The skip is requested.', schema: skipAnswerSchema } },
    errors: [...BODY_ERRORS, ErrorCode.notFound, ErrorCode.noFailingHead, ErrorCode.headChanged],
  },
  'GET /v1/routing': {
    operationId: 'getRouting',
    summary: 'The routing in force, whether ingest is paused, and the work still pending.',
    answers: { 200: { description: 'The routing.', schema: routingViewSchema } },
    errors: [],
  },
  'PUT /v1/routing': {
    operationId: 'switchRouting',
    summary: 'Switch the routing (drain-and-switch): only while paused, after the grace period, with nothing pending, at the version read.',
    body: { schema: switchBodySchema, isRequired: true },
    answers: { 200: { description: 'The routing after the switch.', schema: routingViewSchema } },
    errors: [...BODY_ERRORS, ErrorCode.notPaused, ErrorCode.pauseTooRecent, ErrorCode.queueNotEmpty, ErrorCode.versionConflict],
  },
  'POST /v1/routing/pause': {
    operationId: 'pauseIngest',
    summary: 'Pause ingest: `POST /v1/events` answers 503 `ingest_paused` until resumed.',
    answers: { 200: { description: pausedSwitchNote, schema: routingViewSchema } },
    errors: [],
  },
  'POST /v1/routing/resume': {
    operationId: 'resumeIngest',
    summary: 'Resume ingest.',
    answers: { 200: { description: pausedSwitchNote, schema: routingViewSchema } },
    errors: [],
  },
};

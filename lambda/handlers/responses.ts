/**
 * The contract's responses (docs/api.md#errors), built in one place: the core decides outcomes as
 * values, and this module alone turns them into status codes, the error body and headers.
 */
import * as z from 'zod';
import { ErrorCode, errorDetailSchema, type ErrorDetail, type Refusal } from '../core/api-error.js';
import type { EventsAnswer } from '../core/answers.js';
import { eventResultSchema, IngestOutcomeKind, IngestRefusal, type IngestOutcome } from '../core/ingest.js';
import { schemaOf, type Output } from '../core/schema-match.js';
import { SendFailureKind } from '../core/enqueue-plan.js';
import type { RedriveAnswer } from '../core/answers.js';
import type { RedriveStep } from '../core/redrive.js';

/** The contract's error body: `{"error": {"code", "message", "details"?}}`. */
export interface ErrorBody {
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly details?: readonly ErrorDetail[];
  };
}

/**
 * The error body answering only `codes`: what the API document shows for each status of a route.
 * Every code of {@link ErrorCode} makes it {@link ErrorBody}'s schema.
 */
export function errorBodySchemaOf<const C extends readonly [ErrorCode, ...ErrorCode[]]>(codes: C) {
  return z.strictObject({
    error: z.strictObject({
      code: z.enum(codes),
      message: z.string(),
      details: z.array(errorDetailSchema).optional(),
    }),
  });
}

/** {@link ErrorBody} as the API document shows it. */
export const errorBodySchema = schemaOf<ErrorBody>()(errorBodySchemaOf(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]));

/** `POST /v1/events` answered `503 enqueue_failed`: the error, and every event's result (docs/api.md#events). */
export const partlyEnqueuedBodySchema = z.strictObject({
  error: errorBodySchemaOf([ErrorCode.enqueueFailed]).shape.error,
  results: z.array(eventResultSchema),
});
export type PartlyEnqueuedBody = Output<typeof partlyEnqueuedBodySchema>;

/**
 * `POST /v1/events` answered `400 invalid_request` or `500 internal_error` because SQS refused
 * some events permanently: the error naming them, and every event's result, as on `503`.
 */
export function enqueueRefusedBodySchemaOf(code: typeof ErrorCode.invalidRequest | typeof ErrorCode.internalError) {
  return z.strictObject({ error: errorBodySchemaOf([code]).shape.error, results: z.array(eventResultSchema) });
}
export type EnqueueRefusedBody = Output<ReturnType<typeof enqueueRefusedBodySchemaOf>>;

/**
 * A response of the HTTP API, before it is serialised by API Gateway's adapter. A route names its
 * bodies (`ApiResponse<LagAnswer | ErrorBody>`), so that what it builds is checked against the
 * schemas the API document is generated from.
 */
export interface ApiResponse<B = unknown> {
  readonly statusCode: number;
  readonly body: B;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The response with a `Retry-After` of these seconds: when the same request may be made again. */
export function withRetryAfter<B>(response: ApiResponse<B>, seconds: number): ApiResponse<B> {
  return { ...response, headers: { ...response.headers, 'retry-after': String(seconds) } };
}

/** What a route answers: its own bodies, or the contract's error body. */
export type Answer<B> = Promise<ApiResponse<B | ErrorBody>>;

/**
 * The status code of each error code (docs/api.md#errors), written once. A route that answers a code
 * with another status says so where it answers (a redrive refused while paused is `409`).
 */
export const ERROR_STATUS_CODES: Readonly<Record<ErrorCode, number>> = {
  [ErrorCode.invalidJson]: 400,
  [ErrorCode.invalidRequest]: 400,
  [ErrorCode.notFound]: 404,
  [ErrorCode.methodNotAllowed]: 405,
  [ErrorCode.noFailingHead]: 409,
  [ErrorCode.headChanged]: 409,
  [ErrorCode.notPaused]: 409,
  [ErrorCode.pauseTooRecent]: 409,
  [ErrorCode.queueNotEmpty]: 409,
  [ErrorCode.versionConflict]: 409,
  [ErrorCode.tenantMismatch]: 409,
  [ErrorCode.orderingChangePending]: 409,
  [ErrorCode.replayInProgress]: 409,
  [ErrorCode.eventIdConflict]: 409,
  [ErrorCode.payloadTooLarge]: 413,
  [ErrorCode.unknownSubscription]: 422,
  [ErrorCode.endpointNotAllowed]: 422,
  [ErrorCode.internalError]: 500,
  [ErrorCode.enqueueFailed]: 503,
  [ErrorCode.ingestPaused]: 503,
};

/** Answers a refusal in the contract's shape, with its code's status unless the route chooses another. */
export function errorResponse(refusal: Refusal, statusCode: number = ERROR_STATUS_CODES[refusal.code]): ApiResponse<ErrorBody> {
  const { code, message, details } = refusal;
  const body: ErrorBody = {
    error: details === undefined || details.length === 0 ? { code, message } : { code, message, details },
  };
  return { statusCode, body };
}

/**
 * Answers a refused redrive step. `ingest_paused` is `409` here, not ingest's `503`: the operator
 * redrives after resuming the routing, not after a delay.
 */
export function toRedriveRefusalResponse(refusal: Refusal): ApiResponse<ErrorBody> {
  return errorResponse(refusal, refusal.code === ErrorCode.ingestPaused ? 409 : undefined);
}

/**
 * Answers one redrive step: `200` with what it redrove, or `500 internal_error` naming the dead
 * letters SQS refused permanently. Those stay in the store, with everything after them of their
 * keys; repeating the step cannot help, so it is not answered as work left (`is_done: false`),
 * which a caller repeating until done would repeat forever.
 */
export function toRedriveStepResponse(subscriptionId: string, step: RedriveStep): ApiResponse<RedriveAnswer | ErrorBody> {
  if (step.refused.length === 0) {
    return { statusCode: 200, body: { subscription_id: subscriptionId, redriven: step.redriven, remaining: step.remaining, is_done: step.isDone } };
  }
  return errorResponse({
    code: ErrorCode.internalError,
    message: `The queue refused to take back ${step.refused.length} dead letter${step.refused.length === 1 ? '' : 's'} whatever the retry; they stay listed, with the later ones of their keys. ${step.redriven.length} were redriven before.`,
    details: step.refused.map((letter) => ({ path: 'event_id', message: `${letter.event_id}: refused by SQS (${letter.code})` })),
  });
}

/** The message of each way a whole `POST /v1/events` is refused. */
const INGEST_REFUSAL_MESSAGES: Readonly<Record<IngestRefusal, string>> = {
  [IngestRefusal.invalidRequest]: 'Some events cannot be routed by their subscription’s ordering; nothing was enqueued.',
  [IngestRefusal.unknownSubscription]: 'Some events name a subscription that does not exist.',
  [IngestRefusal.payloadTooLarge]: 'Some events are too large to enqueue.',
  [IngestRefusal.eventIdConflict]: 'Some event ids were accepted before with another type or payload; nothing was enqueued.',
};

/** Answers `POST /v1/events` for ingest's outcome. */
export function toIngestResponse(outcome: IngestOutcome): ApiResponse<EventsAnswer | ErrorBody | PartlyEnqueuedBody | EnqueueRefusedBody> {
  switch (outcome.kind) {
    case IngestOutcomeKind.accepted:
      return { statusCode: 202, body: { results: outcome.results } };
    case IngestOutcomeKind.refused:
      return errorResponse({ code: outcome.reason, message: INGEST_REFUSAL_MESSAGES[outcome.reason], details: outcome.details });
    case IngestOutcomeKind.paused:
      return withRetryAfter(
        errorResponse(
          outcome.orderingChanges === undefined
            ? { code: ErrorCode.ingestPaused, message: 'Ingest is paused while the routing changes; nothing was enqueued. Retry after the delay.' }
            : {
                code: ErrorCode.ingestPaused,
                message: 'A subscription of these events is changing its ordering; nothing was enqueued. Retry after the delay.',
                details: outcome.orderingChanges.map((id) => ({ path: 'subscription_id', message: `${id}: changing its ordering` })),
              },
        ),
        outcome.retryAfterSeconds,
      );
    case IngestOutcomeKind.partlyEnqueued:
      return withRetryAfter(
        {
          statusCode: ERROR_STATUS_CODES[ErrorCode.enqueueFailed],
          body: {
            error: { code: ErrorCode.enqueueFailed, message: 'Some events could not be enqueued; retrying the whole request is safe.' },
            results: outcome.results,
          },
        },
        outcome.retryAfterSeconds,
      );
    case IngestOutcomeKind.enqueueRefused:
      return toEnqueueRefusedResponse(outcome);
  }
}

/**
 * Answers a permanent refusal by SQS, never `503`: resending the same request cannot succeed.
 * Events SQS refuses for what they hold are the sender's to change (`400 invalid_request` naming
 * them); a refusal of the queue itself (access, a missing queue) is ours (`500 internal_error`).
 * Both carry `results`, as `503` does: the events before a refused one of its key, and those of
 * other keys, may have been enqueued, and a resend answers them as duplicates.
 */
function toEnqueueRefusedResponse(outcome: Extract<IngestOutcome, { kind: typeof IngestOutcomeKind.enqueueRefused }>): ApiResponse<EnqueueRefusedBody> {
  const isSendersFault = outcome.blame === SendFailureKind.messageRefused;
  const error: EnqueueRefusedBody['error'] = isSendersFault
    ? { code: ErrorCode.invalidRequest, message: 'The queue refuses some events whatever the retry; change them, then resend. No later event of their keys was enqueued.', details: [...outcome.details] }
    : { code: ErrorCode.internalError, message: 'The queue refused the events for a reason of the service\'s configuration; retrying will not help until an operator fixes it. No later event of their keys was enqueued.', details: [...outcome.details] };
  return { statusCode: ERROR_STATUS_CODES[error.code], body: { error, results: [...outcome.results] } };
}

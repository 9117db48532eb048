/**
 * The contract's responses (CONTRACT §2), built in one place: the core decides outcomes as
 * values, and this module alone turns them into status codes, the error body and headers.
 */
import { ErrorCode, errorResponse, type ApiResponse } from '../core/api-error.js';
import { IngestOutcomeKind, IngestRefusal, type IngestOutcome } from '../core/ingest.js';

/** The status and message of each way a whole `POST /v1/events` is refused. */
const INGEST_REFUSALS: Readonly<Record<IngestRefusal, { readonly statusCode: number; readonly message: string }>> = {
  [IngestRefusal.unknownSubscription]: { statusCode: 422, message: 'Some events name a subscription that does not exist.' },
  [IngestRefusal.payloadTooLarge]: { statusCode: 413, message: 'Some events are too large to enqueue.' },
};

/** Answers `POST /v1/events` for ingest's outcome. */
export function toIngestResponse(outcome: IngestOutcome): ApiResponse {
  switch (outcome.kind) {
    case IngestOutcomeKind.accepted:
      return { statusCode: 202, body: { results: outcome.results } };
    case IngestOutcomeKind.refused: {
      const { statusCode, message } = INGEST_REFUSALS[outcome.reason];
      return errorResponse(statusCode, outcome.reason, message, outcome.details);
    }
    case IngestOutcomeKind.paused:
      return {
        ...errorResponse(503, ErrorCode.ingestPaused, 'Ingest is paused while the routing changes; nothing was enqueued. Retry after the delay.'),
        headers: { 'retry-after': String(outcome.retryAfterSeconds) },
      };
    case IngestOutcomeKind.partlyEnqueued:
      return {
        statusCode: 503,
        headers: { 'retry-after': String(outcome.retryAfterSeconds) },
        body: {
          error: { code: ErrorCode.enqueueFailed, message: 'Some events could not be enqueued; retrying the whole request is safe.' },
          results: outcome.results,
        },
      };
  }
}

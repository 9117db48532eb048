/**
 * Ingest's lines about the events of a request it did not wholly accept: their `event_id`s, and
 * for an event not enqueued its `subscription_id` and `message_group_id`, so that a producer's
 * report of a refused or failed event is found. Never a payload.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { ErrorCode, type Refusal } from '../core/api-error.js';
import type { EventsRequest } from '../core/event.js';
import { EventStatus, IngestOutcomeKind, type IngestOutcome } from '../core/ingest.js';

/** Logs a request refused before its events were read: its error code, and no id, since none was read. */
export function logUnreadRequest(logger: Logger, requestId: string, refusal: Refusal): void {
  logger.info('events refused', { requestId, code: refusal.code });
}

/** Logs the events of a request that were refused or not enqueued; nothing when all were accepted. */
export function logIngestOutcome(logger: Logger, requestId: string, request: EventsRequest, outcome: IngestOutcome): void {
  const eventIds = request.events.map((event) => event.event_id);
  switch (outcome.kind) {
    case IngestOutcomeKind.accepted:
      return;
    case IngestOutcomeKind.refused:
      logger.info('events refused', { requestId, code: outcome.reason, event_ids: eventIds });
      return;
    case IngestOutcomeKind.paused:
      logger.info('events refused', { requestId, code: ErrorCode.ingestPaused, event_ids: eventIds });
      return;
    case IngestOutcomeKind.partlyEnqueued:
      // Results are in request order: the event at the same index is the one answered.
      outcome.results.forEach((result, index) => {
        if (result.status !== EventStatus.failed && result.status !== EventStatus.notEnqueued) return;
        logger.warn('event not enqueued', {
          requestId,
          event_id: result.event_id,
          subscription_id: request.events[index]?.subscription_id,
          message_group_id: result.message_group_id,
          status: result.status,
        });
      });
      return;
  }
}

/**
 * `POST /v1/groups/{message_group_id}/skip` (docs/api.md#routes): dead-letter a group's failing head at
 * its next retry.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import { ErrorCode } from '../../core/api-error.js';
import { MAX_MESSAGE_GROUP_ID_LENGTH } from '../../core/limits.js';
import type { SkipAnswer } from '../../core/answers.js';
import { eventIdSchema } from '../../core/event.js';
import { publicEventIdOfDelivery } from '../../core/fan-out-id.js';
import type { GroupLag } from '../../core/lag.js';
import { findSkipTarget } from '../../core/skip.js';
import { parseBody, type Route } from '../http.js';
import { errorResponse, type Answer } from '../responses.js';

export interface SkipRoutesDeps {
  readonly getGroup: (messageGroupId: string) => Promise<GroupLag | undefined>;
  readonly requestSkip: (input: { readonly orderingKey: string; readonly eventId: string; readonly at: string }) => Promise<boolean>;
  readonly now: () => Date;
  readonly logger: Logger;
}

/** The body of `POST /v1/groups/{message_group_id}/skip`: optional, and so is its `event_id`. */
export const skipBodySchema = z.strictObject({ event_id: eventIdSchema.optional() });

const HEAD_CHANGED_MESSAGE = 'The group’s head is another event now.';
const NO_FAILING_HEAD_MESSAGE = 'The group has no failing head to skip (a head whose batch failed is tried alone before it can be skipped).';

/** The skip route, by its route key. */
export function createSkipRoutes(deps: SkipRoutesDeps): Readonly<Record<'POST /v1/groups/{message_group_id}/skip', Route>> {
  return {
    'POST /v1/groups/{message_group_id}/skip': async (event): Answer<SkipAnswer> => {
      const messageGroupId = event.pathParameters?.message_group_id ?? '';
      const body = parseBody(event, skipBodySchema, { isOptional: true });
      if (!body.ok) return errorResponse(body.refusal);
      // An id SQS would refuse names no group: asked of DynamoDB, a key too long is a fault, not a miss.
      const group = messageGroupId.length > MAX_MESSAGE_GROUP_ID_LENGTH ? undefined : await deps.getGroup(messageGroupId);
      if (group === undefined) return errorResponse({ code: ErrorCode.notFound, message: `No message group ${messageGroupId}.` });
      const target = findSkipTarget(group, body.value.event_id);
      if ('refusal' in target) return errorResponse({ code: target.refusal, message: target.refusal === 'no_failing_head' ? NO_FAILING_HEAD_MESSAGE : HEAD_CHANGED_MESSAGE });
      const isRequested = await deps.requestSkip({ ...target, at: deps.now().toISOString() });
      if (!isRequested) return errorResponse({ code: ErrorCode.headChanged, message: HEAD_CHANGED_MESSAGE });
      deps.logger.warn('skip requested', { message_group_id: messageGroupId, event_id: target.eventId });
      return { statusCode: 202, body: { message_group_id: messageGroupId, event_id: publicEventIdOfDelivery(target.eventId), status: 'skip_requested' } };
    },
  };
}

/**
 * `GET /v1/lag` (docs/api.md#the-lag-view): the per-group lag view, worst first, one page at a time; and
 * `GET /v1/groups/{message_group_id}`: one group's row, which the console's group page follows.
 */
import { ErrorCode } from '../../core/api-error.js';
import { MAX_MESSAGE_GROUP_ID_LENGTH } from '../../core/limits.js';
import type { GroupAnswer, LagAnswer } from '../../core/answers.js';
import { lagPositionSchema, toLagPage, toLagRow, type GroupLag } from '../../core/lag.js';
import { parsePageQuery } from '../../core/paging.js';
import type { Route } from '../http.js';
import { errorResponse, type Answer } from '../responses.js';

export interface LagRoutesDeps {
  readonly listActiveGroups: () => Promise<GroupLag[]>;
  readonly getGroup: (messageGroupId: string) => Promise<GroupLag | undefined>;
  readonly now: () => Date;
  /** A key waiting longer than this while fed at least as fast as it delivers is flagged `is_falling_behind`. */
  readonly fallingBehindWaitSeconds: number;
}

/** The lag routes, by their route keys. */
export function createLagRoutes(deps: LagRoutesDeps): Readonly<Record<'GET /v1/lag' | 'GET /v1/groups/{message_group_id}', Route>> {
  return {
    'GET /v1/lag': async (event): Answer<LagAnswer> => {
      const page = parsePageQuery(event.queryStringParameters, lagPositionSchema);
      if (!page.ok) return errorResponse(page.refusal);
      const lag = toLagPage(await deps.listActiveGroups(), deps.now(), page.value, deps.fallingBehindWaitSeconds);
      return { statusCode: 200, body: { groups: lag.items, next_cursor: lag.nextCursor } };
    },
    'GET /v1/groups/{message_group_id}': async (event): Answer<GroupAnswer> => {
      const messageGroupId = event.pathParameters?.message_group_id ?? '';
      // An id SQS would refuse names no group: asked of DynamoDB, a key too long is a fault, not a miss.
      const group = messageGroupId.length > MAX_MESSAGE_GROUP_ID_LENGTH ? undefined : await deps.getGroup(messageGroupId);
      if (group === undefined) return errorResponse({ code: ErrorCode.notFound, message: `No message group ${messageGroupId}.` });
      return { statusCode: 200, body: { group: toLagRow(group, deps.now(), deps.fallingBehindWaitSeconds) } };
    },
  };
}

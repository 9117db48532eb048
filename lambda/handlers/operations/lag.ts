/**
 * `GET /v1/lag` (CONTRACT §2): the per-group lag view, worst first, one page at a time.
 */
import type { LagAnswer } from '../../core/answers.js';
import { lagPositionSchema, toLagPage, type GroupLag } from '../../core/lag.js';
import { parsePageQuery } from '../../core/paging.js';
import type { Route } from '../http.js';
import { errorResponse, type Answer } from '../responses.js';

export interface LagRoutesDeps {
  readonly listActiveGroups: () => Promise<GroupLag[]>;
  readonly now: () => Date;
  /** A key waiting longer than this while fed at least as fast as it delivers is flagged `is_falling_behind`. */
  readonly fallingBehindWaitSeconds: number;
}

/** The lag route, by its route key. */
export function createLagRoutes(deps: LagRoutesDeps): Readonly<Record<'GET /v1/lag', Route>> {
  return {
    'GET /v1/lag': async (event): Answer<LagAnswer> => {
      const page = parsePageQuery(event.queryStringParameters, lagPositionSchema);
      if (!page.ok) return errorResponse(page.refusal);
      const lag = toLagPage(await deps.listActiveGroups(), deps.now(), page.value, deps.fallingBehindWaitSeconds);
      return { statusCode: 200, body: { groups: lag.items, next_cursor: lag.nextCursor } };
    },
  };
}

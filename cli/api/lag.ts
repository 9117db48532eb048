/**
 * The whole lag view as the CLI reads it: `GET /v1/lag` page after page, following
 * `next_cursor` until it is null, so that commands see every group however many there are.
 */
import { UnexpectedAnswerError } from '../errors.js';
import type { ApiClient } from './client.js';
import { lagAnswerSchema, type LagAnswer } from './schemas.js';

/** Rows asked for per page: the API's maximum, so that a long view takes few requests. */
export const LAG_PAGE_LIMIT = 1000;

/**
 * Every row of the lag view, worst first, in one answer of the unpaged shape: the first page's
 * fields with the rows of all pages, and no `next_cursor`. An API from before paging answers
 * without `next_cursor`: its one answer is the whole view.
 */
export async function readLag(api: ApiClient): Promise<LagAnswer> {
  const read = (cursor?: string) =>
    api.send({ method: 'GET', path: '/v1/lag', query: { limit: String(LAG_PAGE_LIMIT), ...(cursor === undefined ? {} : { cursor }) } }, lagAnswerSchema);
  const { next_cursor: firstCursor, ...first } = await read();
  const groups = [...first.groups];
  const followed = new Set<string>();
  let cursor = firstCursor ?? null;
  while (cursor !== null) {
    // An API that gave the same cursor twice would be paged forever.
    if (followed.has(cursor)) throw new UnexpectedAnswerError(`GET /v1/lag gave the cursor ${cursor} twice; the view cannot be read to its end.`);
    followed.add(cursor);
    const page = await read(cursor);
    groups.push(...page.groups);
    cursor = page.next_cursor ?? null;
  }
  return { ...first, groups };
}

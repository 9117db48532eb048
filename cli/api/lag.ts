/**
 * The whole lag view as the CLI reads it: `GET /v1/lag` page after page (see `pages.ts`), so
 * that commands see every group however many there are.
 */
import type { ApiClient } from './client.js';
import { pageQuery, readEveryPage } from './pages.js';
import { lagAnswerSchema, type LagAnswer } from './schemas.js';

/**
 * Every row of the lag view, worst first, in one answer of the unpaged shape: the first page's
 * fields with the rows of all pages, and no `next_cursor`.
 */
export async function readLag(api: ApiClient): Promise<LagAnswer> {
  const pages = await readEveryPage('GET /v1/lag', (cursor) => api.send({ method: 'GET', path: '/v1/lag', query: pageQuery(cursor) }, lagAnswerSchema));
  const { next_cursor: _nextCursor, ...first } = pages[0];
  return { ...first, groups: pages.flatMap((page) => page.groups) };
}

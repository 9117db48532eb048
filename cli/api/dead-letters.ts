/**
 * A subscription's dead letters as the CLI reads them: `GET /v1/dead-letters` page after page
 * (see `pages.ts`), so that commands see every dead letter however many there are.
 */
import type { ApiClient } from './client.js';
import { pageQuery, readEveryPage } from './pages.js';
import { deadLettersAnswerSchema, type DeadLettersAnswer } from './schemas.js';

/**
 * Every dead letter of the subscription, in the API's order, in one answer of the unpaged shape:
 * the first page's fields with the items of all pages, and no `next_cursor`.
 */
export async function readDeadLetters(api: ApiClient, subscriptionId: string): Promise<DeadLettersAnswer> {
  const pages = await readEveryPage('GET /v1/dead-letters', (cursor) =>
    api.send({ method: 'GET', path: '/v1/dead-letters', query: { subscription_id: subscriptionId, ...pageQuery(cursor) } }, deadLettersAnswerSchema),
  );
  const { next_cursor: _nextCursor, ...first } = pages[0];
  return { ...first, items: pages.flatMap((page) => page.items) };
}

/**
 * Paged lists as the CLI reads them: page after page, following `next_cursor` until it is null,
 * so that commands see every row however many there are.
 */
import { UnexpectedAnswerError } from '../errors.js';

/** Rows asked for per page: the API's maximum, so that a long list takes few requests. */
export const PAGE_LIMIT = 1000;

/** One page of a list; `next_cursor` is null on the last, and absent from an API older than paging. */
export interface CursorPage {
  readonly next_cursor?: string | null | undefined;
}

/**
 * Every page of a list, the first one first. `read` asks for the page at `cursor` (the first
 * page without one). An API from before paging answers without `next_cursor`: its one answer is
 * the whole list.
 * @throws UnexpectedAnswerError when the API gives a cursor it gave before: following it would
 *   page forever.
 */
export async function readEveryPage<Page extends CursorPage>(label: string, read: (cursor: string | undefined) => Promise<Page>): Promise<[Page, ...Page[]]> {
  const first = await read(undefined);
  const pages: [Page, ...Page[]] = [first];
  const followed = new Set<string>();
  let cursor = first.next_cursor ?? null;
  while (cursor !== null) {
    if (followed.has(cursor)) throw new UnexpectedAnswerError(`${label} gave the cursor ${cursor} twice; the list cannot be read to its end.`);
    followed.add(cursor);
    const page = await read(cursor);
    pages.push(page);
    cursor = page.next_cursor ?? null;
  }
  return pages;
}

/** The `limit` and, after the first page, `cursor` query parameters of a paged request. */
export function pageQuery(cursor: string | undefined): Record<string, string> {
  return { limit: String(PAGE_LIMIT), ...(cursor === undefined ? {} : { cursor }) };
}

/**
 * Paging of the API's lists: the `limit` and `cursor` query parameters, opaque cursors, and the
 * `next_cursor` of an answer. A list is read in pages because a Lambda response is capped at
 * 6 MB; a client that knows nothing of paging gets the first page and a `next_cursor`.
 */
import * as z from 'zod';
import { parseWith, type Parsed } from './event.js';

/** Items on a page when the request names no `limit`. */
export const DEFAULT_PAGE_LIMIT = 100;

/** The most items one page may hold: 1000 lag rows are about 300 KB, far below the 6 MB cap. */
export const MAX_PAGE_LIMIT = 1000;

/** A cursor is a position of a few fields; anything much longer was not made here. */
const MAX_CURSOR_LENGTH = 1024;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

const CURSOR_MESSAGE = 'is not a cursor this API gave out; start again without it';

/** A page asked for: at most `limit` items, all strictly after the position `after` (none: from the start). */
export interface PageRequest<P> {
  readonly limit: number;
  readonly after: P | undefined;
}

/** One page of a list, and the cursor of the next page: null on the last one (the answer's `next_cursor`). */
export interface Page<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/** A position in a list as a cursor: base64url of its JSON, opaque to clients. */
export function encodeCursor<P>(position: P): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/**
 * The position a cursor carries, or undefined when it is not one that `positionSchema` accepts:
 * a tampered, truncated or foreign cursor is a client's mistake, never a fault.
 */
function decodeCursor<P>(cursor: string, positionSchema: z.ZodType<P>): P | undefined {
  if (cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = positionSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * A query parameter holding a whole number from 1 to `max`, as digits alone (no sign, leading zero
 * or space), read as a number: `limit` here, `minutes` of the metrics route. Anything else is
 * refused with one message naming the range.
 */
export function wholeNumberParameter(max: number) {
  const message = `must be an integer from 1 to ${max}`;
  return z
    .string()
    .regex(new RegExp(`^[1-9][0-9]{0,${String(max).length - 1}}$`), message)
    .transform(Number)
    .refine((value) => value <= max, message);
}

const limitSchema = wholeNumberParameter(MAX_PAGE_LIMIT).meta({ description: `Items on the page, 1 to ${MAX_PAGE_LIMIT}; ${DEFAULT_PAGE_LIMIT} when absent.` });

/**
 * The paging query parameters as a client sends them (what the API document shows): a cursor is
 * any string here, and only {@link parsePageQuery} knows the positions it may carry.
 */
export const pageQuerySchema = z.object({
  limit: limitSchema.optional(),
  cursor: z.string().meta({ description: 'The `next_cursor` of the previous page.' }).optional(),
});

/**
 * Reads `limit` (integer 1–1000, default 100) and `cursor` from a request's query parameters;
 * other parameters are the route's own and are left alone. A bad value of either is an
 * `invalid_request` refusal naming it in `details` (`limit`, `cursor`).
 */
export function parsePageQuery<P>(
  query: Readonly<Record<string, string | undefined>> | undefined,
  positionSchema: z.ZodType<P>,
): Parsed<PageRequest<P>> {
  const schema = pageQuerySchema
    .extend({
      cursor: z
        .string()
        .transform((cursor, context) => {
          const position = decodeCursor(cursor, positionSchema);
          if (position === undefined) context.issues.push({ code: 'custom', message: CURSOR_MESSAGE, input: cursor });
          return position;
        })
        .optional(),
    })
    .transform(({ limit, cursor }): PageRequest<P> => ({ limit: limit ?? DEFAULT_PAGE_LIMIT, after: cursor }));
  return parseWith(schema, query ?? {}, 'The paging parameters are not valid.');
}

/**
 * The page `request` asks for out of `sorted`, a whole list in ascending order of `compare` on
 * `positionOf`. The page starts strictly after the request's position, whether or not an item
 * still stands there, so that a list that did not change between two pages is read with no item
 * repeated or skipped; positions must therefore be unique and must not move with the clock.
 */
export function takePage<T, P>(sorted: readonly T[], request: PageRequest<P>, positionOf: (item: T) => P, compare: (a: P, b: P) => number): Page<T> {
  const { after } = request;
  const found = after === undefined ? 0 : sorted.findIndex((item) => compare(positionOf(item), after) > 0);
  const start = found === -1 ? sorted.length : found;
  const items = sorted.slice(start, start + request.limit);
  const last = items.at(-1);
  const hasMore = start + items.length < sorted.length;
  return { items, nextCursor: hasMore && last !== undefined ? encodeCursor(positionOf(last)) : null };
}

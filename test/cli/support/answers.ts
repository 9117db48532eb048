/**
 * Canned 200 answers of the read routes the commands page through, in the contract's shape.
 * `next_cursor` is left out of the body unless given, as the API may leave it out.
 */
import { apiError, type RecordedRequest, type Reply, type Responder } from './fake-api.js';

/** One page of `GET /v1/lag`. */
export function lagPage(groups: readonly object[], nextCursor?: string | null): Reply {
  return { status: 200, body: { groups, ...(nextCursor === undefined ? {} : { next_cursor: nextCursor }) } };
}

/** `GET /v1/subscriptions/{id}`: the subscription exists. */
export function subscriptionAnswer(subscriptionId: string): Reply {
  return { status: 200, body: { subscription_id: subscriptionId, tenant_id: 'acme', url: 'http://127.0.0.1:4000/webhooks', created_at: '2025-01-02T15:00:00.000Z' } };
}

/** One page of `GET /v1/dead-letters`. */
export function deadLettersPage(items: readonly object[], nextCursor?: string | null): Reply {
  return { status: 200, body: { items, ...(nextCursor === undefined ? {} : { next_cursor: nextCursor }) } };
}

/**
 * A route in two pages: `first` without a cursor, `second` at `page-2`, and the contract's 400
 * for any other cursor, so that a command sending a cursor it was not given fails.
 */
export function inTwoPages(page: (rows: readonly object[], nextCursor: string | null) => Reply, first: readonly object[], second: readonly object[]): Responder {
  return (request: RecordedRequest): Reply => {
    const cursor = request.query.get('cursor');
    if (cursor === null) return page(first, 'page-2');
    if (cursor === 'page-2') return page(second, null);
    return apiError(400, 'invalid_request', 'The paging parameters are not valid.');
  };
}

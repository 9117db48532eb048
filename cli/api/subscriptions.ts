/**
 * Whether a subscription exists, for the commands whose routes answer an unknown subscription
 * like one with nothing to show (`GET /v1/dead-letters`, the lag view): an empty answer must not
 * hide a mistyped id.
 */
import { ApiError, UnknownSubscriptionError } from '../errors.js';
import { pathSegment, type ApiClient } from './client.js';
import { subscriptionSchema, type Subscription } from './schemas.js';

/**
 * A request about one subscription, its 404 read as "there is no subscription named X".
 * @throws UnknownSubscriptionError when the API answers 404: exit 1
 */
export async function aboutSubscription<T>(subscriptionId: string, request: Promise<T>): Promise<T> {
  try {
    return await request;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new UnknownSubscriptionError(subscriptionId);
    throw error;
  }
}

/**
 * The subscription (`GET /v1/subscriptions/{id}`).
 * @throws UnknownSubscriptionError when the API answers 404: exit 1, "there is no subscription named X".
 */
export async function requireSubscription(api: ApiClient, subscriptionId: string): Promise<Subscription> {
  return aboutSubscription(subscriptionId, api.send({ method: 'GET', path: `/v1/subscriptions/${pathSegment(subscriptionId)}` }, subscriptionSchema));
}

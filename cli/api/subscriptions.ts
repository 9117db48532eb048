/**
 * Whether a subscription exists, for the commands whose routes answer an unknown subscription
 * like one with nothing to show (`GET /v1/dead-letters`, the lag view): an empty answer must not
 * hide a mistyped id.
 */
import { ApiError, UnknownSubscriptionError } from '../errors.js';
import { pathSegment, type ApiClient } from './client.js';
import { subscriptionSchema, type Subscription } from './schemas.js';

/**
 * The subscription (`GET /v1/subscriptions/{id}`).
 * @throws UnknownSubscriptionError when the API answers 404: exit 1, "there is no subscription named X".
 */
export async function requireSubscription(api: ApiClient, subscriptionId: string): Promise<Subscription> {
  try {
    return await api.send({ method: 'GET', path: `/v1/subscriptions/${pathSegment(subscriptionId)}` }, subscriptionSchema);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new UnknownSubscriptionError(subscriptionId);
    throw error;
  }
}

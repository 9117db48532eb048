/**
 * The id a fan-out's delivery goes by inside the service, and the event id the API shows for it
 * (issue 29). Apart from `event.ts`, so that what reads an id (a skip) needs nothing else of events.
 */
import { blake2bDigest } from './routing.js';

/**
 * The id a fan-out's delivery to one subscription goes by inside the service (its record, its key's
 * head, its dead letter): the event's id, a space, and 32 hex characters of BLAKE2b of the
 * subscription id. No event a producer sends has it (their ids hold no space), the same event and
 * subscription always give it (a resend is a duplicate), and two subscriptions never share it. The
 * receiver never sees it: its `webhook-id` is the event's own id (`publicEventIdOf` in `event.ts`).
 */
export function fanOutEventId(eventId: string, subscriptionId: string): string {
  return `${eventId} ${Buffer.from(blake2bDigest(subscriptionId, 16)).toString('hex')}`;
}

/**
 * The id the API knows a delivery by, from the id it goes by inside the service (a key's head, a
 * group's): a fan-out's delivery's is its event's, the part before the space (no producer id has
 * one, see {@link fanOutEventId}); any other's is itself.
 */
export function publicEventIdOfDelivery(deliveryId: string): string {
  const space = deliveryId.indexOf(' ');
  return space < 0 ? deliveryId : deliveryId.slice(0, space);
}

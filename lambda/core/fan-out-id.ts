/**
 * The ids an event goes by inside the service, and the event id the API shows for them. An event id
 * is its producer's within a scope: its tenant and its destination (the subscription it names, or
 * the tenant's fan-out). Apart from `event.ts`, so that what reads an id (a skip) needs nothing else
 * of events.
 */
import { blake2bDigest } from './routing.js';

const hex = (input: string): string => Buffer.from(blake2bDigest(input, 16)).toString('hex');

/**
 * Length-prefixed, so that no two (tenant, subscription) pairs write the same text: a tenant id
 * may hold any character.
 */
const scopeText = (tenantId: string, subscriptionId: string): string => `${tenantId.length}:${tenantId}${subscriptionId}`;

/**
 * The id a fan-out's delivery to one subscription goes by inside the service (its record, its key's
 * head, its dead letter): the event's id, a space, and 32 hex characters of BLAKE2b of the
 * subscription id. No event a producer sends has it (their ids hold no space), the same event and
 * subscription always give it (a resend is a duplicate), and two subscriptions never share it. The
 * receiver never sees it: its `webhook-id` is the event's own id (`publicEventIdOf` in `event.ts`).
 * A subscription belongs to one tenant for good (a PUT of another tenant is `tenant_mismatch`),
 * so the subscription alone scopes it.
 */
export function fanOutEventId(eventId: string, subscriptionId: string): string {
  return `${eventId} ${hex(subscriptionId)}`;
}

/**
 * Bytes of BLAKE2b in {@link namedEventId}: 96 bits tell two scopes of one event id apart (a clash
 * would need 2^48 scopes sending that one id), in 16 base64url characters. The id is written in
 * the consumer's items (a run's ids, a group's head), where every byte counts toward a write unit.
 */
const NAMED_SCOPE_BYTES = 12;

/**
 * The id an event that names its subscription goes by inside the service: the event's id, a space,
 * `s` and 16 base64url characters of BLAKE2b of its tenant and subscription. Two tenants, or two
 * subscriptions, that send the same event id make two events; the `s` keeps it apart from every
 * fan-out delivery's id ({@link fanOutEventId}), whatever the subscription ids. Events accepted
 * before ids were scoped kept the producer's id alone, which the consumer still reads.
 */
export function namedEventId(eventId: string, tenantId: string, subscriptionId: string): string {
  return `${eventId} s${Buffer.from(blake2bDigest(scopeText(tenantId, subscriptionId), NAMED_SCOPE_BYTES)).toString('base64url')}`;
}

/**
 * The key of a fan-out's record (see `FanOutRecord`) in the Events table: its event id, ` fan-out `
 * and 32 hex characters of BLAKE2b of its tenant, so that two tenants' fan-outs with one event id
 * are two fan-outs. No event's item has it: a producer's ids hold no space, and deliveries' ids end
 * in 32 hex characters, or `s` and 16 base64url characters, after a single space.
 */
export function fanOutRecordKey(eventId: string, tenantId: string): string {
  return `${eventId} fan-out ${hex(tenantId)}`;
}

/** The key fan-out records had before they were scoped by tenant: read during an upgrade only (see `legacyFanOutRecordKey`'s callers). */
export function legacyFanOutRecordKey(eventId: string): string {
  return `${eventId} fan-out`;
}

/**
 * The id the API knows a delivery by, from the id it goes by inside the service (a key's head, a
 * group's): the part before the space (no producer id has one, see {@link fanOutEventId} and
 * {@link namedEventId}); an id without one (accepted before ids were scoped) is itself.
 */
export function publicEventIdOfDelivery(deliveryId: string): string {
  const space = deliveryId.indexOf(' ');
  return space < 0 ? deliveryId : deliveryId.slice(0, space);
}

/**
 * Subscriptions (docs/api.md#subscriptions): one receiver endpoint of one tenant, with its signing secret.
 */
import * as z from 'zod';
import { boundedText, parseWith, subscriptionIdSchema, type Parsed } from './event.js';
import { hasUserInfo, isHttpUrl } from './endpoint-policy.js';
import { Ordering } from './routing.js';
import { MAX_ROTATION_GRACE_SECONDS, secretSchema } from './secret.js';

/** URLs longer than this are refused; browsers and proxies draw the line near here too. */
const MAX_URL_LENGTH = 2048;

/** A subscription stored before `batch_size` existed gets one event per POST, as it always did. */
export const DEFAULT_BATCH_SIZE = 1;

/** At most 10 events per POST: a Lambda batch of a FIFO queue, and one SQS receive of a group, hold at most 10. */
export const MAX_BATCH_SIZE = 10;

/** `batch_size`: the most events of one ordering key in one POST (docs/api.md#batches). */
export const batchSizeSchema = z
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_BATCH_SIZE, `must be at most ${MAX_BATCH_SIZE}`);

/** The most event types one subscription may list: a filter a person reads, not a catalogue. */
export const MAX_EVENT_TYPES = 100;

/**
 * `event_types`: the types of the events a fan-out (an event naming its tenant and no subscription)
 * delivers to the subscription, each as an event's `type` is (docs/api.md#fan-out-by-event-type). Absent or null: every type.
 */
export const eventTypesSchema = z
  .array(boundedText(1, 128))
  .min(1, 'must list at least 1 type; null (or no field) takes every type')
  .max(MAX_EVENT_TYPES, `must list at most ${MAX_EVENT_TYPES} types`)
  .refine((types) => new Set(types).size === types.length, 'must not list a type twice');

/** Whether a subscription with these `event_types` takes an event of `type` in a fan-out. */
export function takesEventType(eventTypes: readonly string[] | undefined, type: string): boolean {
  return eventTypes === undefined || eventTypes.includes(type);
}

/** `ordering`: what is ordered, the subscription or each of its resources (docs/api.md#the-ordering-key-header). */
export const orderingSchema = z.enum(Ordering);

/**
 * The body of `PUT /v1/subscriptions/{subscription_id}`. `secret`, `batch_size` and `ordering` are
 * optional: a replacement without them keeps its stored ones, a creation gets the defaults.
 */
export const subscriptionBodySchema = z.strictObject({
  tenant_id: boundedText(1, 128),
  url: z
    .string()
    .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
    .refine(isHttpUrl, 'must be an absolute http:// or https:// URL')
    .refine((url) => !hasUserInfo(url), 'must not hold user information (user:password@): a credential in it would be shown back by GET')
    .meta({ description: `The endpoint: an absolute http:// or https:// URL, at most ${MAX_URL_LENGTH} characters, without user information (\`user:password@\`).` }),
  secret: secretSchema.optional(),
  batch_size: batchSizeSchema.optional().meta({ description: 'The most events of one ordering key in one POST, 1 to 10. A creation without it gets 1; a replacement without it keeps its own.' }),
  event_types: eventTypesSchema.nullable().optional().meta({
    description:
      'The event types a fan-out (an event naming `tenant_id` and no `subscription_id`) delivers to this subscription. ' +
      'null takes every type. A creation without it takes every type; a replacement without it keeps its own. Events naming the subscription are delivered whatever their type.',
  }),
  ordering: orderingSchema.optional().meta({
    description:
      '`"subscription"`: the subscription is one ordering key. `"resource"`: each `resource_id` of its events is a key of its own, and events without one are refused. ' +
      'A creation without it gets `"subscription"`; a replacement without it keeps its own. Changed while events are pending: 409 `ordering_change_pending`.',
  }),
});
export type SubscriptionBody = z.infer<typeof subscriptionBodySchema>;

/** The body of `POST /v1/subscriptions/{subscription_id}/ordering-change`: the ordering to change to. */
export const orderingChangeBodySchema = z.strictObject({ ordering: orderingSchema });

const INVALID = 'The subscription is not valid.';

/** The query of `GET /v1/subscriptions` besides its paging: whose subscriptions. */
/** A position in a tenant's list of subscriptions: the last subscription id of a page. */
export const subscriptionPositionSchema = subscriptionIdSchema;

export const subscriptionsQuerySchema = z.object({ tenant_id: boundedText(1, 128).meta({ description: 'The tenant whose subscriptions are listed.' }) });

/** Validates the `{subscription_id}` path parameter. */
export function parseSubscriptionId(value: string | undefined): Parsed<string> {
  return parseWith(subscriptionIdSchema, value ?? '', INVALID, ['subscription_id']);
}

/** Validates the body of `PUT /v1/subscriptions/{subscription_id}`. */
export function parseSubscriptionBody(value: unknown): Parsed<SubscriptionBody> {
  return parseWith(subscriptionBodySchema, value, INVALID);
}

/**
 * The body of `POST /v1/subscriptions/{subscription_id}/secret/rotate`, optional as a whole: the
 * new secret (generated when absent, as with PUT) and how long the previous one keeps signing
 * (`DEFAULT_ROTATION_GRACE_SECONDS` when absent; 0 ends it at once).
 */
export const rotateSecretBodySchema = z.strictObject({
  secret: secretSchema.optional(),
  grace_seconds: z
    .int('must be a whole number of seconds')
    .min(0, 'must be at least 0')
    .max(MAX_ROTATION_GRACE_SECONDS, `must be at most ${MAX_ROTATION_GRACE_SECONDS} (7 days)`)
    .optional(),
});
export type RotateSecretBody = z.infer<typeof rotateSecretBodySchema>;

/**
 * The answer to a rotation: the end of the previous secret's grace, and the new secret only when the
 * rotation generated it. A secret given in the request, and the previous one, are never returned:
 * the caller has them, and an answer is one more place to leak them (reading a secret is
 * `GET …/secret`, granted apart).
 */
export const rotateSecretResponseSchema = z.strictObject({
  subscription_id: z.string(),
  secret: z.string().optional().meta({ description: 'The secret this rotation generated (a request without `secret`); absent when the request gave it.' }),
  previous_secret_expires_at: z.iso.datetime(),
});
export type RotateSecretResponse = z.infer<typeof rotateSecretResponseSchema>;

/** The longest reason an operator may give for a pause: a line in a lag view, not a document. */
export const MAX_PAUSE_REASON_LENGTH = 256;

/** The reason a pause is given when its request names none. */
export const OPERATOR_PAUSE_REASON = 'paused by an operator';

/**
 * The body of `POST /v1/subscriptions/{subscription_id}/pause`, optional as a whole: why, for the
 * lag view and whoever resumes it. A pause already in force keeps its own time and reason.
 */
export const pauseBodySchema = z.strictObject({
  reason: boundedText(1, MAX_PAUSE_REASON_LENGTH).optional().meta({ description: `Why the subscription is paused, shown by \`GET /v1/subscriptions/{subscription_id}\` and the lag view. Default: "${OPERATOR_PAUSE_REASON}".` }),
});
export type PauseBody = z.infer<typeof pauseBodySchema>;

/** A subscription's pause: since when, and why. Absent: the subscription is delivered. */
export interface SubscriptionPause {
  readonly pausedAt: string;
  readonly reason: string;
}

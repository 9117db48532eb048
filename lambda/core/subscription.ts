/**
 * Subscriptions (CONTRACT §2): one receiver endpoint of one tenant, with its signing secret.
 */
import * as z from 'zod';
import { boundedText, parseWith, subscriptionIdSchema, type Parsed } from './event.js';
import { isHttpUrl } from './endpoint-policy.js';
import { secretSchema } from './secret.js';

/** URLs longer than this are refused; browsers and proxies draw the line near here too. */
const MAX_URL_LENGTH = 2048;

export const subscriptionBodySchema = z.strictObject({
  tenant_id: boundedText(1, 128),
  url: z
    .string()
    .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
    .refine(isHttpUrl, 'must be an absolute http:// or https:// URL'),
  secret: secretSchema.optional(),
});
export type SubscriptionBody = z.infer<typeof subscriptionBodySchema>;

const INVALID = 'The subscription is not valid.';

/** Validates the `{subscription_id}` path parameter. */
export function parseSubscriptionId(value: string | undefined): Parsed<string> {
  return parseWith(subscriptionIdSchema, value ?? '', INVALID, ['subscription_id']);
}

/** Validates the body of `PUT /v1/subscriptions/{subscription_id}`. */
export function parseSubscriptionBody(value: unknown): Parsed<SubscriptionBody> {
  return parseWith(subscriptionBodySchema, value, INVALID);
}

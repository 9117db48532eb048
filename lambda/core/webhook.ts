/**
 * The webhook a receiver gets (CONTRACT §3): body, Standard Webhooks signature and sequence.
 */
import { Webhook } from 'standardwebhooks';
import type { QueuedEvent } from './event.js';

/** Header names, lower-case as HTTP/2 and the Standard Webhooks libraries read them. */
export const WebhookHeader = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
  sequence: 'webhook-sequence',
  /** Present, `true`, on a redelivery of a dead letter: it arrives after later events of its key. */
  redelivery: 'webhook-redelivery',
} as const;

/** One signed attempt, ready to be POSTed. */
export interface WebhookRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The JSON body: the event's type, the time it was accepted, and its payload. It depends only on
 * the event, so every attempt of an event sends the same bytes.
 */
export function webhookBody(queued: QueuedEvent): string {
  return JSON.stringify({ type: queued.event.type, timestamp: queued.accepted_at, data: queued.event.payload });
}

/**
 * Signs one attempt. `webhook-id` is the event_id (a receiver's idempotency key) and
 * `webhook-sequence` the number the event was given on its first attempt; the timestamp and
 * signature are of this attempt, as Standard Webhooks verifiers expect a recent timestamp.
 * `webhook-signature` holds one `v1,` signature per secret (see `signingSecrets`), space-separated
 * as the specification allows, so that a receiver holding any of them verifies.
 */
export function signWebhook(input: {
  readonly queued: QueuedEvent;
  readonly sequence: number;
  readonly secrets: readonly [string, ...string[]];
  readonly attemptedAt: Date;
}): WebhookRequest {
  const body = webhookBody(input.queued);
  const id = input.queued.event.event_id;
  return {
    body,
    headers: {
      'content-type': 'application/json',
      [WebhookHeader.id]: id,
      [WebhookHeader.timestamp]: String(Math.floor(input.attemptedAt.getTime() / 1000)),
      [WebhookHeader.signature]: input.secrets.map((secret) => new Webhook(secret).sign(id, input.attemptedAt, body)).join(' '),
      [WebhookHeader.sequence]: String(input.sequence),
      ...(input.queued.redrive === undefined ? {} : { [WebhookHeader.redelivery]: 'true' }),
    },
  };
}

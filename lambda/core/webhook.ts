/**
 * The webhook a receiver gets (docs/api.md#what-a-receiver-gets): body, Standard Webhooks signature and sequence.
 */
import { Webhook } from 'standardwebhooks';
import * as z from 'zod';
import { publicEventIdOf, webhookEventSchema, type QueuedEvent } from './event.js';
import { RawJson, stringifyJson } from './raw-json.js';
import { blake2bDigest } from './routing.js';
import { MAX_BATCH_SIZE } from './subscription.js';

/** Header names, lower-case as HTTP/2 and the Standard Webhooks libraries read them. */
export const WebhookHeader = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
  sequence: 'webhook-sequence',
  /**
   * The ordering key `webhook-sequence` counts for, as the receiver knows it: the subscription id,
   * or the event's `resource_id` under `ordering: "resource"`; escaped by {@link encodeHeaderText}.
   */
  orderingKey: 'webhook-ordering-key',
  /** Present, `true`, on a redelivery of a dead letter: it arrives after later events of its key. */
  redelivery: 'webhook-redelivery',
} as const;

const utf8 = new TextEncoder();

/**
 * Writes any text as a valid HTTP header value, reversibly: every character but visible ASCII
 * (U+0021 to U+007E) and `%` itself is percent-encoded as its UTF-8 bytes (`%XX`, upper-case), so
 * `decodeURIComponent` gives the text back. Space is encoded too: HTTP trims a value's leading and
 * trailing whitespace, which would change an id that has it. Ids may hold any characters, and
 * Node refuses a header value outside Latin-1 (others mangle it). A lone surrogate, which has no
 * UTF-8, is written as U+FFFD's bytes.
 */
export function encodeHeaderText(text: string): string {
  let encoded = '';
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    if (code >= 0x21 && code <= 0x7e && character !== '%') encoded += character;
    else for (const byte of utf8.encode(character)) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/**
 * The ordering key a webhook names, derived from the queued event rather than carried in it (its
 * schema is strict, and a consumer of the version before would set a new field aside): the
 * subscription id when the event's key is its subscription's, otherwise its `resource_id` (see
 * `partitionKey`).
 */
export function orderingKeyNameOf(queued: QueuedEvent): string {
  if (queued.ordering_key === queued.event.subscription_id) return queued.event.subscription_id;
  return queued.event.resource_id ?? queued.ordering_key;
}

/** One signed attempt, ready to be POSTed. */
export interface WebhookRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The fields of a body that say where its event stands in its key ({@link placeFieldsOf}), as the API document shows them. */
const placeShape = {
  sequence: z.number().int().positive().describe('The event\'s number in its ordering key: 1, 2, 3, … (as `webhook-sequence`).'),
  ordering_key: z.string().describe('The ordering key `sequence` counts for: the subscription id, or the `resource_id` under `ordering: "resource"` (as `webhook-ordering-key`, unescaped).'),
  previous_sequence: z
    .number()
    .int()
    .nonnegative()
    .describe('The number of the key\'s last event delivered before this one, 0 when none was: numbers between it and `sequence` were dead-lettered. On a redelivery, the key\'s last delivered when it was sent.'),
  subscription_id: z
    .string()
    .describe('The subscription this webhook was sent for. With `ordering_key` it names the key `sequence` counts for, and with `webhook-id` (an item\'s `id` in a batch) the delivery: a fan-out\'s copies to two subscriptions share the event\'s id, and their keys may share a `resource_id`.'),
  redelivery: z.literal(true).optional().describe('Present, `true`, only on a redelivery (a redriven dead letter or a replay): it arrives after later events of its key.'),
};

/** The fields of a body that are the event's own: its type, when it was accepted, its payload. */
const eventShape = {
  type: webhookEventSchema.shape.type,
  timestamp: z.iso.datetime().describe('When the event was accepted.'),
  data: webhookEventSchema.shape.payload.meta({ type: 'object', description: 'The event\'s `payload`, its JSON text exactly as it was posted: every digit, key, escape and space of it, in order.' }),
};

/** The body of a webhook of one event (docs/api.md#what-a-receiver-gets), as {@link webhookBody} writes it. */
export const webhookBodySchema = z.strictObject({ ...eventShape, ...placeShape });

/** The body of a batch webhook (docs/api.md#batches), as {@link batchBody} writes it: consecutive events of one key, in order. */
export const batchBodySchema = z.strictObject({
  events: z
    .array(z.strictObject({ id: webhookEventSchema.shape.event_id, ...placeShape, ...eventShape }))
    .min(1)
    .max(MAX_BATCH_SIZE),
});

/** One event as the consumer numbered it: its `sequence`, and its `previous_sequence` (docs/api.md#sequence-numbers-and-gaps). */
export interface NumberedItem {
  readonly queued: QueuedEvent;
  readonly sequence: number;
  /** The number of the key's last event delivered before this one, 0 when none (see `previousDeliveredBefore`). */
  readonly previousSequence: number;
}

/**
 * What the body says of an event's place in its key, under the signature (docs/api.md#trust-the-body-not-the-headers): its number,
 * the key it counts for (as `webhook-ordering-key`, unescaped), the number delivered before it, the
 * subscription it was sent for, and the redelivery mark. The headers say the same outside the
 * signature, but for the subscription: with it a receiver serving several subscriptions at one URL
 * tells their keys and a fan-out's copies (one `webhook-id`) apart.
 */
function placeFieldsOf({ queued, sequence, previousSequence }: NumberedItem): Record<string, unknown> {
  return {
    sequence,
    ordering_key: orderingKeyNameOf(queued),
    previous_sequence: previousSequence,
    subscription_id: queued.event.subscription_id,
    ...(queued.redrive === undefined ? {} : { redelivery: true }),
  };
}

/**
 * The JSON body of one event (docs/api.md#what-a-receiver-gets): its type, the time it was accepted and its payload
 * (`data`: the payload's text as posted, spliced in, docs/api.md#payloads-travel-as-posted), then its place in its key
 * ({@link placeFieldsOf}). It depends only on the event and its numbers, which every attempt of
 * it keeps, so every attempt sends the same bytes.
 */
export function webhookBody(item: NumberedItem): string {
  const { queued } = item;
  return stringifyJson({ type: queued.event.type, timestamp: queued.accepted_at, data: new RawJson(queued.event.payload_json), ...placeFieldsOf(item) });
}

/**
 * Signs one attempt. `webhook-id` is the event_id (a receiver's idempotency key) and
 * `webhook-sequence` the number the event was given on its first attempt; the timestamp and
 * signature are of this attempt, as Standard Webhooks verifiers expect a recent timestamp.
 * `webhook-ordering-key` names the key the sequence counts for.
 * `webhook-signature` holds one `v1,` signature per secret (see `signingSecrets`), space-separated
 * as the specification allows, so that a receiver holding any of them verifies.
 */
export function signWebhook(input: NumberedItem & { readonly secrets: readonly [string, ...string[]]; readonly attemptedAt: Date }): WebhookRequest {
  const body = webhookBody(input);
  return { body, headers: signedHeaders({ id: publicEventIdOf(input.queued), body, events: [input.queued], secrets: input.secrets, attemptedAt: input.attemptedAt, sequence: input.sequence }) };
}

/**
 * The headers of one attempt, one event or a batch: its id, this attempt's time and one `v1,`
 * signature per secret over id, time and body, the ordering key its events share, the number of
 * a single event, and the redelivery mark when one of them is a redriven dead letter.
 */
function signedHeaders(input: {
  readonly id: string;
  readonly body: string;
  readonly events: readonly [QueuedEvent, ...QueuedEvent[]];
  readonly secrets: readonly [string, ...string[]];
  readonly attemptedAt: Date;
  /** Only for a single event: a batch's items carry their own numbers. */
  readonly sequence?: number;
}): Record<string, string> {
  return {
    'content-type': 'application/json',
    [WebhookHeader.id]: input.id,
    [WebhookHeader.timestamp]: String(Math.floor(input.attemptedAt.getTime() / 1000)),
    [WebhookHeader.signature]: input.secrets.map((secret) => new Webhook(secret).sign(input.id, input.attemptedAt, input.body)).join(' '),
    ...(input.sequence === undefined ? {} : { [WebhookHeader.sequence]: String(input.sequence) }),
    [WebhookHeader.orderingKey]: encodeHeaderText(orderingKeyNameOf(input.events[0])),
    ...(input.events.some((queued) => queued.redrive !== undefined) ? { [WebhookHeader.redelivery]: 'true' } : {}),
  };
}

/**
 * The most bytes one batch body may hold (docs/api.md#batches): a batch stops growing before it would pass
 * this, and one event always goes alone, whatever its size (an event is at most an SQS message,
 * about 1 MiB). 1 MiB: what one accepted request may hold, and what common receivers' body limits
 * are set to.
 */
export const MAX_BATCH_BODY_BYTES = 1_048_576;

/** One event of a batch, as the consumer numbered it. */
export type BatchItem = NumberedItem;

/**
 * An item of a batch body (docs/api.md#batches): the event's id, its place in its key as a single event's
 * body says it ({@link placeFieldsOf}: `redelivery` only on a redelivery), its type, time and payload.
 */
function batchItemOf(item: BatchItem): Record<string, unknown> {
  const { queued } = item;
  return { id: publicEventIdOf(queued), ...placeFieldsOf(item), type: queued.event.type, timestamp: queued.accepted_at, data: new RawJson(queued.event.payload_json) };
}

/** The body of a batch: its items in sequence order, each `data` its payload's text as posted. Every attempt of the same events sends the same bytes. */
export function batchBody(items: readonly BatchItem[]): string {
  return stringifyJson({ events: items.map(batchItemOf) });
}

/**
 * The `webhook-id` of a batch: `batch_` and 32 hex characters of BLAKE2b over its events' ids and
 * numbers, so that the same events have the same id (a receiver's idempotency key holds across a
 * retry) and different events a different one. Length-prefixed, so no two lists give one input.
 */
export function batchWebhookId(items: readonly BatchItem[]): string {
  const input = items.map(({ queued, sequence }) => `${queued.event.event_id.length}:${queued.event.event_id}:${sequence}`).join('|');
  return `batch_${Buffer.from(blake2bDigest(input, 16)).toString('hex')}`;
}

/** The byte length of a batch's body, to keep it under {@link MAX_BATCH_BODY_BYTES} before signing. */
export function batchBodyBytes(items: readonly BatchItem[]): number {
  return Buffer.byteLength(batchBody(items), 'utf8');
}

/**
 * Signs one attempt of a batch (docs/api.md#batches): one Standard Webhooks signature over the whole body,
 * `webhook-id` derived from the events ({@link batchWebhookId}). No `webhook-sequence` header: each
 * item carries its own number; `webhook-ordering-key` names the key they count for (every item is
 * of one key), and a redriven dead letter, which always comes alone, is marked as one event is (docs/api.md#what-a-receiver-gets).
 */
export function signBatch(input: {
  readonly items: readonly [BatchItem, ...BatchItem[]];
  readonly secrets: readonly [string, ...string[]];
  readonly attemptedAt: Date;
}): WebhookRequest {
  const body = batchBody(input.items);
  const [first, ...rest] = input.items;
  const events: [QueuedEvent, ...QueuedEvent[]] = [first.queued, ...rest.map((item) => item.queued)];
  return { body, headers: signedHeaders({ id: batchWebhookId(input.items), body, events, secrets: input.secrets, attemptedAt: input.attemptedAt }) };
}

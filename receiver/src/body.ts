/**
 * The body of an ordered-webhooks webhook, one event or a batch, read after its signature was
 * verified. Fields the kit does not know are let through (the service's contract grows), a missing
 * or malformed one it needs is refused.
 */
import * as z from 'zod';

const placeShape = {
  sequence: z.number().int().positive(),
  ordering_key: z.string(),
  previous_sequence: z.number().int().nonnegative(),
  // Absent from the bodies of a stack from before the body named its subscription: those are judged as they were.
  subscription_id: z.string().min(1).optional(),
  redelivery: z.literal(true).optional(),
};

function isJsonObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The payload, passed through as JSON.parse made it, never copied: copying it key by key (as
 * `z.record` does, or a spread) would drop an own `"__proto__"` key, or turn it into a prototype
 * change, and the application must get the data that was signed.
 */
const dataSchema = z.custom<Readonly<Record<string, unknown>>>(isJsonObject, 'must be a JSON object');
const eventShape = { type: z.string(), timestamp: z.string(), data: dataSchema };

const singleSchema = z.object({ ...eventShape, ...placeShape });
const batchSchema = z.object({ events: z.array(z.object({ id: z.string().min(1), ...eventShape, ...placeShape })).min(1) });

/** One event of a webhook, as the receiver's handler gets it. */
export interface ReceivedEvent {
  /** The event's id: its `webhook-id` when it came alone, its item's `id` in a batch. */
  readonly id: string;
  readonly type: string;
  /** When the service accepted it (ISO 8601). */
  readonly timestamp: string;
  /**
   * The payload as JSON.parse reads the signed body: every key, an own `"__proto__"` included (read
   * it with `Object.hasOwn`, and copy it with `Object.defineProperty` or `structuredClone`, never a
   * spread or `Object.assign`). JSON.parse reads every number as a double, so an integer above
   * 2^53 or a long decimal loses digits: read such fields from {@link ReceivedEvent.rawBody}.
   */
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * The exact text of the signed body, as it arrived: a batch's whole body for each of its items
   * (find the item by its `id`). For a lossless parser, when JSON.parse is not enough.
   */
  readonly rawBody: string;
  /** The subscription the webhook was sent for; undefined in the bodies of a stack from before the body named it. */
  readonly subscriptionId: string | undefined;
  /** The key its number counts for: the subscription id, or the event's `resource_id` under `ordering: "resource"`. */
  readonly orderingKey: string;
  readonly sequence: number;
  /** The number of the key's last event delivered before this one, 0 when none was. */
  readonly previousSequence: number;
  /** A redriven dead letter or a replay: it comes after later events of its key. */
  readonly isRedelivery: boolean;
  /** The `webhook-id` of the request that carried it (a batch's id for a batch's items). */
  readonly webhookId: string;
}

/**
 * The events of a verified body, in order; the reason when it is no webhook body of
 * ordered-webhooks. `body` is JSON.parse of `rawBody`, the text the signature covers.
 */
export function readEvents(body: unknown, webhookId: string, rawBody: string): { readonly events: readonly ReceivedEvent[] } | { readonly reason: string } {
  const toEvent = (id: string, item: z.infer<typeof singleSchema>): ReceivedEvent => ({
    id,
    type: item.type,
    timestamp: item.timestamp,
    data: item.data,
    rawBody,
    subscriptionId: item.subscription_id,
    orderingKey: item.ordering_key,
    sequence: item.sequence,
    previousSequence: item.previous_sequence,
    isRedelivery: item.redelivery === true,
    webhookId,
  });
  const isBatch = typeof body === 'object' && body !== null && 'events' in body;
  if (isBatch) {
    const batch = batchSchema.safeParse(body);
    if (!batch.success) return { reason: `not a batch webhook: ${z.prettifyError(batch.error)}` };
    return { events: batch.data.events.map((item) => toEvent(item.id, item)) };
  }
  const single = singleSchema.safeParse(body);
  if (!single.success) return { reason: `not a webhook of one event: ${z.prettifyError(single.error)}` };
  return { events: [toEvent(webhookId, single.data)] };
}

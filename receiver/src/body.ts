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
  redelivery: z.literal(true).optional(),
};
const eventShape = { type: z.string(), timestamp: z.string(), data: z.record(z.string(), z.unknown()) };

const singleSchema = z.object({ ...eventShape, ...placeShape });
const batchSchema = z.object({ events: z.array(z.object({ id: z.string().min(1), ...eventShape, ...placeShape })).min(1) });

/** One event of a webhook, as the receiver's handler gets it. */
export interface ReceivedEvent {
  /** The event's id: its `webhook-id` when it came alone, its item's `id` in a batch. */
  readonly id: string;
  readonly type: string;
  /** When the service accepted it (ISO 8601). */
  readonly timestamp: string;
  readonly data: Readonly<Record<string, unknown>>;
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

/** The events of a verified body, in order; the reason when it is no webhook body of ordered-webhooks. */
export function readEvents(body: unknown, webhookId: string): { readonly events: readonly ReceivedEvent[] } | { readonly reason: string } {
  const toEvent = (id: string, item: z.infer<typeof singleSchema>): ReceivedEvent => ({
    id,
    type: item.type,
    timestamp: item.timestamp,
    data: item.data,
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

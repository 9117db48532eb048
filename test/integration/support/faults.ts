/**
 * Faults injected into the consumer's ports, as a crash at a chosen point would leave things.
 */
import type { DeliveryPorts } from '../../../lambda/core/delivery.js';
import type { DeliveryPortsWrapper } from '../../../lambda/handlers/consumer.js';
import { WebhookHeader } from '../../../lambda/core/webhook.js';
import { publicEventIdOf } from '../../../lambda/core/event.js';

/** Thrown in place of a dependency call, like a function crashing or DynamoDB being unreachable. */
export class InjectedFaultError extends Error {
  override readonly name = 'InjectedFaultError';
}

/** Where a sent event stands on its key (a subscription's own: its header names it as the store does), which tells the write that records its delivery. */
interface SentEvent {
  readonly orderingKey: string;
  readonly sequence: number;
}

/** The events a webhook carries, with their keys and numbers: one, or a batch's items. */
function eventsOf(headers: Readonly<Record<string, string>>, body: string): [string, SentEvent][] {
  const orderingKey = headers[WebhookHeader.orderingKey] ?? '';
  const sequence = headers[WebhookHeader.sequence];
  if (sequence !== undefined) return [[headers[WebhookHeader.id] ?? '', { orderingKey, sequence: Number(sequence) }]];
  const { events } = JSON.parse(body) as { events?: { id: string; sequence: number }[] };
  return (events ?? []).map((item) => [item.id, { orderingKey, sequence: item.sequence }]);
}

/**
 * Makes the record of an event's delivery fail once, after the receiver answered 2xx, for each
 * event id added to one of the returned sets, wherever the consumer records it: on the event's
 * record (`markDelivered`), or on its key's item with the deliveries before it
 * (`recordDelivered`, the first one at or past its number).
 * - `eventIds`: nothing is written, as if the consumer crashed between the 2xx and the record.
 * - `answerLostEventIds`: the write lands and its answer is lost, as if the consumer crashed
 *   between the record and the message's deletion.
 */
export function failDeliveryRecordOnce(): { readonly eventIds: Set<string>; readonly answerLostEventIds: Set<string>; readonly wrap: DeliveryPortsWrapper } {
  const eventIds = new Set<string>();
  const answerLostEventIds = new Set<string>();
  const sent = new Map<string, SentEvent>();
  /** Takes the event ids of one set that this write records, once each. */
  const taken = (ids: Set<string>, records: (eventId: string) => boolean): boolean => {
    const hits = [...ids].filter(records);
    for (const id of hits) ids.delete(id);
    return hits.length > 0;
  };
  const wrap: DeliveryPortsWrapper = (ports: DeliveryPorts) => ({
    ...ports,
    send: async (url, request) => {
      for (const [eventId, event] of eventsOf(request.headers, request.body)) sent.set(eventId, event);
      return ports.send(url, request);
    },
    store: {
      ...ports.store,
      markDelivered: async (input) => {
        const eventId = publicEventIdOf(input.queued);
        if (taken(eventIds, (id) => id === eventId)) throw new InjectedFaultError(`crash after the 2xx of ${eventId}`);
        const result = await ports.store.markDelivered(input);
        if (taken(answerLostEventIds, (id) => id === eventId)) throw new InjectedFaultError(`crash after the record of ${eventId}`);
        return result;
      },
      recordDelivered: async (input) => {
        const records = (eventId: string): boolean => {
          const event = sent.get(eventId);
          return event !== undefined && event.orderingKey === input.orderingKey && event.sequence <= input.sequence;
        };
        if (taken(eventIds, records)) throw new InjectedFaultError(`crash after the 2xx of ${input.orderingKey}'s events up to ${input.sequence}`);
        await ports.store.recordDelivered(input);
        if (taken(answerLostEventIds, records)) throw new InjectedFaultError(`crash after the record of ${input.orderingKey}'s events up to ${input.sequence}`);
      },
    },
  });
  return { eventIds, answerLostEventIds, wrap };
}

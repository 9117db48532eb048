/**
 * Faults injected into the consumer's ports, as a crash at a chosen point would leave things.
 */
import type { DeliveryPorts } from '../../../lambda/core/delivery.js';
import type { DeliveryPortsWrapper } from '../../../lambda/handlers/consumer.js';

/** Thrown in place of a dependency call, like a function crashing or DynamoDB being unreachable. */
export class InjectedFaultError extends Error {
  override readonly name = 'InjectedFaultError';
}

/**
 * Makes `store.markDelivered` fail once for each event id added to the returned set: the
 * receiver has answered 2xx, but the delivery is not recorded, as if the consumer crashed
 * between the two.
 */
export function failMarkDeliveredOnce(): { readonly eventIds: Set<string>; readonly wrap: DeliveryPortsWrapper } {
  const eventIds = new Set<string>();
  const wrap: DeliveryPortsWrapper = (ports: DeliveryPorts) => ({
    ...ports,
    store: {
      ...ports.store,
      markDelivered: async (input) => {
        if (eventIds.delete(input.queued.event.event_id)) throw new InjectedFaultError(`crash after the 2xx of ${input.queued.event.event_id}`);
        return ports.store.markDelivered(input);
      },
    },
  });
  return { eventIds, wrap };
}

/**
 * Kept events (for the replay of a window): the body of every accepted event, kept `EVENT_RETENTION_DAYS`
 * in the store the dead letters use (one item per enqueued message, compressed: a pack's events
 * share one), and the numbers the consumer gave the events of each run or
 * batch, which are recorded on the key alone (see `DeliveryStore.recordDelivered`) and would
 * otherwise be forgotten. A replay reads both back: the bodies in acceptance order, each one's
 * original `webhook-sequence` from its record, its run's numbers, or nowhere (never numbered:
 * still to come).
 */
import type { QueuedEvent } from './event.js';

/** An accepted event as ingest keeps it. */
export interface KeptEvent {
  /** As it was queued (the body ingest sent, without any redrive). */
  readonly queued: QueuedEvent;
  /** Its message's place in its group (`queuePositionOf`), when SQS said; the record's, for its first message. */
  readonly queuePosition: string | undefined;
}

/**
 * The numbers one `beginBatch` gave a run's or a batch's events: consecutive from `firstSequence`,
 * in `eventIds` order. Found by the place of the first one's message (`queuePositionOf`): the
 * numbers of the run an event was delivered in start at its own place or before, in its group.
 */
export interface RunNumbers {
  readonly orderingKey: string;
  readonly firstPosition: string;
  readonly firstSequence: number;
  readonly eventIds: readonly string[];
}

/** The number a run gave an event; undefined when the event is not one of its members. */
export function numberIn(run: RunNumbers | undefined, eventId: string): number | undefined {
  const index = run?.eventIds.indexOf(eventId) ?? -1;
  return run === undefined || index < 0 ? undefined : run.firstSequence + index;
}

export interface KeptEventPage {
  /** Each with where a page after it starts (`cursor`, its kept message's place in the store). */
  readonly events: readonly (KeptEvent & { readonly cursor: string })[];
  /** Where the next page starts after (opaque to the caller); undefined when the window ends here. */
  readonly nextAfter: string | undefined;
}

/** What ingest, the consumer and a replay read and write of kept events. */
export interface KeptEventStore {
  /**
   * Keeps the events of one enqueued message (one key's, accepted together) for the retention:
   * `body` is the message's SQS body (one event, or a pack of them, see `messageOfBodies`), whose
   * events are `events`, in order.
   */
  readonly keep: (input: { readonly events: readonly [KeptEvent, ...KeptEvent[]]; readonly body: string }) => Promise<void>;
  /** Keeps a run's numbers, expiring with the bodies of its events (`at`: when they were given). */
  readonly keepNumbers: (input: RunNumbers & { readonly subscriptionId: string; readonly at: string }) => Promise<void>;
  /** The numbers of the key's run whose first event's place is `queuePosition` or the latest before it in the same group. */
  readonly findNumbers: (input: { readonly subscriptionId: string; readonly orderingKey: string; readonly queuePosition: string }) => Promise<RunNumbers | undefined>;
  /**
   * When the subscription's newest kept event was accepted (ingest's clock), if it has one: where a
   * replay's window ends when its request names no end (see `parseReplayWindow`). Strongly consistent.
   */
  readonly newestAcceptedAt: (subscriptionId: string) => Promise<string | undefined>;
  /**
   * A page of the subscription's events accepted from `since` to `until` (ISO times, inclusive),
   * in acceptance order, after `after` (a page's `nextAfter`): the events of up to `limit` kept
   * messages, each message's in its order.
   */
  readonly readWindow: (input: {
    readonly subscriptionId: string;
    readonly since: string;
    readonly until: string;
    readonly after: string | undefined;
    readonly limit: number;
  }) => Promise<KeptEventPage>;
}

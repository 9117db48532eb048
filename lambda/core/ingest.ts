/**
 * Accepting events (`POST /v1/events`, docs/api.md#events): route them, refuse unknown subscriptions,
 * answer resent event ids as duplicates, and enqueue the rest in each key's order.
 */
import * as z from 'zod';
import { ErrorCode, type ErrorDetail } from './api-error.js';
import { encodeQueuedEvent, messageOfBodies, queuedEventFieldsOf, type EventsRequest, type QueuedEvent, type RequestEvent, type WebhookEvent } from './event.js';
import { fanOutEventId, fanOutRecordKey, legacyFanOutRecordKey, namedEventId } from './fan-out-id.js';
import { MAX_EVENTS_PER_MESSAGE, MAX_ORDERING_KEY_BYTES, MAX_QUEUED_EVENT_BYTES } from './limits.js';
import { queuePositionOf } from './delivery.js';
import { isHeldForOrderingChange, type OrderingChangeMark } from './ordering-change.js';
import { SendFailureKind, SendStatus, sendInKeyOrder, type OutgoingMessage, type SendBatch, type SendFailure } from './enqueue-plan.js';
import type { KeptEventStore } from './kept-event.js';
import type { GroupIntake } from './lag.js';
import { blake2bDigest, DEFAULT_ORDERING, messageGroupIdFor, Ordering, partitionKey } from './routing.js';
import { schemaOf } from './schema-match.js';
import { takesEventType } from './subscription.js';

/** What ingest records for an accepted event: its idempotency record. */
export interface AcceptedEventRecord {
  readonly eventId: string;
  readonly subscriptionId: string;
  readonly tenantId: string;
  readonly orderingKey: string;
  readonly messageGroupId: string;
  readonly acceptedAt: string;
  /** Its type and payload's {@link eventFingerprint}: a resend with another is a conflict, not a duplicate. */
  readonly fingerprint?: string;
  /**
   * Where the message that carries it stands in its group (`queuePositionOf`), when SQS said: the
   * consumer takes a message of this event at any other place for a copy (see `isQueueCopy`).
   */
  readonly queuePosition?: string;
}

export const RecordOutcome = {
  /** First acceptance, still pending: ingest counts it in its group's lag. */
  recorded: 'recorded',
  /** First acceptance, but the consumer settled it already (and so did not uncount it): not counted. */
  recordedSettled: 'recorded_settled',
  /** A concurrent request recorded it first: a duplicate. */
  alreadyRecorded: 'already_recorded',
  /** A concurrent request recorded the same id first, with another type or payload (see {@link eventFingerprint}). */
  conflict: 'conflict',
} as const;
export type RecordOutcome = (typeof RecordOutcome)[keyof typeof RecordOutcome];

/** What ingest reads of a subscription: whose it is, what its events are ordered by, and the types a fan-out delivers to it. */
export interface SubscriptionRouting {
  readonly tenantId: string;
  readonly ordering: Ordering;
  /** Absent: every type (see `takesEventType`). */
  readonly eventTypes?: readonly string[];
  /** A change of its `ordering` begun: its events are held while the mark is fresh (see `isHeldForOrderingChange`). */
  readonly orderingChange?: OrderingChangeMark;
}

/**
 * A fan-out as first accepted (docs/api.md#fan-out-by-event-type): the subscriptions its event goes to, fixed then, so that
 * a resend delivers to the same ones (never twice: each delivery has its own record) and a
 * subscription created later gets nothing of it.
 */
export interface FanOutRecord {
  readonly eventId: string;
  readonly tenantId: string;
  /** Sorted; empty when no subscription of the tenant took the event's type. */
  readonly subscriptionIds: readonly string[];
  readonly acceptedAt: string;
  /** The event's {@link eventFingerprint}; absent on records written before fingerprints. */
  readonly fingerprint?: string;
}

/** What ingest finds of an event recorded before it enqueues anything (see `IngestPorts.findRecorded`). */
export interface RecordedEvent {
  readonly tenantId: string | undefined;
  readonly subscriptionId: string | undefined;
  /** Absent on records written before fingerprints: such a record is taken for the same event. */
  readonly fingerprint: string | undefined;
}

/**
 * What tells two sends of one event id apart: BLAKE2b of its type and its payload's JSON text as
 * posted (what the receiver gets: another spelling of the same value is another payload). The
 * same tenant, destination and id with another fingerprint is `event_id_conflict`, never a duplicate.
 */
export function eventFingerprint(event: Pick<RequestEvent, 'type' | 'payload_json'>): string {
  return Buffer.from(blake2bDigest(`${event.type.length}:${event.type}${event.payload_json}`, 16)).toString('hex');
}

/** The most deliveries one request may make, fan-outs counted per subscription: it must be enqueued and recorded well within API Gateway's 30 s. */
export const MAX_DELIVERIES_PER_REQUEST = 2_000;

/** The ports ingest needs; adapters implement them. */
export interface IngestPorts {
  /** The tenant and ordering of each subscription that exists, by id: one read serves the refusal of unknown ones and the routing. */
  readonly findSubscriptionRouting: (subscriptionIds: readonly string[]) => Promise<ReadonlyMap<string, SubscriptionRouting>>;
  /** Each tenant's subscriptions, with their routing, for fan-outs. */
  readonly findTenantSubscriptions: (tenantIds: readonly string[]) => Promise<ReadonlyMap<string, ReadonlyMap<string, SubscriptionRouting>>>;
  /** The fan-outs recorded under these keys (`fanOutRecordKey`, see {@link FanOutRecord}), by key. */
  readonly findFanOuts: (keys: readonly string[]) => Promise<ReadonlyMap<string, FanOutRecord>>;
  /** Records a fan-out unless one is recorded for its tenant and event id already: the record that stands. */
  readonly recordFanOut: (record: FanOutRecord) => Promise<FanOutRecord>;
  /**
   * The events ingest recorded under these ids, by id, strongly consistent: read before anything is
   * enqueued, so that a resend with another type or payload is refused whole. Absent: none is read.
   */
  readonly findRecorded?: (eventIds: readonly string[]) => Promise<ReadonlyMap<string, RecordedEvent>>;
  /**
   * Records a first acceptance; `already_recorded` when another request recorded it first. The
   * same record again (its write's answer lost, and the write repeated) is no other request's.
   */
  readonly recordAccepted: (record: AcceptedEventRecord) => Promise<RecordOutcome>;
  /** Counts recorded events into their group's lag. */
  readonly recordGroupIntake: (intake: GroupIntake) => Promise<void>;
  /** Keeps an enqueued message's events for a replay (`EVENT_RETENTION_DAYS`); absent when none is kept. */
  readonly keepEvents?: KeptEventStore['keep'];
  readonly sendBatch: SendBatch;
  readonly now: () => Date;
  /** A new id, unique to the request: its messages' deduplication ids (see `toPacks`). */
  readonly uniqueId: () => string;
}

/** The routing ingest applies to a request (read per request: a pause takes effect at once). */
export interface IngestSettings {
  readonly partitionCount: number | undefined;
  /** Paused for a repartitioning: answer `paused`, enqueue nothing. */
  readonly isPaused?: boolean;
  /**
   * The most events of a key in one message (`maxEventsPerMessage` of the configuration, which
   * the backstop's receive count is set by); MAX_EVENTS_PER_MESSAGE when absent.
   */
  readonly maxEventsPerMessage?: number;
  /**
   * Until this time (ISO 8601), an event that names its subscription is also looked up under its
   * producer's id alone, and a fan-out under its record's key without tenant, as they were recorded
   * before ids were scoped per tenant and destination: a resend of one of them is a duplicate
   * (`LEGACY_EVENT_IDS_UNTIL`). Absent: not looked up.
   */
  readonly legacyEventIdsUntil?: string;
}

/** How long a producer is asked to wait while ingest is paused. */
export const PAUSED_RETRY_AFTER_SECONDS = 5;

/** How long a producer is asked to wait before resending a request some of whose events were not enqueued. */
export const PARTLY_ENQUEUED_RETRY_AFTER_SECONDS = 1;

/** Why a whole request is refused, in the contract's vocabulary: nothing of it was enqueued. */
export const IngestRefusal = {
  /** An event its subscription cannot route: no `resource_id` under `ordering: "resource"`, or a key too long. */
  invalidRequest: ErrorCode.invalidRequest,
  unknownSubscription: ErrorCode.unknownSubscription,
  payloadTooLarge: ErrorCode.payloadTooLarge,
  /** An event id its tenant and destination accepted before with another type or payload. */
  eventIdConflict: ErrorCode.eventIdConflict,
} as const;
export type IngestRefusal = (typeof IngestRefusal)[keyof typeof IngestRefusal];

/** An event's status in the answer: `failed` and `not_enqueued` are the send's own statuses, one vocabulary. */
export const EventStatus = {
  accepted: 'accepted',
  duplicate: 'duplicate',
  failed: SendStatus.failed,
  notEnqueued: SendStatus.notEnqueued,
} as const;
export type EventStatus = (typeof EventStatus)[keyof typeof EventStatus];

/** One delivery of a fan-out: its subscription, and its own status and group. */
export interface DeliveryResult {
  readonly subscription_id: string;
  readonly status: EventStatus;
  readonly message_group_id: string;
}

export interface EventResult {
  readonly event_id: string;
  readonly status: EventStatus;
  /** The event's group; null for a fan-out, whose deliveries each have their own. */
  readonly message_group_id: string | null;
  /** A fan-out's deliveries, one per subscription it went to, possibly none; absent for an event naming its subscription. */
  readonly deliveries?: readonly DeliveryResult[];
}

/** {@link EventResult} as the API document shows it. */
export const eventResultSchema = schemaOf<EventResult>()(
  z.strictObject({
    event_id: z.string(),
    status: z.enum(EventStatus),
    message_group_id: z.string().nullable(),
    deliveries: z
      .array(z.strictObject({ subscription_id: z.string(), status: z.enum(EventStatus), message_group_id: z.string() }))
      .optional()
      .meta({ description: 'Only for a fan-out (an event without `subscription_id`): one delivery per subscription of the tenant whose `event_types` take its type, fixed when it was first accepted; empty when none did.' }),
  }),
);

export const IngestOutcomeKind = {
  /** Every event was enqueued or was a duplicate. */
  accepted: 'accepted',
  /** The whole request was refused; nothing was enqueued. */
  refused: 'refused',
  /** Ingest is paused for a routing switch, or for a change of `ordering` of a subscription of the request; nothing was enqueued. */
  paused: 'paused',
  /** Some events could not be enqueued, and no event of their keys after them was: resending the whole request is safe. */
  partlyEnqueued: 'partly_enqueued',
  /**
   * SQS refused some events permanently (see `SendFailureKind`): resending the same request cannot
   * succeed. As with `partly_enqueued`, no event of their keys after them was enqueued.
   */
  enqueueRefused: 'enqueue_refused',
} as const;
export type IngestOutcomeKind = (typeof IngestOutcomeKind)[keyof typeof IngestOutcomeKind];

/** What ingest decided about a request; the handler maps it to the contract's response. */
export type IngestOutcome =
  | { readonly kind: typeof IngestOutcomeKind.accepted; readonly results: readonly EventResult[] }
  | { readonly kind: typeof IngestOutcomeKind.refused; readonly reason: IngestRefusal; readonly details: readonly ErrorDetail[] }
  | {
      readonly kind: typeof IngestOutcomeKind.paused;
      readonly retryAfterSeconds: number;
      /** Paused for these subscriptions' changes of `ordering`; absent: for a routing switch. */
      readonly orderingChanges?: readonly string[];
    }
  | { readonly kind: typeof IngestOutcomeKind.partlyEnqueued; readonly results: readonly EventResult[]; readonly retryAfterSeconds: number }
  | {
      readonly kind: typeof IngestOutcomeKind.enqueueRefused;
      /** `message_refused` when only events were refused (the sender's to fix), `configuration` when SQS refused us. */
      readonly blame: typeof SendFailureKind.messageRefused | typeof SendFailureKind.configuration;
      readonly results: readonly EventResult[];
      /** Each refused event, by its path in the request. */
      readonly details: readonly ErrorDetail[];
    };

/** One delivery of a request: an event naming its subscription, or one subscription of a fan-out. */
interface RoutedEvent {
  /** Its place among the request's deliveries. */
  readonly index: number;
  /** Its event's place in the request (error paths, results). */
  readonly requestIndex: number;
  readonly event: WebhookEvent;
  /** For a fan-out's delivery: the event's id as sent (`event.event_id` is the delivery's own). */
  readonly fanOutOf?: string;
  /** For an event naming its subscription: its id as sent (`event.event_id` is its scope's, `namedEventId`). */
  readonly namedOf?: string;
  readonly orderingKey: string;
  readonly messageGroupId: string;
}

/** A delivery before routing: the event as its subscription gets it. */
interface Target {
  readonly requestIndex: number;
  readonly event: WebhookEvent;
  readonly fanOutOf?: string;
  readonly namedOf?: string;
}

function unknownSubscriptions(
  request: EventsRequest,
  subscriptions: ReadonlyMap<string, SubscriptionRouting>,
): ErrorDetail[] {
  return request.events.flatMap((event, index) => {
    // A fan-out names no subscription: it goes to those its tenant has.
    if (event.subscription_id === undefined) return [];
    const tenant = subscriptions.get(event.subscription_id)?.tenantId;
    // A subscription of another tenant is answered as unknown: ids of other tenants are not disclosed.
    if (tenant === event.tenant_id) return [];
    return [
      {
        path: `${request.pathOf(index)}.subscription_id`.replace(/^\./, ''),
        message: `no subscription "${event.subscription_id}" exists for tenant "${event.tenant_id}"`,
      },
    ];
  });
}

/**
 * The events their subscription's ordering cannot route: by resource, an event needs a
 * `resource_id`, and its key must fit DynamoDB's key limit (MAX_ORDERING_KEY_BYTES). Every
 * subscription is known here (unknown ones were refused first).
 */
function unroutable(request: EventsRequest, targets: readonly Target[], subscriptions: ReadonlyMap<string, SubscriptionRouting>): ErrorDetail[] {
  const seen = new Set<string>();
  return targets.flatMap(({ event, requestIndex }) => {
    if (subscriptions.get(event.subscription_id)?.ordering !== Ordering.resource) return [];
    const path = `${request.pathOf(requestIndex)}.resource_id`.replace(/^\./, '');
    // A fan-out's event is named once, for the first subscription that needs what it lacks.
    if (seen.has(path)) return [];
    const problem =
      event.resource_id === undefined
        ? `is required: subscription "${event.subscription_id}" orders its events by resource`
        : Buffer.byteLength(partitionKey(event, Ordering.resource), 'utf8') > MAX_ORDERING_KEY_BYTES
          ? `with the subscription id, makes an ordering key of more than ${MAX_ORDERING_KEY_BYTES} bytes (JSON-escaped UTF-8); use a shorter one`
          : undefined;
    if (problem === undefined) return [];
    seen.add(path);
    return [{ path, message: problem }];
  });
}

/** The intake of each group: one lag write per group per request, whatever the number of its events. */
function intakeByGroup(events: readonly RoutedEvent[], acceptedAt: string): GroupIntake[] {
  const groups = new Map<string, { events: number; keys: Set<string> }>();
  for (const routed of events) {
    const group = groups.get(routed.messageGroupId) ?? { events: 0, keys: new Set<string>() };
    group.events += 1;
    group.keys.add(routed.orderingKey);
    groups.set(routed.messageGroupId, group);
  }
  return [...groups].map(([messageGroupId, group]) => ({
    messageGroupId,
    events: group.events,
    orderingKeys: [...group.keys],
    acceptedAt,
  }));
}

function toQueued(routed: RoutedEvent, acceptedAt: string): QueuedEvent {
  return {
    version: 1,
    event: queuedEventFieldsOf(routed.event),
    ordering_key: routed.orderingKey,
    message_group_id: routed.messageGroupId,
    accepted_at: acceptedAt,
    ...(routed.fanOutOf === undefined ? {} : { fan_out: { event_id: routed.fanOutOf } }),
    ...(routed.namedOf === undefined ? {} : { named: { event_id: routed.namedOf } }),
  };
}

/** An event's body alone: it must fit one message, whether it travels in a pack or, redriven, alone. */
interface EncodedEvent {
  readonly routed: RoutedEvent;
  /** Its SQS body alone (`encodeQueuedEvent`), which a pack holds as it is. */
  readonly body: string;
  readonly bytes: number;
}

function oversized(request: EventsRequest, events: readonly EncodedEvent[]): ErrorDetail[] {
  return events
    .filter((encoded) => encoded.bytes > MAX_QUEUED_EVENT_BYTES)
    .map((encoded) => ({
      path: `${request.pathOf(encoded.routed.requestIndex)}.payload`.replace(/^\./, ''),
      message: `the event does not fit in one SQS message (${MAX_QUEUED_EVENT_BYTES} bytes with its envelope)`,
    }));
}

/** Bytes a pack adds to its events' bodies besides the commas between them: `{"version":2,"events":[` and `]}`. */
const PACK_ENVELOPE_BYTES = Buffer.byteLength('{"version":2,"events":[]}', 'utf8');

/** One SQS message of a request: a key's consecutive new events (see `encodeQueuedMessage`). */
interface Pack {
  readonly message: OutgoingMessage;
  /** The events' positions in the request, in order; the message's `index` is the first. */
  readonly eventIndexes: readonly number[];
}

/**
 * One message per key per request: each key's events, in order, in as few messages as fit SQS's
 * size and `maxEvents` (the backstop's receive count is set by it). A message of one event is that
 * event alone (the body of before packs).
 *
 * Each message's deduplication id is new, `<the request's unique id>-<its first event's index>`,
 * so that SQS never drops one as a repeat of another: the sequence number SQS answers is then that
 * message's own, which ingest records as the event's place in the queue. A resent event's message
 * is a copy at another place, which the consumer skips (see `isQueueCopy`).
 */
function toPacks(events: readonly EncodedEvent[], maxEvents: number, requestId: string): Pack[] {
  // `bytes`: the pack's text as a pack, even of one event (sent alone, that one is shorter).
  const byKey = new Map<string, Array<{ members: EncodedEvent[]; bytes: number }>>();
  for (const encoded of events) {
    const packs = byKey.get(encoded.routed.orderingKey) ?? [];
    const last = packs.at(-1);
    // Exact: a pack's text is its envelope, its events' own texts (the same escaping applies to
    // each), and a comma between two of them (see `encodeQueuedMessage`).
    const bytesWith = last === undefined ? 0 : last.bytes + 1 + encoded.bytes;
    if (last !== undefined && last.members.length < maxEvents && bytesWith <= MAX_QUEUED_EVENT_BYTES) {
      last.members.push(encoded);
      last.bytes = bytesWith;
    } else {
      packs.push({ members: [encoded], bytes: PACK_ENVELOPE_BYTES + encoded.bytes });
    }
    byKey.set(encoded.routed.orderingKey, packs);
  }
  return [...byKey.values()]
    .flat()
    .flatMap(({ members }): Pack[] => {
      const [first, ...rest] = members;
      if (first === undefined) return [];
      return [
        {
          eventIndexes: members.map((member) => member.routed.index),
          message: {
            index: first.routed.index,
            orderingKey: first.routed.orderingKey,
            messageGroupId: first.routed.messageGroupId,
            deduplicationId: `${requestId}-${first.routed.index}`,
            body: messageOfBodies([first.body, ...rest.map((member) => member.body)]),
          },
        },
      ];
    })
    .sort((a, b) => a.message.index - b.message.index);
}

/** Keeps the events of a message SQS took (see `IngestPorts.keepEvents`); nothing of one it did not. */
async function keepPack(pack: Pack, status: SendStatus | undefined, routed: readonly RoutedEvent[], positions: ReadonlyMap<number, string>, acceptedAt: string, ports: IngestPorts): Promise<void> {
  if (ports.keepEvents === undefined || status !== SendStatus.sent) return;
  const events = pack.eventIndexes.flatMap((index) => {
    const r = routed[index];
    return r === undefined ? [] : [{ queued: toQueued(r, acceptedAt), queuePosition: positions.get(index) }];
  });
  const [first, ...rest] = events;
  if (first === undefined) return;
  await ports.keepEvents({ events: [first, ...rest], body: pack.message.body });
}

/**
 * Accepts a validated request. Order of work: refuse the whole request when a subscription is
 * unknown; find each fan-out's subscriptions (`findFanOutLists`); plan the request's deliveries,
 * refusing it whole when one cannot be routed by its subscription's ordering or does not fit a
 * message, or when they are too many (nothing enqueued); record the new fan-outs' subscriptions
 * (`recordFanOuts`); enqueue the deliveries in each key's order; keep each enqueued
 * message's events for replays (`keepEvents`, when events are kept); then record each
 * enqueued event with its place in the queue, in one conditional write that also answers a resent
 * event id `duplicate` (no read first: a resend is rare, and its copy in the queue is skipped by
 * the consumer, since it is not at the recorded place). A crash between the two leaves an enqueued
 * event without a record, rather than a record without an event: the consumer delivers it, and a
 * resend records the copy it makes, which the consumer then skips as settled.
 */
export async function ingestEvents(
  request: EventsRequest,
  ports: IngestPorts,
  settings: IngestSettings,
): Promise<IngestOutcome> {
  if (settings.isPaused === true) return { kind: IngestOutcomeKind.paused, retryAfterSeconds: PAUSED_RETRY_AFTER_SECONDS };

  const named = [...new Set(request.events.flatMap((e) => (e.subscription_id === undefined ? [] : [e.subscription_id])))];
  const subscriptions = new Map(named.length === 0 ? [] : await ports.findSubscriptionRouting(named));
  const unknown = unknownSubscriptions(request, subscriptions);
  if (unknown.length > 0) {
    return { kind: IngestOutcomeKind.refused, reason: IngestRefusal.unknownSubscription, details: unknown };
  }
  const now = ports.now();
  const isLegacyOpen = isLegacyLookupOpen(settings, now);
  const fanOuts = await findFanOutLists(request, ports, subscriptions, isLegacyOpen);
  if ('refusal' in fanOuts) return fanOuts.refusal;
  const acceptedAt = now.toISOString();
  let planned = planDeliveries(request, fanOuts.lists, subscriptions, settings, acceptedAt);
  if ('refusal' in planned) return planned.refusal;
  const recordedBefore = await findRecordedDuplicates(request, planned.routed, ports, isLegacyOpen);
  if ('refusal' in recordedBefore) return recordedBefore.refusal;
  // A new fan-out's subscriptions are recorded only once its request is found valid, and before
  // anything of it is enqueued. Another request that recorded it first decides them: planned again.
  const recorded = await recordFanOuts(request, ports, fanOuts, subscriptions, acceptedAt);
  if ('refusal' in recorded) return recorded.refusal;
  if (recorded.isChanged) {
    planned = planDeliveries(request, recorded.lists, subscriptions, settings, acceptedAt);
    if ('refusal' in planned) return planned.refusal;
  }
  const { routed, encoded } = planned;
  // A subscription whose ordering is changing holds its events: keyed by either ordering, they
  // could be pending under both. The whole request waits, a fan-out's other deliveries with it.
  const changing = [...new Set(routed.map((r) => r.event.subscription_id))].filter((id) => isHeldForOrderingChange(subscriptions.get(id)?.orderingChange, now));
  if (changing.length > 0) return { kind: IngestOutcomeKind.paused, retryAfterSeconds: PAUSED_RETRY_AFTER_SECONDS, orderingChanges: changing };
  // An event naming its subscription has one delivery: its place in the request names it.
  const isRecordedBefore = (r: RoutedEvent): boolean => r.namedOf !== undefined && recordedBefore.duplicates.has(r.requestIndex);

  const packs = toPacks(encoded.filter((e) => !isRecordedBefore(e.routed)), settings.maxEventsPerMessage ?? MAX_EVENTS_PER_MESSAGE, ports.uniqueId());
  const report = await sendInKeyOrder(
    packs.map((pack) => pack.message),
    ports.sendBatch,
  );
  // Each event shares its message's fate, and its place: the message's, and its index in a pack.
  const sendStatuses = new Map<number, SendStatus>();
  const failures = new Map<number, SendFailure>();
  const positions = new Map<number, string>();
  for (const pack of packs) {
    const status = report.statuses.get(pack.message.index);
    const failure = report.failures.get(pack.message.index);
    const sequenceNumber = report.sequenceNumbers.get(pack.message.index);
    const isPack = pack.eventIndexes.length > 1;
    for (const [indexInMessage, index] of pack.eventIndexes.entries()) {
      if (status !== undefined) sendStatuses.set(index, status);
      if (failure !== undefined) failures.set(index, failure);
      if (sequenceNumber === undefined) continue;
      positions.set(index, queuePositionOf({ messageGroupId: pack.message.messageGroupId, sequenceNumber, ...(isPack ? { indexInMessage } : {}) }));
    }
  }
  const statuses = new Map<number, EventStatus>(routed.filter(isRecordedBefore).map((r) => [r.index, EventStatus.duplicate]));
  const counted: RoutedEvent[] = [];
  const conflicts: number[] = [];
  const record = async (r: RoutedEvent): Promise<void> => {
    const sent = sendStatuses.get(r.index);
    // Not sent: the event's status is the send's (the two share `failed` and `not_enqueued`).
    if (sent === SendStatus.failed || sent === SendStatus.notEnqueued) {
      statuses.set(r.index, sent);
      return;
    }
    const queuePosition = positions.get(r.index);
    const outcome = await ports.recordAccepted({
      eventId: r.event.event_id,
      subscriptionId: r.event.subscription_id,
      tenantId: r.event.tenant_id,
      orderingKey: r.orderingKey,
      messageGroupId: r.messageGroupId,
      acceptedAt,
      fingerprint: eventFingerprint(r.event),
      ...(queuePosition === undefined ? {} : { queuePosition }),
    });
    if (outcome === RecordOutcome.recorded) counted.push(r);
    // Another request recorded the id first, with another type or payload: this copy is not the
    // recorded message, so the consumer skips it (`isQueueCopy`).
    if (outcome === RecordOutcome.conflict) conflicts.push(r.requestIndex);
    statuses.set(r.index, outcome === RecordOutcome.alreadyRecorded ? EventStatus.duplicate : EventStatus.accepted);
  };
  // Each message's events are kept before they are recorded: a record then always names a place
  // whose events are kept (a failed keep fails the request before any record, and the resend's
  // copy is kept and recorded instead). A resend's copy of an event recorded already is kept too,
  // at its own place, which a replay skips (see `core/replay.ts`).
  const written = await Promise.allSettled(
    packs.map(async (pack) => {
      await keepPack(pack, report.statuses.get(pack.message.index), routed, positions, acceptedAt, ports);
      await Promise.all(pack.eventIndexes.map((index) => (routed[index] === undefined ? undefined : record(routed[index]))));
    }),
  );

  // Each event is counted in its group's lag through its own record, so a resend or a failure
  // can never count it twice; one write per group per request. Counted even when another
  // message's keep or record failed: the resend answers these events as duplicates.
  await Promise.all(intakeByGroup(counted, acceptedAt).map(ports.recordGroupIntake));
  const failed = written.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  // Two requests with one id and different contents at once: the one recorded second is refused,
  // though its other events were enqueued (the read before enqueueing saw neither).
  if (conflicts.length > 0) return refusedAsConflicting(request, conflicts);

  const results = resultsOf(request, routed, (r) => statuses.get(r.index) ?? EventStatus.duplicate);
  const hasFailures = [...statuses.values()].some((status) => status === EventStatus.failed || status === EventStatus.notEnqueued);
  if (!hasFailures) return { kind: IngestOutcomeKind.accepted, results };
  return toFailedOutcome(request, results, failuresByEvent(failures, routed));
}

/** Each fan-out's subscriptions by its event's place in the request, and which of them are first acceptances. */
interface FanOutLists {
  readonly lists: ReadonlyMap<number, readonly string[]>;
  /** The places of the fan-outs no request recorded yet: their lists are this request's to record. */
  readonly unrecorded: ReadonlySet<number>;
}

const CONFLICTING_EVENT_ID = 'was accepted before for this tenant and destination with another type or payload; send it as it was, or give this event a new event_id';

/** Whether ids recorded before they were scoped are looked up too (see `IngestSettings.legacyEventIdsUntil`). */
function isLegacyLookupOpen(settings: IngestSettings, now: Date): boolean {
  return settings.legacyEventIdsUntil !== undefined && now.getTime() < Date.parse(settings.legacyEventIdsUntil);
}

/**
 * The subscriptions each fan-out of the request goes to: those its first acceptance recorded, or,
 * for a first acceptance, those of its tenant whose `event_types` take its type (recorded later,
 * see {@link recordFanOuts}). Their routing is added to `subscriptions`. A fan-out's record is its
 * tenant's (`fanOutRecordKey`); refused whole when one was accepted with another type or payload.
 */
async function findFanOutLists(request: EventsRequest, ports: IngestPorts, subscriptions: Map<string, SubscriptionRouting>, isLegacyOpen: boolean): Promise<FanOutLists | { readonly refusal: IngestOutcome }> {
  const fanOuts = request.events.flatMap((event, index) => (event.subscription_id === undefined ? [{ event, index }] : []));
  if (fanOuts.length === 0) return { lists: new Map(), unrecorded: new Set() };
  const keys = fanOuts.flatMap(({ event }) => [fanOutRecordKey(event.event_id, event.tenant_id), ...(isLegacyOpen ? [legacyFanOutRecordKey(event.event_id)] : [])]);
  const found = await ports.findFanOuts(keys);
  const recordOf = (event: RequestEvent): FanOutRecord | undefined => {
    const own = found.get(fanOutRecordKey(event.event_id, event.tenant_id));
    if (own !== undefined || !isLegacyOpen) return own;
    // Before records were scoped, a tenant's fan-out held its event id for every tenant.
    const legacy = found.get(legacyFanOutRecordKey(event.event_id));
    return legacy?.tenantId === event.tenant_id ? legacy : undefined;
  };
  const conflicts = fanOuts.filter(({ event }) => isConflict(recordOf(event)?.fingerprint, event)).map(({ index }) => index);
  if (conflicts.length > 0) return { refusal: refusedAsConflicting(request, conflicts) };
  const newTenants = [...new Set(fanOuts.filter(({ event }) => recordOf(event) === undefined).map(({ event }) => event.tenant_id))];
  const byTenant = newTenants.length === 0 ? new Map<string, ReadonlyMap<string, SubscriptionRouting>>() : await ports.findTenantSubscriptions(newTenants);
  for (const tenantSubscriptions of byTenant.values()) for (const [id, routing] of tenantSubscriptions) subscriptions.set(id, routing);
  const lists = new Map<number, readonly string[]>();
  const unrecorded = new Set<number>();
  for (const { event, index } of fanOuts) {
    const known = recordOf(event);
    if (known !== undefined) {
      lists.set(index, known.subscriptionIds);
      continue;
    }
    unrecorded.add(index);
    const tenantSubscriptions = byTenant.get(event.tenant_id) ?? new Map<string, SubscriptionRouting>();
    lists.set(index, [...tenantSubscriptions].filter(([, routing]) => takesEventType(routing.eventTypes, event.type)).map(([id]) => id).sort());
  }
  await readRoutingOf(lists, ports, subscriptions);
  return { lists, unrecorded };
}

/** Reads the routing of the listed subscriptions not read yet (each exists: subscriptions are never deleted). */
async function readRoutingOf(lists: ReadonlyMap<number, readonly string[]>, ports: IngestPorts, subscriptions: Map<string, SubscriptionRouting>): Promise<void> {
  const unread = [...new Set([...lists.values()].flat())].filter((id) => !subscriptions.has(id));
  if (unread.length > 0) for (const [id, routing] of await ports.findSubscriptionRouting(unread)) subscriptions.set(id, routing);
}

/** Whether a recorded fingerprint says the event is another one under the same id (a record without one is taken for the same). */
function isConflict(recorded: string | undefined, event: Pick<RequestEvent, 'type' | 'payload_json'>): boolean {
  return recorded !== undefined && recorded !== eventFingerprint(event);
}

/** The refusal of events whose id their tenant and destination accepted before with another type or payload. */
function refusedAsConflicting(request: EventsRequest, indexes: readonly number[]): IngestOutcome {
  const details = [...new Set(indexes)].sort((a, b) => a - b).map((index) => ({ path: `${request.pathOf(index)}.event_id`.replace(/^\./, ''), message: CONFLICTING_EVENT_ID }));
  return { kind: IngestOutcomeKind.refused, reason: IngestRefusal.eventIdConflict, details };
}

/**
 * Records the request's new fan-outs with their subscriptions, before anything is enqueued (a
 * request that fails after this is resent to the same ones). A fan-out another request recorded
 * first keeps its own: `isChanged` when one differs from what this request found; refused when
 * that request sent it with another type or payload.
 */
async function recordFanOuts(
  request: EventsRequest,
  ports: IngestPorts,
  fanOuts: FanOutLists,
  subscriptions: Map<string, SubscriptionRouting>,
  acceptedAt: string,
): Promise<{ readonly lists: ReadonlyMap<number, readonly string[]>; readonly isChanged: boolean } | { readonly refusal: IngestOutcome }> {
  const lists = new Map(fanOuts.lists);
  const conflicts: number[] = [];
  let isChanged = false;
  await Promise.all(
    [...fanOuts.unrecorded].map(async (index) => {
      const event = request.events[index];
      const found = fanOuts.lists.get(index) ?? [];
      if (event === undefined) return;
      const stands = await ports.recordFanOut({ eventId: event.event_id, tenantId: event.tenant_id, subscriptionIds: found, acceptedAt, fingerprint: eventFingerprint(event) });
      if (isConflict(stands.fingerprint, event)) conflicts.push(index);
      else if (stands.subscriptionIds.join('\n') !== found.join('\n')) {
        lists.set(index, stands.subscriptionIds);
        isChanged = true;
      }
    }),
  );
  if (conflicts.length > 0) return { refusal: refusedAsConflicting(request, conflicts) };
  if (isChanged) await readRoutingOf(lists, ports, subscriptions);
  return { lists, isChanged };
}

/**
 * The events naming their subscription that ingest recorded before, read before anything is
 * enqueued: refused whole when one was accepted with another type or payload; otherwise the
 * places in the request of those recorded already, which are duplicates and are not enqueued again
 * (a record is written only once its event's message was enqueued). During an upgrade's window
 * (`isLegacyOpen`) an event recorded under its producer's id alone, for the same tenant and
 * subscription, is a duplicate too: its message's id is not this event's, so a copy sent now would
 * be delivered a second time.
 */
async function findRecordedDuplicates(request: EventsRequest, routed: readonly RoutedEvent[], ports: IngestPorts, isLegacyOpen: boolean): Promise<{ readonly duplicates: ReadonlySet<number> } | { readonly refusal: IngestOutcome }> {
  const named = routed.filter((r): r is RoutedEvent & { readonly namedOf: string } => r.namedOf !== undefined);
  if (named.length === 0 || ports.findRecorded === undefined) return { duplicates: new Set() };
  const found = await ports.findRecorded(named.flatMap((r) => [r.event.event_id, ...(isLegacyOpen ? [r.namedOf] : [])]));
  const conflicts: number[] = [];
  const duplicates = new Set<number>();
  for (const r of named) {
    const legacy = isLegacyOpen ? found.get(r.namedOf) : undefined;
    const record = found.get(r.event.event_id) ?? (legacy?.tenantId === r.event.tenant_id && legacy.subscriptionId === r.event.subscription_id ? legacy : undefined);
    if (record === undefined) continue;
    if (isConflict(record.fingerprint, r.event)) conflicts.push(r.requestIndex);
    else duplicates.add(r.requestIndex);
  }
  return conflicts.length > 0 ? { refusal: refusedAsConflicting(request, conflicts) } : { duplicates };
}

/**
 * The request's deliveries, routed and encoded: one per event naming its subscription, one per
 * subscription of a fan-out, in request order. Refused past {@link MAX_DELIVERIES_PER_REQUEST},
 * when a subscription's ordering cannot route an event, or when an event does not fit a message.
 */
function planDeliveries(
  request: EventsRequest,
  fanOutLists: ReadonlyMap<number, readonly string[]>,
  subscriptions: ReadonlyMap<string, SubscriptionRouting>,
  settings: IngestSettings,
  acceptedAt: string,
): { readonly routed: readonly RoutedEvent[]; readonly encoded: readonly EncodedEvent[] } | { readonly refusal: IngestOutcome } {
  const targets: Target[] = request.events.flatMap((event, requestIndex): Target[] => {
    if (event.subscription_id !== undefined) {
      const eventId = namedEventId(event.event_id, event.tenant_id, event.subscription_id);
      return [{ requestIndex, event: { ...event, event_id: eventId, subscription_id: event.subscription_id }, namedOf: event.event_id }];
    }
    const { subscription_id: _none, ...rest } = event;
    // A subscription of another tenant never takes a tenant's event, whatever a record says.
    return (fanOutLists.get(requestIndex) ?? [])
      .filter((subscriptionId) => subscriptions.get(subscriptionId)?.tenantId === event.tenant_id)
      .map((subscriptionId) => ({ requestIndex, event: { ...rest, event_id: fanOutEventId(event.event_id, subscriptionId), subscription_id: subscriptionId }, fanOutOf: event.event_id }));
  });
  if (targets.length > MAX_DELIVERIES_PER_REQUEST) {
    const message = `makes ${targets.length} deliveries (fan-outs counted once per subscription), more than ${MAX_DELIVERIES_PER_REQUEST}; send fewer events per request`;
    return { refusal: { kind: IngestOutcomeKind.refused, reason: IngestRefusal.invalidRequest, details: [{ path: request.pathOf(0).startsWith('events') ? 'events' : '(body)', message }] } };
  }
  const invalid = unroutable(request, targets, subscriptions);
  if (invalid.length > 0) return { refusal: { kind: IngestOutcomeKind.refused, reason: IngestRefusal.invalidRequest, details: invalid } };
  // Routed after the read: the key depends on the subscription's ordering.
  const routed: RoutedEvent[] = targets.map((target, index) => {
    const orderingKey = partitionKey(target.event, subscriptions.get(target.event.subscription_id)?.ordering ?? DEFAULT_ORDERING);
    return { ...target, index, orderingKey, messageGroupId: messageGroupIdFor(orderingKey, settings.partitionCount) };
  });
  const encoded = routed.map((r): EncodedEvent => {
    const body = encodeQueuedEvent(toQueued(r, acceptedAt));
    return { routed: r, body, bytes: Buffer.byteLength(body, 'utf8') };
  });
  const tooLarge = oversized(request, encoded);
  if (tooLarge.length > 0) return { refusal: { kind: IngestOutcomeKind.refused, reason: IngestRefusal.payloadTooLarge, details: tooLarge } };
  return { routed, encoded };
}

/** How much a send failure decides a request's outcome (see `toFailedOutcome`): the most, first. */
const FAILURE_WEIGHT: Readonly<Record<SendFailureKind, number>> = { [SendFailureKind.configuration]: 2, [SendFailureKind.messageRefused]: 1, [SendFailureKind.transient]: 0 };

/** The send failures by each event's place in the request: a fan-out's deliveries share their event's, which keeps the weightiest. */
function failuresByEvent(failures: ReadonlyMap<number, SendFailure>, routed: readonly RoutedEvent[]): Map<number, SendFailure> {
  const byEvent = new Map<number, SendFailure>();
  for (const [index, failure] of failures) {
    const requestIndex = routed[index]?.requestIndex ?? index;
    const known = byEvent.get(requestIndex);
    if (known === undefined || FAILURE_WEIGHT[failure.kind] > FAILURE_WEIGHT[known.kind]) byEvent.set(requestIndex, failure);
  }
  return byEvent;
}

/**
 * What a fan-out's deliveries came to, as one status: failed or not enqueued when any was (the
 * request is then resent), duplicate when every one was, accepted otherwise (an empty one too).
 */
function fanOutStatus(statuses: readonly EventStatus[]): EventStatus {
  if (statuses.includes(EventStatus.failed)) return EventStatus.failed;
  if (statuses.includes(EventStatus.notEnqueued)) return EventStatus.notEnqueued;
  if (statuses.length > 0 && statuses.every((status) => status === EventStatus.duplicate)) return EventStatus.duplicate;
  return EventStatus.accepted;
}

/** One result per event of the request, in its order: a fan-out's with its deliveries. */
function resultsOf(request: EventsRequest, routed: readonly RoutedEvent[], statusOf: (r: RoutedEvent) => EventStatus): EventResult[] {
  // Grouped once: a request's events may have up to 2,000 deliveries between them.
  const byEvent = new Map<number, RoutedEvent[]>();
  for (const r of routed) {
    const deliveries = byEvent.get(r.requestIndex) ?? [];
    deliveries.push(r);
    byEvent.set(r.requestIndex, deliveries);
  }
  return request.events.map((event, requestIndex): EventResult => {
    const deliveries = byEvent.get(requestIndex) ?? [];
    if (event.subscription_id !== undefined) {
      const [only] = deliveries;
      return { event_id: event.event_id, status: only === undefined ? EventStatus.duplicate : statusOf(only), message_group_id: only?.messageGroupId ?? null };
    }
    const results = deliveries.map((r): DeliveryResult => ({ subscription_id: r.event.subscription_id, status: statusOf(r), message_group_id: r.messageGroupId }));
    return { event_id: event.event_id, status: fanOutStatus(results.map((result) => result.status)), message_group_id: null, deliveries: results };
  });
}

/**
 * The outcome of a request some of whose events SQS did not take. A permanent refusal decides it,
 * even beside transient ones, since resending the same request cannot succeed: our configuration
 * first (nothing the sender does helps), then the events SQS refuses. Only transient failures
 * alone make a request whose resending is safe and useful.
 */
function toFailedOutcome(request: EventsRequest, results: readonly EventResult[], failures: ReadonlyMap<number, SendFailure>): IngestOutcome {
  // `failures` by the event's place in the request: a fan-out's deliveries share their event's.
  const kinds = new Set([...failures.values()].map((failure) => failure.kind));
  const blame = kinds.has(SendFailureKind.configuration) ? SendFailureKind.configuration : kinds.has(SendFailureKind.messageRefused) ? SendFailureKind.messageRefused : undefined;
  if (blame === undefined) return { kind: IngestOutcomeKind.partlyEnqueued, results, retryAfterSeconds: PARTLY_ENQUEUED_RETRY_AFTER_SECONDS };
  const details = [...failures]
    .filter(([, failure]) => failure.kind === blame)
    .sort(([a], [b]) => a - b)
    .map(([index, failure]) => ({
      path: `${request.pathOf(index)}.event_id`.replace(/^\./, ''),
      message:
        blame === SendFailureKind.messageRefused
          ? `event ${request.events[index]?.event_id ?? ''} is refused by the queue on every retry (SQS ${failure.code}); change it before sending it again`
          : `event ${request.events[index]?.event_id ?? ''} was refused by the queue for a reason of the service's configuration`,
    }));
  return { kind: IngestOutcomeKind.enqueueRefused, blame, results, details };
}

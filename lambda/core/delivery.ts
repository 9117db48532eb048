/**
 * Delivering one event: skip it if settled, give it its sequence, count the real attempt, send it
 * signed, and decide what a failure means (docs/api.md#verifying-and-answering-a-webhook). The outcome is a value; the batch plan
 * (`consumer-batch.ts`) turns outcomes into SQS actions.
 */
import { placeOf, type DeadLetterPlace, type DeadLetterStore } from './dead-letter.js';
import { readQueuedEvent, type QueuedEvent } from './event.js';
import type { KeptEventStore } from './kept-event.js';
import type { ParkStore } from './park.js';
import { attemptLimit, decideAfterFailure, FailureDecisionKind, parseRetryAfter, streakGapSeconds, type RetryPolicy } from './retry-policy.js';
import { signingSecrets, type SigningKeys } from './secret.js';
import { MAX_PAUSE_REASON_LENGTH, type SubscriptionPause } from './subscription.js';
import { signBatch, signWebhook, type WebhookRequest } from './webhook.js';

/** The subscription fields delivery needs: its URL, its signing keys, its `batch_size` and its pause. */
export interface DeliveryTarget extends SigningKeys {
  readonly url: string;
  /** The most events of one ordering key in one POST (docs/api.md#batches); above 1, every webhook has the batch shape. */
  readonly batchSize: number;
  /** Set while the subscription is paused: nothing of it is attempted, its groups are held (see `processBatch`). */
  readonly pause?: SubscriptionPause | undefined;
  /** The groups where the subscription has a park (`core/park.ts`), each with its park's id; absent: none. */
  readonly parkedGroups?: ReadonlyMap<string, string> | undefined;
}

/** The result of one HTTP attempt, as the sender saw it. */
export const AttemptResultKind = {
  response: 'response',
  timeout: 'timeout',
  unreachable: 'unreachable',
  endpointNotAllowed: 'endpoint_not_allowed',
} as const;

export type AttemptResult =
  | { readonly kind: typeof AttemptResultKind.response; readonly statusCode: number; readonly retryAfter?: string }
  | { readonly kind: typeof AttemptResultKind.timeout; readonly afterMs: number }
  | { readonly kind: typeof AttemptResultKind.unreachable; readonly message: string }
  | { readonly kind: typeof AttemptResultKind.endpointNotAllowed; readonly address: string };

/**
 * The most bytes of a response body an attempt reads: 64 KiB. An attempt is judged by its status
 * line and `Retry-After` alone, so the body is read only to let a kept-alive connection serve
 * again; once more than this has arrived the rest is never read and the connection is closed, so
 * that a receiver streaming megabytes costs no more than this (and the one chunk that crossed it).
 * An attempt whose body is cut, by this cap or by `DELIVERY_TIMEOUT_MS` after the status arrived,
 * is decided by its status as if the body had ended: a `200` that never ends its body is a delivery.
 */
export const RESPONSE_BODY_CAP_BYTES = 64 * 1024;

/** The one place that decides whether an attempt succeeded: any 2xx. */
export function isSuccess(result: AttemptResult): boolean {
  return result.kind === AttemptResultKind.response && result.statusCode >= 200 && result.statusCode <= 299;
}

/** A short reason for logs, the lag view and dead letters. Never the response body. */
export function describeAttempt(result: AttemptResult): string {
  switch (result.kind) {
    case AttemptResultKind.response:
      return `HTTP ${result.statusCode}`;
    case AttemptResultKind.timeout:
      return `no response within ${result.afterMs} ms`;
    case AttemptResultKind.unreachable:
      return `unreachable: ${result.message}`;
    case AttemptResultKind.endpointNotAllowed:
      return `endpoint resolved to ${result.address}, which is not a public address`;
  }
}

/**
 * What the store answers when an attempt is about to begin: attempt it, give up (a crash after the
 * last allowed attempt), or dead-letter it unattempted (an operator asked to skip this head).
 */
export const AttemptTicketKind = {
  attempt: 'attempt',
  exhausted: 'exhausted',
  skipped: 'skipped',
  /**
   * Nothing begun: the key's head came from a later message of the same group, so the key has moved
   * past this one, which was settled (a 2xx, or a give-up) before that head was begun. Its number
   * is the ticket's `previous` when that is this event.
   */
  superseded: 'superseded',
} as const;
export type AttemptTicketKind = (typeof AttemptTicketKind)[keyof typeof AttemptTicketKind];

/**
 * The store's answer to `beginAttempt`: the event's sequence number and its real attempt count so
 * far (for `attempt`, this one included).
 */
export interface AttemptTicket {
  readonly kind: AttemptTicketKind;
  readonly sequence: number;
  readonly attempts: number;
  /**
   * The key's head before this one and its number, kept on the key until the next head replaces
   * this one: undefined for a key's first head. The consumer writes that number on the event's own
   * record unless it saw the event settled, so that an event SQS's backstop moved unsettled keeps
   * its number findable (docs/api.md#sequence-numbers-and-gaps) without a write before every attempt.
   */
  readonly previous?: { readonly eventId: string; readonly sequence: number };
  /**
   * The head before `previous`, kept one head longer: the consumer begins a key's next event while
   * the delivery before it is still being recorded (see `processGroup`), so that delivery's number
   * may be on the key alone until the head after next writes it on the event's record.
   */
  readonly earlier?: { readonly eventId: string; readonly sequence: number };
  /** The later events of the key's last batch, numbered with it (see `DeliveryStore.beginBatch`). */
  readonly ahead?: readonly NumberedEvent[];
  /**
   * The attempts the head had when an automatic pause granted it a new round (see
   * `DeliveryStore.grantAttempts`): the retry policy counts the round's attempts, those after it.
   */
  readonly attemptsBefore?: number;
  /** When the key's endpoint began failing, if it is failing (see `DeliveryStore.recordFailure`). */
  readonly failingSince?: string;
  /** When the key's last failure was recorded, beside `failingSince` (see {@link liveStreak}). */
  readonly failedAt?: string;
  /** Set when the head's give-up began (see `giveUpOrPause`): it is finished as a give-up, whatever the time. */
  readonly isGivingUp?: boolean;
  /**
   * The batch's numbers before that, moved aside when a head from outside that batch began: the
   * consumer writes each on its event's record unless it saw it settled, as for `previous`.
   */
  readonly movedAhead?: readonly NumberedEvent[];
  /**
   * The webhook's `previous_sequence` (docs/api.md#sequence-numbers-and-gaps): the number of the key's last event delivered
   * before this one, 0 when none was (see {@link previousDeliveredBefore}). For a redriven dead
   * letter or a replay's copy, which keeps its number, the key's last delivered when it is sent.
   */
  readonly previousDelivered: number;
}

/**
 * The key's last give-up of a numbered event (not of a redelivery, which keeps its number), as the
 * key remembers it (`DeliveryStore.recordGivenUp`): its number and that event's own
 * `previous_sequence`.
 */
export interface GivenUpMark {
  readonly sequence: number;
  readonly previousDelivered: number;
}

/**
 * The `previous_sequence` of the key's event numbered `sequence`: the number of the key's last
 * event delivered before it, 0 when none was. A key's numbers are consecutive, and each is
 * settled (delivered or given up) before the next is sent, so the number just before was
 * delivered unless it was given up; then it is that event's own previous. The key remembers its
 * last give-up only: one before it is never asked about, since the number after it was settled
 * too. A redelivery, which keeps its number, asks with the key's next number: everything the key
 * numbered was settled before it was sent.
 *
 * Exact but for one case: an event SQS's backstop moved out of the queue after it was numbered (a
 * crash loop) is neither delivered nor given up here; the event after it names it as delivered
 * (its dead letter, made by the backstop's import, names it as missing).
 */
export function previousDeliveredBefore(sequence: number, givenUp: GivenUpMark | undefined): number {
  const before = Math.max(0, sequence - 1);
  return givenUp !== undefined && givenUp.sequence === before ? givenUp.previousDelivered : before;
}

/** An event and the sequence number its key gave it. */
export interface NumberedEvent {
  readonly eventId: string;
  readonly sequence: number;
}

/** The store's answer to `beginBatch`: each event's number, in the batch's order. */
export interface BatchTicket extends Pick<AttemptTicket, 'previous' | 'earlier' | 'movedAhead' | 'failingSince' | 'failedAt'> {
  readonly sequences: readonly number[];
  /**
   * The key's last give-up before the batch (see {@link GivenUpMark}): each event's
   * `previous_sequence` is `previousDeliveredBefore(its number, givenUp)`.
   */
  readonly givenUp?: GivenUpMark;
}

/** What the consumer writes and reads about events and ordering keys. */
export interface DeliveryStore {
  /**
   * Whether each event was already delivered or dead-lettered ({@link isSettledBy}), for many
   * events in one read: a consumer batch's, before it begins any.
   */
  readonly findSettled: (events: readonly SettledQuery[]) => Promise<SettledLookup>;
  /**
   * How far each ordering key's deliveries recorded on the key alone reach ({@link recordDelivered}),
   * for many keys in one read, strongly consistent: a consumer batch's, before it begins any, and
   * a key's when it moves a run's numbers aside (see `recordPreviousNumber`).
   */
  readonly findDelivered: (orderingKeys: readonly string[]) => Promise<DeliveredLookup>;
  /**
   * Records on the key (an item of its own beside the key's), in one write, that a run's or a
   * batch's events were delivered: the place of the last one's message and its number (see
   * {@link DeliveredThrough}). Never moves back: a place at or before the one recorded changes
   * nothing.
   */
  readonly recordDelivered: (input: { readonly orderingKey: string; readonly message: MessagePlace; readonly sequence: number }) => Promise<void>;
  /**
   * Counts a real attempt before it is made: a new head gets the key's next sequence number and
   * attempt 1; the same head again keeps its number and counts one more, up to `maxAttempts`.
   * The head it replaces stays on the key as `previous` until the next new head.
   */
  readonly beginAttempt: (input: {
    readonly orderingKey: string;
    readonly eventId: string;
    readonly maxAttempts: number;
    /**
     * Set for a redriven dead letter: a new head even if it was its key's last head (its attempts
     * start again), keeping its original sequence number when it has one. `redrivenAt` tells one
     * redrive's series of attempts from another's, by equality alone: {@link redriveMarkOf}.
     */
    readonly redrive?: { readonly redrivenAt: string; readonly sequence: number | undefined };
    /**
     * Where the event's message stands in its FIFO group, when SQS says: a message older than the
     * key's head's in the same group is answered `superseded` and begins nothing.
     */
    readonly message?: MessagePlace;
  }) => Promise<AttemptTicket>;
  /**
   * The number the key gave an event, as its item keeps it (the head, the two previous heads, or a
   * batch's or run's numbers); undefined when it keeps none for it. Counts and changes nothing.
   */
  readonly findNumber: (input: { readonly orderingKey: string; readonly eventId: string }) => Promise<number | undefined>;
  /**
   * Numbers the consecutive events of one key for one batch before it is sent (docs/api.md#batches): the
   * first becomes the key's head, no attempt counted; the others keep their numbers on the key
   * until they are settled or begun one at a time (see {@link AttemptTicket.ahead}). Undefined
   * when a batch cannot begin here (the first is the head already, after a failed or crashed
   * batch; an event was numbered before; the message is stale): begin the first alone.
   */
  readonly beginBatch: (input: {
    readonly orderingKey: string;
    readonly events: readonly {
      readonly eventId: string;
      readonly message?: MessagePlace;
    }[];
  }) => Promise<BatchTicket | undefined>;
  /**
   * Records an event's sequence on its own record: the previous head's, once a new head replaced
   * it on the key (see {@link AttemptTicket.previous}). If that event left the queue unsettled
   * (SQS's backstop, after a crash loop), its number is still known, and its dead letter names the
   * gap the receiver sees.
   */
  readonly recordSequence: (input: { readonly eventId: string; readonly sequence: number }) => Promise<void>;
  /**
   * Remembers why the head's last attempt failed, and when (`at`), with the key's failure streak
   * as the caller found it: `failingSince`, its beginning (`at` for a new streak, see
   * {@link liveStreak}). A streak lasts across heads, given up or not, until
   * {@link recordRecovered} ends it; the automatic pause measures it. `isGivingUp` marks the head
   * as being given up (`AttemptTicket.isGivingUp`), until the key's next head.
   */
  readonly recordFailure: (input: {
    readonly orderingKey: string;
    readonly eventId: string;
    readonly reason: string;
    readonly at: string;
    readonly failingSince: string;
    readonly isGivingUp?: boolean;
  }) => Promise<void>;
  /**
   * Remembers on the key that its event numbered `sequence` is being given up, with that event's
   * `previousDelivered` (see {@link GivenUpMark}), before anything else of the give-up: the key's
   * next event takes its `previous_sequence` from it. Never moves back: a mark at or after this
   * number stays.
   */
  readonly recordGivenUp: (input: { readonly orderingKey: string } & GivenUpMark) => Promise<void>;
  /** Ends the key's failure streak that began at `failingSince` (a delivery went through); one that began later stays. */
  readonly recordRecovered: (input: { readonly orderingKey: string; readonly failingSince: string }) => Promise<void>;
  /**
   * Grants the head `more` attempts beyond the `attempts` it has, instead of giving it up (an
   * automatic pause: resume then starts it on a new round, see `AttemptTicket.attemptsBefore`).
   * @returns false when `eventId` is no longer the key's head with those attempts
   */
  readonly grantAttempts: (input: { readonly orderingKey: string; readonly eventId: string; readonly attempts: number; readonly more: number }) => Promise<boolean>;
  readonly markDelivered: (input: SettledEvent) => Promise<SettleResult>;
  /**
   * Records a delivery only if the event is not settled yet (it may have been dead-lettered since
   * it was read): undefined when it was, and then nothing is written.
   */
  readonly markDeliveredUnlessSettled: (input: SettledEvent) => Promise<SettleResult | undefined>;
  readonly markDeadLettered: (input: SettledEvent & { readonly reason: string }) => Promise<SettleResult>;
}

/** An event asked about in {@link DeliveryStore.findSettled}. */
export interface SettledQuery {
  readonly eventId: string;
  readonly redrivenAt: string | undefined;
  /** A redriven copy's `redrive.give_up`: only a give-up numbered above it settles the copy. */
  readonly giveUp?: number;
  /** A replay's copy (`redrive.replay`): an earlier delivery of its event does not settle it (see `replayId`). */
  readonly isReplay?: boolean;
  /** A replay's copy's `redrive.replay_id`: only an outcome recorded with the same one settles it (without one: an outcome after `redrivenAt`). */
  readonly replayId?: string;
}

/**
 * What tells one redrive of an event from another, compared for equality only: its time on the
 * operations function's clock, and the number of the give-up it came from. Two redrives of two
 * give-ups may carry one time (two hosts, or a clock stepped back), never one number.
 */
export function redriveMarkOf(redrive: NonNullable<QueuedEvent['redrive']>): string {
  return redrive.give_up === undefined ? redrive.redriven_at : `${redrive.redriven_at}#${redrive.give_up}`;
}

/** What {@link DeliveryStore.findSettled} is asked about a queued event. */
export function settledQueryOf(queued: QueuedEvent): SettledQuery {
  return {
    eventId: queued.event.event_id,
    redrivenAt: queued.redrive?.redriven_at,
    ...(queued.redrive?.give_up === undefined ? {} : { giveUp: queued.redrive.give_up }),
    ...(queued.redrive?.replay === true ? { isReplay: true } : {}),
    ...(queued.redrive?.replay_id === undefined ? {} : { replayId: queued.redrive.replay_id }),
  };
}

/**
 * What a group's run remembers a settled copy by ({@link RecordContext.settledEarlier}): its event
 * id, or for a replay's copy its event id and replay, since only an outcome of the same replay
 * settles that copy ({@link isSettledBy}). Two replays' copies of one event in one batch are both
 * delivered; one replay's copy sent twice, once.
 */
export function settledCopyOf(queued: QueuedEvent): string {
  const replayId = queued.redrive?.replay === true ? queued.redrive.replay_id : undefined;
  return replayId === undefined ? queued.event.event_id : `${queued.event.event_id} replay ${replayId}`;
}

/** The answers of {@link DeliveryStore.findSettled}; an event not asked about is not settled. */
export interface SettledLookup {
  (query: SettledQuery): boolean;
  /** The number on an asked event's record (given when it was settled or numbered), when it has one. */
  readonly sequenceOf: (eventId: string) => number | undefined;
  /** The place in the queue ingest recorded for an asked event (`queuePositionOf`), when it has one. */
  readonly positionOf: (eventId: string) => string | undefined;
}

/** The lookup of a batch that asked about no event. */
export const NOTHING_SETTLED: SettledLookup = Object.assign(() => false, { sequenceOf: () => undefined, positionOf: () => undefined });

/**
 * How far a key's deliveries recorded on the key reach: the place in its group of the last one's
 * message (`messagePositionOf`), and its number. A key's messages of one group are taken in the
 * queue's order, each only once every one before it in the group is gone, so a message of the key
 * at or before this place, received again, was taken before: it is not delivered again.
 */
export interface DeliveredThrough {
  readonly messageGroupId: string;
  readonly position: string;
  readonly sequence: number;
}

/** The answers of {@link DeliveryStore.findDelivered}: undefined for a key with no delivery recorded on the key. */
export type DeliveredLookup = (orderingKey: string) => DeliveredThrough | undefined;

/** The lookup of a batch that asked about no key. */
export const NOTHING_DELIVERED: DeliveredLookup = () => undefined;

/**
 * Whether a record's message was taken before: not a redriven dead letter (a message of its own,
 * outside the key's order of places), and at or before the place its key records as
 * delivered (see {@link DeliveredThrough}). Only a message SQS handed out before can be: a batch
 * reads the items of those messages' keys alone (`DeliveredLookup` answers nothing for others).
 */
export function isDeliveredBefore(record: ConsumerRecord, queued: QueuedEvent, delivered: DeliveredLookup): boolean {
  if (queued.redrive !== undefined) return false;
  const { message } = messagePlaceOf(record);
  const through = delivered(queued.ordering_key);
  if (message === undefined || through === undefined || through.messageGroupId !== message.messageGroupId) return false;
  return messagePositionOf(message) <= through.position;
}

/**
 * Whether a queued event's message is its own, not the one ingest recorded: a redriven dead letter,
 * or a parked event sent back (`queued.parked`). Either is its event's message from then on,
 * wherever it stands in its group, and never a copy of the recorded one.
 */
export function isMessageOfItsOwn(queued: QueuedEvent): boolean {
  return queued.redrive !== undefined || queued.parked !== undefined;
}

/**
 * Whether a record is the message ingest recorded for its event (not a redriven dead letter): then
 * its delivery needs no write on the event's record. Ingest counted it in its group's lag, and a
 * copy of it is told by that place ({@link isQueueCopy}), the message itself again by its key's
 * {@link DeliveredThrough}. Any other message's delivery (a copy ahead of the recorded one, one
 * received before ingest recorded its event) is written on the record, as its copies and ingest's
 * count need.
 */
export function isRecordedMessage(record: ConsumerRecord, queued: QueuedEvent, lookup: SettledLookup): boolean {
  if (isMessageOfItsOwn(queued)) return false;
  const { message } = messagePlaceOf(record);
  return message !== undefined && lookup.positionOf(queued.event.event_id) === queuePositionOf(message);
}

/**
 * Whether a record is a copy of its event to skip: a later message of the event than the one
 * ingest recorded, in the same group, or one in another group. A request sent again makes a new
 * message of each event it holds (each message's deduplication id is new, see `toPacks`), and
 * ingest's record keeps the place of the first message it recorded.
 *
 * A copy behind the recorded message is skipped whether its event is settled yet or not: the
 * recorded message came first and delivered it, or set it aside (SQS's backstop moved it, and its
 * import makes a dead letter of it); the copy would deliver it a second time, under another number.
 * A copy ahead of the recorded message is not skipped: it is the event's first message, and must
 * be delivered in its place, before the events that follow it (ingest may have recorded the event
 * only from a request sent again, after a later event of its key was recorded from the first
 * one); the recorded message then comes back settled. A redriven dead letter is its event's
 * message from its redrive on, wherever it is.
 */
export function isQueueCopy(record: ConsumerRecord, queued: QueuedEvent, lookup: SettledLookup): boolean {
  if (isMessageOfItsOwn(queued)) return false;
  const recorded = lookup.positionOf(queued.event.event_id);
  const { message } = messagePlaceOf(record);
  if (recorded === undefined || message === undefined) return false;
  const group = `${message.messageGroupId}/`;
  if (!recorded.startsWith(group)) return true;
  return recorded.slice(group.length) < messagePositionOf(message);
}

/** An event's outcome as its record holds it. */
export interface RecordedOutcome {
  readonly status: 'accepted' | 'delivered' | 'dead_lettered' | undefined;
  readonly deadLetteredAt: string | undefined;
  /** When its last delivery was recorded on it (absent on records from before it was read). */
  readonly deliveredAt?: string | undefined;
  /** The number of its last give-up (`giveUpNumberOf`); absent before the first, and on give-ups recorded before numbers. */
  readonly giveUp?: number | undefined;
  /** The replay whose copy's outcome was recorded on it last (`redrive.replay_id`), if any. */
  readonly replayId?: string | undefined;
}

/**
 * Whether an event is settled: delivered, or dead-lettered; for a redriven dead
 * letter, only a delivery or a give-up after the one it was redriven from (by their numbers, see
 * `giveUpNumberOf`: never by comparing the redrive's clock with the consumer's); for a
 * replay's copy (`isReplay`), only an outcome of a copy of the same replay (`replayId`).
 */
export function isSettledBy(outcome: RecordedOutcome | undefined, { redrivenAt, giveUp, isReplay = false, replayId }: Omit<SettledQuery, 'eventId'>): boolean {
  if (isReplay && replayId !== undefined) {
    return (outcome?.status === OutcomeKind.delivered || outcome?.status === OutcomeKind.deadLettered) && outcome.replayId === replayId;
  }
  // A replay's copy from before `replay_id`: its time decides, as it did.
  if (isReplay && redrivenAt !== undefined) {
    const at = outcome?.status === OutcomeKind.delivered ? outcome.deliveredAt : outcome?.status === OutcomeKind.deadLettered ? outcome.deadLetteredAt : undefined;
    return at !== undefined && at > redrivenAt;
  }
  if (outcome?.status === OutcomeKind.delivered) return true;
  if (outcome?.status !== OutcomeKind.deadLettered) return false;
  if (redrivenAt === undefined) return true;
  if (giveUp !== undefined && outcome.giveUp !== undefined) return outcome.giveUp > giveUp;
  // A copy or a give-up from before the numbers: its times decide, as they did.
  return outcome.deadLetteredAt !== undefined && outcome.deadLetteredAt > redrivenAt;
}

/**
 * Whether the settled event had been recorded as accepted by ingest. The event's own item decides
 * who counts it in its group's lag: ingest counts it only if it was not settled yet when recorded,
 * the consumer uncounts it only if it was recorded when settled, so it is counted once or not at all.
 */
export interface SettleResult {
  readonly wasAccepted: boolean;
}

export interface SettledEvent {
  readonly queued: QueuedEvent;
  /** Unknown only for an event SQS's backstop moved before it had one. */
  readonly sequence: number | undefined;
  readonly attempts: number;
  readonly at: string;
}

/** A record the consumer cannot read: no event, so no dead letter; kept in the backstop queue as received. */
export interface UnreadableRecord {
  readonly messageId: string;
  readonly messageGroupId: string;
  readonly body: string;
  readonly reason: string;
  readonly at: string;
}

export interface DeliveryPorts {
  readonly store: DeliveryStore;
  readonly findTarget: (subscriptionId: string) => Promise<DeliveryTarget | undefined>;
  readonly send: (url: string, request: WebhookRequest) => Promise<AttemptResult>;
  /** The store of dead letters: an event given up is written there whole before its message is deleted. */
  readonly deadLetters: Pick<DeadLetterStore, 'put'>;
  /** Counts a dead letter in its group's lag, once per place in the store (see `GroupStore`). */
  readonly countDeadLetter: (place: DeadLetterPlace) => Promise<void>;
  /** Sends a record that is not a queued event to the backstop dead-letter queue. */
  readonly quarantine: (record: UnreadableRecord) => Promise<void>;
  /**
   * Pauses a subscription (an automatic pause, see {@link giveUpOrPause}), keeping a pause in
   * force as it is: the pause that stands, and whether this call made it. Undefined for a
   * subscription that no longer exists.
   */
  readonly pause: (input: { readonly subscriptionId: string; readonly reason: string; readonly now: string }) => Promise<{ readonly pause: SubscriptionPause; readonly isNew: boolean } | undefined>;
  /**
   * Keeps the numbers a run or batch was given, for a replay (see `core/kept-event.ts`): a run's
   * deliveries are recorded on the key alone. Absent when no event is kept (`EVENT_RETENTION_DAYS=0`).
   */
  readonly keepNumbers?: KeptEventStore['keepNumbers'];
  /**
   * Where a paused subscription's backlog is parked, and its copies sent back are noted (see
   * `core/park.ts`). Absent: nothing is parked, and no copy is noted.
   */
  readonly parks?: Pick<ParkStore, 'readState' | 'park' | 'noteReturned' | 'readParked' | 'end'>;
  /**
   * Sends a group's parked events of a subscription back into the group, one bounded step
   * (`stepUnpark`): called for events parked while their subscription is not paused. Absent: the
   * lag job sends them, every minute.
   */
  readonly sendParkedBack?: (subscriptionId: string, messageGroupId: string) => Promise<void>;
  readonly now: () => Date;
  readonly random: () => number;
}

/** The outcome of one record. */
export const OutcomeKind = {
  delivered: 'delivered',
  duplicate: 'duplicate',
  deadLettered: 'dead_lettered',
  retryLater: 'retry_later',
  /** Exhausted while its key had been failing for `AUTO_PAUSE_AFTER_SECONDS`: its subscription is paused instead. */
  paused: 'paused',
  /** Moved into the store with its subscription's parked backlog (`core/park.ts`), or a copy of one parked before, dropped. */
  parked: 'parked',
} as const;

export type DeliveryOutcome =
  | {
      readonly kind: typeof OutcomeKind.delivered;
      readonly sequence: number;
      readonly attempts: number;
      readonly acceptedAt: string;
      /** Whether ingest had counted it in its group's lag (see SettleResult). */
      readonly isCounted: boolean;
    }
  /**
   * Settled before. `isCounted` and `acceptedAt` are set when this record recorded its delivery
   * late (see `AttemptTicketKind.superseded`): then it leaves its group's depth as a delivery would.
   */
  | { readonly kind: typeof OutcomeKind.duplicate; readonly acceptedAt?: string; readonly isCounted?: boolean }
  /**
   * `acceptedAt` is absent, and `isCounted` false, for a record that could not be read.
   * `failingSince` is the failure streak the give-up recorded on its key, when it recorded one.
   */
  | { readonly kind: typeof OutcomeKind.deadLettered; readonly reason: string; readonly acceptedAt: string | undefined; readonly isCounted: boolean; readonly failingSince?: string }
  | {
      readonly kind: typeof OutcomeKind.retryLater;
      readonly delaySeconds: number;
      readonly reason: string;
      readonly attempts: number;
      readonly acceptedAt: string;
      readonly eventId: string;
      readonly orderingKey: string;
      /** The head used its attempts and is held (`ON_EXHAUSTED=stall`) rather than given up. */
      readonly isHeld: boolean;
    }
  | {
      readonly kind: typeof OutcomeKind.paused;
      /** Why the head's last attempt failed, as a dead letter would say. */
      readonly reason: string;
      readonly attempts: number;
      readonly acceptedAt: string;
      readonly eventId: string;
      readonly orderingKey: string;
      readonly subscriptionId: string;
      /** Since when the key has been failing. */
      readonly failingSince: string;
      /** The pause that stands: this one, or one in force before it (an operator's, another key's). */
      readonly pause: SubscriptionPause;
      /** Whether this record paused the subscription: only then is a notice sent. */
      readonly isNewPause: boolean;
    }
  /** Not delivered here: parked behind its subscription's backlog, sent back by resume. */
  | { readonly kind: typeof OutcomeKind.parked };

/** The SQS record fields delivery reads. */
export interface ConsumerRecord {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly messageGroupId: string;
  /** SQS's ApproximateReceiveCount: every receive counts, processed or not. */
  readonly receiveCount: number;
  /** SQS FIFO's SequenceNumber: grows with every message of a group. Absent when SQS gave none. */
  readonly sequenceNumber?: string;
  /** Set when the SQS record itself was not readable: it is dead-lettered at once. */
  readonly problem?: string;
  /** Set for an event of a pack (see `unpackRecords`): the SQS message that holds it, and its place there. */
  readonly pack?: { readonly messageId: string; readonly index: number };
}

/**
 * Where a record's event stands in its FIFO group, when SQS says: its message's sequence number,
 * and for an event of a pack its place in that message (the pack's events share the number).
 */
export interface MessagePlace {
  readonly messageGroupId: string;
  readonly sequenceNumber: string;
  readonly indexInMessage?: number;
}

/**
 * A {@link MessagePlace} as a fixed-width string: the SQS FIFO SequenceNumber, so that DynamoDB's string order is the
 * numbers' order (they grow within a message group; AWS documents up to 128 bits, 39 digits).
 * The events of a pack share their message's number: each adds its place in the message, three
 * digits (a pack holds at most 10, a request at most 100), after which it sorts before the pack's later events and, by
 * the first 40 characters, among other messages as its message does.
 */
export function messagePositionOf(place: Pick<MessagePlace, 'sequenceNumber' | 'indexInMessage'>): string {
  const position = place.sequenceNumber.padStart(40, '0');
  return place.indexInMessage === undefined ? position : `${position}${String(place.indexInMessage).padStart(3, '0')}`;
}

/**
 * A {@link MessagePlace} with its group: where ingest's record says an event's message is (see
 * `isQueueCopy`), compared for equality only.
 */
export function queuePositionOf(place: MessagePlace): string {
  return `${place.messageGroupId}/${messagePositionOf(place)}`;
}

/**
 * The {@link MessagePlace} of a record, as the store's writes take it (absent when SQS gave no
 * number). A parked event's copy stands in for the message it was parked from: its place is that
 * message's (`queued.parked.place`, see `core/park.ts`), so that its key's order of places reads
 * as if it had never left the queue (a key moved past it finds it superseded, its delivery
 * recorded through it finds it delivered before).
 */
export function messagePlaceOf(record: ConsumerRecord): { readonly message?: MessagePlace } {
  const read = readRecord(record);
  const parked = 'queued' in read ? read.queued.parked?.place : undefined;
  if (parked !== undefined && /^\d{40}(\d{3})?$/.test(parked)) {
    return { message: { messageGroupId: record.messageGroupId, sequenceNumber: parked.slice(0, 40), ...(parked.length > 40 ? { indexInMessage: Number(parked.slice(40)) } : {}) } };
  }
  if (record.sequenceNumber === undefined) return {};
  return { message: { messageGroupId: record.messageGroupId, sequenceNumber: record.sequenceNumber, ...(record.pack === undefined ? {} : { indexInMessage: record.pack.index }) } };
}

/**
 * Since when the event has been waiting, for the lag view: its acceptance, or its redrive (a
 * redriven dead letter accepted long ago must not show as a group waiting that long).
 */
export function waitingSince(queued: QueuedEvent): string {
  return queued.redrive?.redriven_at ?? queued.accepted_at;
}

/** What {@link readRecord} found for each record, so that a record's body is parsed and validated once. */
const recordReads = new WeakMap<ConsumerRecord, { readonly queued: QueuedEvent } | { readonly reason: string }>();

/**
 * Reads a record's body; the reason when it is not a queued event. A batch asks about each record
 * several times (its group, its batch or run, its settled state, its outcome): the answer is kept
 * with the record, which never changes.
 */
export function readRecord(record: ConsumerRecord): { readonly queued: QueuedEvent } | { readonly reason: string } {
  const known = recordReads.get(record);
  if (known !== undefined) return known;
  const answer = parseRecord(record);
  recordReads.set(record, answer);
  return answer;
}

function parseRecord(record: ConsumerRecord): { readonly queued: QueuedEvent } | { readonly reason: string } {
  if (record.problem !== undefined) return { reason: `malformed record: ${record.problem}` };
  const read = readQueuedEvent(record.body);
  return 'reason' in read ? { reason: `malformed record: ${read.reason}` } : read;
}

/** Gives an event up: counted in its group's lag by its place, written whole to the store of dead letters, then recorded. */
export async function giveUp(
  ports: DeliveryPorts,
  queued: QueuedEvent,
  ticket: Pick<AttemptTicket, 'sequence' | 'attempts' | 'previousDelivered'>,
  reason: string,
): Promise<Extract<DeliveryOutcome, { readonly kind: typeof OutcomeKind.deadLettered }>> {
  const at = ports.now().toISOString();
  // The key remembers the give-up first, so that the webhook of its next event says the last
  // delivered was before this one (`previous_sequence`). A redelivery keeps its number: it is no
  // number the key gives, and its give-up changes nothing of what was delivered first.
  if (!hasKeptNumber(queued)) {
    await ports.store.recordGivenUp({ orderingKey: queued.ordering_key, sequence: ticket.sequence, previousDelivered: ticket.previousDelivered });
  }
  // Counted in the lag by its place first, then written to the store, then the event's record,
  // the message last (by the batch's response): a crash in between leaves the message, which is
  // received again, finds its attempts exhausted and does it all again (the count once per place,
  // the dead letter in its place). Nothing is ever only in the queue. The count comes before the
  // store because a redrive may take the dead letter as soon as it is listed: a count written
  // after the redrive uncounted and removed it would count a dead letter nobody lists.
  await ports.countDeadLetter(placeOf({ queued, sequence: ticket.sequence }));
  await ports.deadLetters.put({ queued, sequence: ticket.sequence, attempts: ticket.attempts, reason, deadLetteredAt: at });
  const { wasAccepted } = await ports.store.markDeadLettered({ queued, sequence: ticket.sequence, attempts: ticket.attempts, at, reason });
  return { kind: OutcomeKind.deadLettered, reason, acceptedAt: waitingSince(queued), isCounted: wasAccepted };
}

/**
 * Whether a queued event keeps a number given before: a redriven dead letter or a replay's copy
 * that has one (`redrive.sequence`). Any other event takes the key's next number at its first
 * attempt (a redriven dead letter SQS's backstop moved before it had one too).
 */
export function hasKeptNumber(queued: QueuedEvent): boolean {
  return queued.redrive?.sequence !== undefined;
}

/** The attempts of the head's current round: those after an automatic pause granted it a new one. */
export function roundAttempts(ticket: Pick<AttemptTicket, 'attempts' | 'attemptsBefore'>): number {
  return ticket.attempts - (ticket.attemptsBefore ?? 0);
}

/**
 * The beginning of the key's failure streak as a ticket shows it, at `now`: undefined when the key
 * is not failing, or when its last failure is older than `streakGapSeconds` (it was not being
 * tried since, so the streak is over and the next failure begins another).
 */
export function liveStreak(ticket: Pick<AttemptTicket, 'failingSince' | 'failedAt'>, now: Date, policy: RetryPolicy): string | undefined {
  const { failingSince, failedAt } = ticket;
  if (failingSince === undefined) return undefined;
  const lastFailure = Date.parse(failedAt ?? failingSince);
  return now.getTime() - lastFailure > streakGapSeconds(policy) * 1000 ? undefined : failingSince;
}

/**
 * Notes a failure of the key's head on the key: why, when, and the key's failure streak, which
 * begins with this failure when the ticket shows none live (see {@link liveStreak}). The streak
 * written.
 */
export async function noteFailure(
  ports: DeliveryPorts,
  policy: RetryPolicy,
  input: { readonly orderingKey: string; readonly eventId: string; readonly reason: string; readonly ticket: Pick<AttemptTicket, 'failingSince' | 'failedAt'>; readonly isGivingUp?: boolean },
): Promise<string> {
  const at = ports.now();
  const failingSince = liveStreak(input.ticket, at, policy) ?? at.toISOString();
  const { orderingKey, eventId, reason, isGivingUp } = input;
  await ports.store.recordFailure({ orderingKey, eventId, reason, at: at.toISOString(), failingSince, ...(isGivingUp === true ? { isGivingUp } : {}) });
  return failingSince;
}

/** The reason an automatic pause gives: since when the key failed, and how its head's last round ended. */
export function autoPauseReason(failingSince: string, reason: string): string {
  return `auto: failing since ${failingSince}; ${reason}`.slice(0, MAX_PAUSE_REASON_LENGTH);
}

/**
 * Gives up a head that used its attempts, or pauses its subscription instead (the automatic pause)
 * when its key has been failing for `policy.autoPauseAfterSeconds`: the endpoint has refused
 * everything for that long, and giving up its events one after another would only turn its
 * backlog into dead letters. The head is granted a new round of attempts first (`grantAttempts`),
 * then the subscription is paused (a pause in force is kept as it is), and the caller holds the
 * group as for any paused subscription. Nothing is given up; a resume starts the head's new round.
 *
 * The grant comes before the pause: a crash between them leaves a head with a new round and no
 * pause, which makes that round and then pauses; the other order would leave a paused head whose
 * resume finds it exhausted and gives it up unattempted.
 */
export async function giveUpOrPause(ports: DeliveryPorts, policy: RetryPolicy, queued: QueuedEvent, ticket: AttemptTicket, reason: string): Promise<DeliveryOutcome> {
  const after = policy.autoPauseAfterSeconds;
  // A give-up begun before a crash is finished as one, whatever the time now: its dead letter may
  // be counted or stored already.
  if (after === undefined || ticket.isGivingUp === true) return giveUp(ports, queued, ticket, reason);
  const now = ports.now();
  const { ordering_key: orderingKey, event } = queued;
  const failingSince = liveStreak(ticket, now, policy);
  if (failingSince === undefined || now.getTime() - Date.parse(failingSince) < after * 1000) {
    // Marked before any step of the give-up, so that a crash in it is finished the same way; and
    // the key's failure streak begins here if it had not (its only attempt failed).
    const streak = await noteFailure(ports, policy, { orderingKey, eventId: event.event_id, reason, ticket, isGivingUp: true });
    return { ...(await giveUp(ports, queued, ticket, reason)), failingSince: streak };
  }
  const isGranted = await ports.store.grantAttempts({ orderingKey, eventId: event.event_id, attempts: ticket.attempts, more: policy.maxDeliveryAttempts });
  // Only one consumer holds a group at a time: a head that changed meanwhile is a fault.
  if (!isGranted) throw new Error(`ordering key ${orderingKey} changed while its head ${event.event_id} was being paused`);
  const paused = await ports.pause({ subscriptionId: event.subscription_id, reason: autoPauseReason(failingSince, reason), now: now.toISOString() });
  // Deleted meanwhile: nowhere to deliver it any more.
  if (paused === undefined) return giveUp(ports, queued, ticket, `subscription "${event.subscription_id}" no longer exists`);
  return {
    kind: OutcomeKind.paused,
    reason,
    attempts: ticket.attempts,
    acceptedAt: waitingSince(queued),
    eventId: event.event_id,
    orderingKey,
    subscriptionId: event.subscription_id,
    failingSince,
    pause: paused.pause,
    isNewPause: paused.isNew,
  };
}

/**
 * Ends the key's failure streak once a delivery went through, when its ticket showed one. A write
 * that fails is not a fault: the key's next delivery tries again (its ticket still shows the
 * streak), and until then the streak can only make an automatic pause come sooner.
 */
export function recordRecovery(ports: DeliveryPorts, orderingKey: string, failingSince: string | undefined): Promise<void> {
  if (failingSince === undefined) return Promise.resolve();
  return ports.store.recordRecovered({ orderingKey, failingSince }).catch(() => undefined);
}

/**
 * Writes the numbers of the key's two previous heads (and of a batch's events moved aside, see
 * `AttemptTicket.movedAhead`) on their records, unless one is this event or was seen settled (its
 * settling wrote its number). Started as soon as the attempt is begun and
 * awaited before this event is settled or handed back, never before its attempt: each number stays
 * on the key item (`previous`, then `earlier`) for two more new heads, and the next new head only
 * comes once this event's message is gone.
 *
 * A run's or batch's events are recorded delivered on the key alone (`recordDelivered`): when the
 * key moves a run's numbers aside, one read of how far its deliveries reach spares a write for each
 * of them (a key's events are settled in the order of their numbers, so one numbered at most that
 * was settled). A read that fails spares nothing: each number is then written.
 */
export async function recordPreviousNumber(
  ports: DeliveryPorts,
  orderingKey: string,
  ticket: Pick<AttemptTicket, 'previous' | 'earlier' | 'movedAhead'>,
  isThisEvent: (eventId: string) => boolean,
  isSeenSettled: (eventId: string) => boolean,
): Promise<void> {
  const heads = [ticket.previous, ticket.earlier, ...(ticket.movedAhead ?? [])].filter(
    (head): head is NumberedEvent => head !== undefined && !isThisEvent(head.eventId) && !isSeenSettled(head.eventId),
  );
  if (heads.length === 0) return;
  const delivered = ticket.movedAhead === undefined || ticket.movedAhead.length === 0 ? undefined : await ports.store.findDelivered([orderingKey]).then((lookup) => lookup(orderingKey), () => undefined);
  const unsettled = delivered === undefined ? heads : heads.filter((head) => head.sequence > delivered.sequence);
  await Promise.all(unsettled.map((head) => ports.store.recordSequence(head)));
}

/** What a group's run knows when one of its records starts. */
export interface RecordContext {
  /**
   * Copies this run delivered or dead-lettered before this record ({@link settledCopyOf}): an
   * event's id settles any copy of it but a replay's, a replay's copy's only that replay's copies.
   */
  readonly settledEarlier: ReadonlySet<string>;
  /** Events this run settled or found settled before (duplicates): their numbers are on their records. */
  readonly numberedEarlier: ReadonlySet<string>;
  /** Which events were settled when the batch started (one read for the whole batch). */
  readonly wasSettled: SettledLookup;
  /** How far each key's deliveries recorded on the key reached when the batch started (one read). */
  readonly wasDelivered: DeliveredLookup;
  /**
   * The numbers of the later records of the same key in this group that were settled when the
   * batch started. One above this event's number means it was sent and answered 2xx before that
   * one (a key's events are sent in order, the next only after the one before it succeeded or was
   * given up), and only its record is missing. A later record is not always a later event: a
   * resend of an earlier event (a request sent again after ingest failed to answer) can follow it
   * in the queue, with a lower number; it proves nothing.
   */
  readonly laterSettledNumbers?: readonly number[];
  /**
   * Set when the group's previous record was delivered and its record (which ends the key's failure
   * streak, see `recordRecovery`) may still be landing: the streak this record's ticket shows is over.
   */
  readonly isAfterDelivery?: boolean;
}

/** A record's outcome, or (for a delivery) the recording of it, still under way. */
export type RecordStep = { readonly outcome: DeliveryOutcome } | { readonly recording: Promise<DeliveryOutcome> };

/**
 * Processes one record of a group whose earlier records all succeeded. Expected outcomes are
 * values; a thrown error is a fault (DynamoDB or SQS unavailable) for the batch to handle.
 *
 * State round trips before the POST: one, the conditional write that begins the attempt (the
 * attempt must be counted before it is made, or a crash could attempt an event without bound);
 * whether the event is settled was read for the whole batch before its first record. After the
 * POST: the delivery's record (`recording`), written while the next record of the group begins
 * and is sent, and awaited before the one after it (see `processGroup`). The previous head's
 * number is written during the POST.
 */
export async function startRecord(record: ConsumerRecord, ports: DeliveryPorts, policy: RetryPolicy, context: RecordContext): Promise<RecordStep> {
  const read = readRecord(record);
  if ('reason' in read) {
    // Retrying cannot repair a malformed record: set it aside at once, as received.
    await ports.quarantine({ messageId: record.messageId, messageGroupId: record.messageGroupId, body: record.body, reason: read.reason, at: ports.now().toISOString() });
    return { outcome: { kind: OutcomeKind.deadLettered, reason: read.reason, acceptedAt: undefined, isCounted: false } };
  }
  const { queued } = read;
  const eventId = queued.event.event_id;
  if (isQueueCopy(record, queued, context.wasSettled) || isDeliveredBefore(record, queued, context.wasDelivered)) return { outcome: { kind: OutcomeKind.duplicate } };
  if (context.settledEarlier.has(settledCopyOf(queued)) || context.wasSettled(settledQueryOf(queued))) return { outcome: { kind: OutcomeKind.duplicate } };

  if (context.laterSettledNumbers !== undefined && context.laterSettledNumbers.length > 0 && queued.redrive === undefined) {
    // Its 2xx came back before a later event of its key was sent, and its record failed: record it
    // now with the number the key keeps for it, and do not send it again.
    const sequence = await ports.store.findNumber({ orderingKey: queued.ordering_key, eventId });
    if (sequence !== undefined && context.laterSettledNumbers.some((later) => later > sequence)) {
      const result = await ports.store.markDeliveredUnlessSettled({ queued, sequence, attempts: 1, at: ports.now().toISOString() });
      return { outcome: result === undefined ? { kind: OutcomeKind.duplicate } : { kind: OutcomeKind.duplicate, acceptedAt: waitingSince(queued), isCounted: result.wasAccepted } };
    }
  }
  const [ticket, target] = await Promise.all([
    ports.store.beginAttempt({
      orderingKey: queued.ordering_key,
      eventId,
      maxAttempts: attemptLimit(policy),
      ...(queued.redrive === undefined ? {} : { redrive: { redrivenAt: redriveMarkOf(queued.redrive), sequence: queued.redrive.sequence } }),
      ...messagePlaceOf(record),
    }),
    ports.findTarget(queued.event.subscription_id),
  ]);
  if (ticket.kind === AttemptTicketKind.superseded) {
    // The key moved past this message after it got a 2xx (the begin of a successor follows the
    // delivery's record): a copy held by an invocation that ran late while another delivered it.
    // Record that delivery, unless the event was settled meanwhile (its record says so already).
    const sequence = [ticket.previous, ticket.earlier, ...(ticket.ahead ?? []), ...(ticket.movedAhead ?? [])].find((head) => head?.eventId === eventId)?.sequence;
    const result = await ports.store.markDeliveredUnlessSettled({ queued, sequence, attempts: 1, at: ports.now().toISOString() });
    return { outcome: result === undefined ? { kind: OutcomeKind.duplicate } : { kind: OutcomeKind.duplicate, acceptedAt: waitingSince(queued), isCounted: result.wasAccepted } };
  }
  const numbering = recordPreviousNumber(ports, queued.ordering_key, ticket, (id) => id === eventId, (id) => context.settledEarlier.has(id) || context.numberedEarlier.has(id));
  const current: AttemptTicket = context.isAfterDelivery === true ? { ...ticket, failingSince: undefined } : ticket;
  if (target === undefined) {
    // Nowhere to send it: give up at once. The event keeps a sequence number so that the receiver
    // sees the gap; the ticket's own attempt is not made, so it is not counted.
    await numbering;
    const attempts = ticket.kind === AttemptTicketKind.attempt ? ticket.attempts - 1 : ticket.attempts;
    return { outcome: await giveUp(ports, queued, { sequence: ticket.sequence, attempts, previousDelivered: ticket.previousDelivered }, `subscription "${queued.event.subscription_id}" no longer exists`) };
  }
  if (ticket.kind === AttemptTicketKind.skipped) {
    await numbering;
    return { outcome: await giveUp(ports, queued, ticket, `skipped by an operator after ${ticket.attempts} attempt${ticket.attempts === 1 ? '' : 's'}`) };
  }
  if (ticket.kind === AttemptTicketKind.exhausted) {
    await numbering;
    return { outcome: await giveUpOrPause(ports, policy, queued, current, `${roundAttempts(ticket)} of ${policy.maxDeliveryAttempts} attempts made, the last one's answer unknown`) };
  }

  const attemptedAt = ports.now();
  const secrets = signingSecrets(target, attemptedAt);
  // A subscription that takes batches gets the batch shape every time, one event or more (docs/api.md#batches).
  const item = { queued, sequence: ticket.sequence, previousSequence: ticket.previousDelivered };
  const request = target.batchSize > 1 ? signBatch({ items: [item], secrets, attemptedAt }) : signWebhook({ ...item, secrets, attemptedAt });
  // The previous head's number is written while the receiver works on this one.
  const [result] = await Promise.all([ports.send(target.url, request), numbering]);
  if (isSuccess(result)) {
    const recording = Promise.all([
      ports.store.markDelivered({ queued, sequence: ticket.sequence, attempts: ticket.attempts, at: ports.now().toISOString() }),
      recordRecovery(ports, queued.ordering_key, current.failingSince),
    ]).then(([{ wasAccepted }]): DeliveryOutcome => ({ kind: OutcomeKind.delivered, sequence: ticket.sequence, attempts: ticket.attempts, acceptedAt: waitingSince(queued), isCounted: wasAccepted }));
    return { recording };
  }

  const reason = describeAttempt(result);
  const retryAfter = result.kind === AttemptResultKind.response ? result.retryAfter : undefined;
  const decision = decideAfterFailure(
    { attempts: roundAttempts(ticket), reason, retryAfterSeconds: parseRetryAfter(retryAfter, ports.now()) },
    policy,
    ports.random,
  );
  if (decision.kind === FailureDecisionKind.deadLetter) return { outcome: await giveUpOrPause(ports, policy, queued, current, decision.reason) };
  await noteFailure(ports, policy, { orderingKey: queued.ordering_key, eventId, reason, ticket: current });
  return {
    outcome: {
    kind: OutcomeKind.retryLater,
    delaySeconds: decision.delaySeconds,
    reason,
    attempts: ticket.attempts,
    acceptedAt: waitingSince(queued),
    eventId,
    orderingKey: queued.ordering_key,
    isHeld: roundAttempts(ticket) >= policy.maxDeliveryAttempts,
    },
  };
}

/**
 * In-memory implementations of the core's ports, for core and handler tests: no network, no SDK.
 * Each is held to the same shared contract suite (test/support/contracts) as the DynamoDB adapters
 * it stands for: test/unit/support/in-memory-ports.test.ts runs the suites here, and
 * test/integration/adapters runs them against the adapters on dynalite. A rule the suites do not
 * state is not promised to match: add it to the suite before a test relies on it.
 */
import { giveUpNumberOf, positionOf, RemoveOutcome, type DeadLetter, type DeadLetterPage, type DeadLetterStore, type StoredDeadLetter } from '../../lambda/core/dead-letter.js';
import { AttemptTicketKind, isSettledBy, messagePositionOf, settledQueryOf, previousDeliveredBefore, type AttemptTicket, type BatchTicket, type GivenUpMark, type DeliveredLookup, type DeliveredThrough, type DeliveryStore, type MessagePlace, type NumberedEvent, type SettledEvent, type SettledLookup, type SettledQuery, type SettleResult } from '../../lambda/core/delivery.js';
import { RecordOutcome, type AcceptedEventRecord, type RecordedEvent } from '../../lambda/core/ingest.js';

interface KeyState {
  previous?: { eventId: string; sequence: number };
  earlier?: { eventId: string; sequence: number };
  /** The head's message group and SQS SequenceNumber, padded as the adapter pads it. */
  headPosition?: { group: string; position: string };
  headRedrive?: string;
  lastSequence: number;
  headEventId: string;
  headSequence: number;
  headAttempts: number;
  headLastError: string | undefined;
  skipEventId?: string;
  /** A batch's later events and their numbers (as the adapter's `ahead`). */
  ahead?: Map<string, number>;
  /** The batch's numbers before that, moved aside by a head from outside it (`prev_ahead`). */
  movedAhead?: NumberedEvent[];
  /** When the key began failing (`failing_since`): kept across heads until a delivery ends it. */
  failingSince?: string;
  /** When its last failure was recorded (`failed_at`). */
  failedAt?: string;
  /** The round an automatic pause granted the head (`head_attempts_base`, `head_allowed_attempts`). */
  attemptsBefore?: number;
  allowedAttempts?: number;
  /** The head whose give-up began (`head_giving_up`). */
  givingUp?: string;
  /** The key's last give-up of a numbered event (`given_up_*`). */
  givenUp?: GivenUpMark;
}

export interface StoredEvent {
  status: 'accepted' | 'delivered' | 'dead_lettered';
  accepted?: AcceptedEventRecord;
  sequence?: number;
  attempts?: number;
  reason?: string;
  deadLetteredAt?: string;
  deliveredAt?: string;
  /** The number of its last give-up (`giveUpNumberOf`), as the adapter's `give_up`. */
  giveUp?: number;
  /** The replay whose copy's outcome was recorded last, as the adapter's `replay_id`. */
  replayId?: string;
}

/** What `isSettledBy` reads of a stored event. */
const outcomeOf = (event: StoredEvent | undefined) => (event === undefined ? undefined : { status: event.status, deadLetteredAt: event.deadLetteredAt, deliveredAt: event.deliveredAt, giveUp: event.giveUp, replayId: event.replayId });

export class InMemoryDeliveryStore implements DeliveryStore {
  readonly events = new Map<string, StoredEvent>();
  readonly keys = new Map<string, KeyState>();
  /** Each key's deliveries recorded on its item (the adapter's `delivered_*`), kept apart from its head. */
  readonly delivered = new Map<string, DeliveredThrough>();
  readonly writes: string[] = [];
  readonly reads: string[] = [];

  readonly isSettled = async (query: SettledQuery): Promise<boolean> => isSettledBy(outcomeOf(this.events.get(query.eventId)), query);

  readonly findSettled = async (queries: readonly SettledQuery[]): Promise<SettledLookup> => {
    this.reads.push(`findSettled ${queries.map((query) => query.eventId).join(' ')}`);
    const answers = new Map<string, StoredEvent | undefined>(queries.map((query) => [query.eventId, this.events.get(query.eventId)]));
    const isSettled = (query: SettledQuery): boolean => isSettledBy(outcomeOf(answers.get(query.eventId)), query);
    return Object.assign(isSettled, {
      sequenceOf: (eventId: string) => answers.get(eventId)?.sequence,
      positionOf: (eventId: string) => answers.get(eventId)?.accepted?.queuePosition,
    });
  };

  readonly findDelivered = async (orderingKeys: readonly string[]): Promise<DeliveredLookup> => {
    this.reads.push(`findDelivered ${orderingKeys.join(' ')}`);
    const answers = new Map(orderingKeys.map((key) => [key, this.delivered.get(key)]));
    return (key) => answers.get(key);
  };

  readonly recordDelivered = async (input: { orderingKey: string; message: MessagePlace; sequence: number }): Promise<void> => {
    this.writes.push(`recordDelivered ${input.orderingKey} ${input.sequence}`);
    const known = this.delivered.get(input.orderingKey);
    const position = messagePositionOf(input.message);
    if (known !== undefined && known.messageGroupId === input.message.messageGroupId && known.position >= position) return;
    this.delivered.set(input.orderingKey, { messageGroupId: input.message.messageGroupId, position, sequence: input.sequence });
  };

  readonly beginAttempt = async (input: {
    orderingKey: string;
    eventId: string;
    maxAttempts: number;
    redrive?: { redrivenAt: string; sequence: number | undefined };
    message?: MessagePlace;
  }): Promise<AttemptTicket> => {
    this.writes.push(`beginAttempt ${input.eventId}`);
    const state = this.keys.get(input.orderingKey);
    const isKeptNumber = input.redrive?.sequence !== undefined;
    const ticketOf = (kind: AttemptTicketKind): AttemptTicket => this.ticketOf(kind, input.orderingKey, isKeptNumber);
    const isNewRedrive = input.redrive !== undefined && state?.headRedrive !== input.redrive.redrivenAt;
    // As the adapter: a redrive without a number of the key's own head keeps the head's number.
    if (state !== undefined && state.headEventId === input.eventId && isNewRedrive && input.redrive?.sequence === undefined && input.redrive !== undefined) {
      state.headAttempts = 1;
      state.headRedrive = input.redrive.redrivenAt;
      state.headLastError = undefined;
      delete state.skipEventId;
      delete state.attemptsBefore;
      delete state.allowedAttempts;
      delete state.givingUp;
      return ticketOf(AttemptTicketKind.attempt);
    }
    const position = input.message === undefined ? undefined : { group: input.message.messageGroupId, position: messagePositionOf(input.message) };
    const isStale =
      position !== undefined && state?.headPosition !== undefined && state.headPosition.group === position.group && state.headPosition.position >= position.position;
    if (state !== undefined && state.headEventId !== input.eventId && isStale) return ticketOf(AttemptTicketKind.superseded);
    const aheadSequence = state?.ahead?.get(input.eventId);
    if (state !== undefined && aheadSequence !== undefined && input.redrive?.sequence === undefined && state.headEventId !== input.eventId && !isStale) {
      // As the adapter: an event its batch numbered begins alone with that number.
      const { earlier: _replaced, attemptsBefore: _before, allowedAttempts: _allowed, givingUp: _givingUp, ...kept } = state;
      const ahead = new Map(state.ahead);
      ahead.delete(input.eventId);
      this.keys.set(input.orderingKey, {
        ...kept,
        ahead,
        previous: { eventId: state.headEventId, sequence: state.headSequence },
        ...(state.previous === undefined ? {} : { earlier: state.previous }),
        headEventId: input.eventId,
        headSequence: aheadSequence,
        headAttempts: 1,
        headLastError: undefined,
        skipEventId: undefined,
        headRedrive: input.redrive?.redrivenAt,
        headPosition: position,
      });
      return ticketOf(AttemptTicketKind.attempt);
    }
    if (state === undefined || ((state.headEventId !== input.eventId || isNewRedrive) && !isStale)) {
      const kept = input.redrive?.sequence;
      const lastSequence = kept === undefined ? (state?.lastSequence ?? 0) + 1 : (state?.lastSequence ?? 0);
      const sequence = kept ?? lastSequence;
      this.keys.set(input.orderingKey, {
        movedAhead: [...(state?.ahead ?? [])].map(([eventId, numbered]) => ({ eventId, sequence: numbered })),
        ...(state === undefined ? {} : { previous: { eventId: state.headEventId, sequence: state.headSequence } }),
        ...(state?.previous === undefined ? {} : { earlier: state.previous }),
        lastSequence,
        headEventId: input.eventId,
        headSequence: sequence,
        headAttempts: 1,
        headLastError: undefined,
        ...(state?.failingSince === undefined ? {} : { failingSince: state.failingSince }),
        ...(state?.failedAt === undefined ? {} : { failedAt: state.failedAt }),
        ...(state?.givenUp === undefined ? {} : { givenUp: state.givenUp }),
        ...(input.redrive === undefined ? {} : { headRedrive: input.redrive.redrivenAt }),
        ...(position === undefined ? {} : { headPosition: position }),
      });
      return ticketOf(AttemptTicketKind.attempt);
    }
    // As the adapter: the same head counts one more only within its own redrive series.
    const isOtherSeries = input.redrive !== undefined && state.headRedrive !== input.redrive.redrivenAt;
    if (state.skipEventId === input.eventId) return ticketOf(AttemptTicketKind.skipped);
    if (isOtherSeries) return ticketOf(AttemptTicketKind.exhausted);
    if (state.headAttempts >= input.maxAttempts && state.headAttempts >= (state.allowedAttempts ?? 0)) return ticketOf(AttemptTicketKind.exhausted);
    state.headAttempts += 1;
    return ticketOf(AttemptTicketKind.attempt);
  };

  readonly beginBatch = async (input: {
    orderingKey: string;
    events: readonly { eventId: string; message?: MessagePlace }[];
  }): Promise<BatchTicket | undefined> => {
    this.writes.push(`beginBatch ${input.events.map((event) => event.eventId).join(' ')}`);
    const [first] = input.events;
    if (first === undefined || input.events.length < 2) throw new Error('a batch holds at least two events');
    const state = this.keys.get(input.orderingKey);
    const position = first.message === undefined ? undefined : { group: first.message.messageGroupId, position: messagePositionOf(first.message) };
    const isStale = position !== undefined && state?.headPosition !== undefined && state.headPosition.group === position.group && state.headPosition.position >= position.position;
    if (state?.headEventId === first.eventId || isStale || input.events.some((event) => state?.ahead?.has(event.eventId) === true)) return undefined;
    const base = (state?.lastSequence ?? 0) + 1;
    this.keys.set(input.orderingKey, {
      ...(state === undefined ? {} : { previous: { eventId: state.headEventId, sequence: state.headSequence } }),
      ...(state?.previous === undefined ? {} : { earlier: state.previous }),
      lastSequence: base + input.events.length - 1,
      headEventId: first.eventId,
      headSequence: base,
      headAttempts: 0,
      headLastError: undefined,
      ...(state?.failingSince === undefined ? {} : { failingSince: state.failingSince }),
      ...(state?.failedAt === undefined ? {} : { failedAt: state.failedAt }),
      ...(state?.givenUp === undefined ? {} : { givenUp: state.givenUp }),
      ahead: new Map(input.events.slice(1).map((event, index) => [event.eventId, base + index + 1])),
      movedAhead: [...(state?.ahead ?? [])].map(([eventId, sequence]) => ({ eventId, sequence })),
      ...(position === undefined ? {} : { headPosition: position }),
    });
    const { previous, earlier, movedAhead } = this.ticketOf(AttemptTicketKind.attempt, input.orderingKey, false);
    return {
      sequences: input.events.map((_, index) => base + index),
      ...(state?.givenUp === undefined ? {} : { givenUp: state.givenUp }),
      ...(previous === undefined ? {} : { previous }),
      ...(earlier === undefined ? {} : { earlier }),
      ...(movedAhead === undefined ? {} : { movedAhead }),
      ...(state?.failingSince === undefined ? {} : { failingSince: state.failingSince }),
      ...(state?.failedAt === undefined ? {} : { failedAt: state.failedAt }),
    };
  };

  readonly findNumber = async (input: { orderingKey: string; eventId: string }): Promise<number | undefined> => {
    this.reads.push(`findNumber ${input.eventId}`);
    const state = this.keys.get(input.orderingKey);
    if (state === undefined) return undefined;
    if (state.headEventId === input.eventId) return state.headSequence;
    const numbered = [state.previous, state.earlier, ...[...(state.ahead ?? [])].map(([eventId, sequence]) => ({ eventId, sequence })), ...(state.movedAhead ?? [])];
    return numbered.find((entry) => entry?.eventId === input.eventId)?.sequence;
  };

  /** The ticket of the key's head as it stands, with the head it replaced. */
  private readonly ticketOf = (kind: AttemptTicketKind, orderingKey: string, isKeptNumber: boolean): AttemptTicket => {
    const state = this.keys.get(orderingKey);
    if (state === undefined) throw new Error(`no head on ${orderingKey}`);
    return {
      kind,
      sequence: state.headSequence,
      attempts: state.headAttempts,
      previousDelivered: previousDeliveredBefore(isKeptNumber ? state.lastSequence + 1 : state.headSequence, state.givenUp),
      ...(state.previous === undefined ? {} : { previous: state.previous }),
      ...(state.earlier === undefined ? {} : { earlier: state.earlier }),
      ...(state.ahead === undefined || state.ahead.size === 0 ? {} : { ahead: [...state.ahead].map(([eventId, sequence]) => ({ eventId, sequence })) }),
      ...(state.movedAhead === undefined || state.movedAhead.length === 0 ? {} : { movedAhead: state.movedAhead }),
      ...(state.attemptsBefore === undefined ? {} : { attemptsBefore: state.attemptsBefore }),
      ...(state.failingSince === undefined ? {} : { failingSince: state.failingSince }),
      ...(state.failedAt === undefined ? {} : { failedAt: state.failedAt }),
      ...(state.givingUp === state.headEventId ? { isGivingUp: true } : {}),
    };
  };

  readonly requestSkip = async (input: { orderingKey: string; eventId: string }): Promise<boolean> => {
    const state = this.keys.get(input.orderingKey);
    if (state?.headEventId !== input.eventId || state.headAttempts === 0) return false;
    state.skipEventId = input.eventId;
    return true;
  };

  readonly recordSequence = async (input: { eventId: string; sequence: number }): Promise<void> => {
    this.writes.push(`recordSequence ${input.eventId}`);
    const existing = this.events.get(input.eventId);
    this.events.set(input.eventId, { ...(existing ?? { status: 'accepted' }), sequence: input.sequence });
  };

  readonly findSequence = async (eventId: string): Promise<number | undefined> => this.events.get(eventId)?.sequence;

  readonly recordFailure = async (input: { orderingKey: string; eventId: string; reason: string; at: string; failingSince: string; isGivingUp?: boolean }): Promise<void> => {
    this.writes.push(`recordFailure ${input.eventId}`);
    const state = this.keys.get(input.orderingKey);
    if (state?.headEventId !== input.eventId) return;
    state.headLastError = input.reason;
    state.failingSince = input.failingSince;
    state.failedAt = input.at;
    if (input.isGivingUp === true) state.givingUp = input.eventId;
  };

  readonly recordGivenUp = async (input: { orderingKey: string } & GivenUpMark): Promise<void> => {
    this.writes.push(`recordGivenUp ${input.orderingKey} ${input.sequence}`);
    const state = this.keys.get(input.orderingKey);
    if (state === undefined || (state.givenUp !== undefined && state.givenUp.sequence >= input.sequence)) return;
    state.givenUp = { sequence: input.sequence, previousDelivered: input.previousDelivered };
  };

  readonly recordRecovered = async (input: { orderingKey: string; failingSince: string }): Promise<void> => {
    this.writes.push(`recordRecovered ${input.orderingKey}`);
    const state = this.keys.get(input.orderingKey);
    if (state?.failingSince !== input.failingSince) return;
    delete state.failingSince;
    delete state.failedAt;
  };

  readonly grantAttempts = async (input: { orderingKey: string; eventId: string; attempts: number; more: number }): Promise<boolean> => {
    this.writes.push(`grantAttempts ${input.eventId}`);
    const state = this.keys.get(input.orderingKey);
    if (state?.headEventId !== input.eventId || state.headAttempts !== input.attempts) return false;
    state.attemptsBefore = input.attempts;
    state.allowedAttempts = input.attempts + input.more;
    return true;
  };

  readonly markDelivered = async (input: SettledEvent): Promise<SettleResult> => {
    this.writes.push(`markDelivered ${input.queued.event.event_id}`);
    return this.settle(input, { status: 'delivered', deliveredAt: input.at });
  };

  readonly markDeliveredUnlessSettled = async (input: SettledEvent): Promise<SettleResult | undefined> => {
    this.writes.push(`markDeliveredUnlessSettled ${input.queued.event.event_id}`);
    if (isSettledBy(outcomeOf(this.events.get(input.queued.event.event_id)), settledQueryOf(input.queued))) return undefined;
    return this.settle(input, { status: 'delivered', deliveredAt: input.at });
  };

  readonly markDeadLettered = async (input: SettledEvent & { reason: string }): Promise<SettleResult> => {
    this.writes.push(`markDeadLettered ${input.queued.event.event_id}`);
    // As the adapter: the give-up's number, or none for a copy redriven before the numbers.
    return this.settle(input, { status: 'dead_lettered', reason: input.reason, deadLetteredAt: input.at, giveUp: giveUpNumberOf(input.queued) });
  };

  /** As the adapter: the outcome over the record, keeping what ingest wrote and a sequence recorded before when settled without one. */
  private settle(input: SettledEvent, outcome: Pick<StoredEvent, 'status' | 'reason' | 'deadLetteredAt' | 'deliveredAt' | 'giveUp'>): SettleResult {
    const existing = this.events.get(input.queued.event.event_id);
    const replayId = input.queued.redrive?.replay === true ? input.queued.redrive.replay_id : undefined;
    this.events.set(input.queued.event.event_id, {
      ...existing,
      ...outcome,
      // As the adapter: a replay's copy's outcome names its replay.
      ...(replayId === undefined ? {} : { replayId }),
      sequence: input.sequence ?? existing?.sequence,
      attempts: input.attempts,
    });
    return { wasAccepted: existing?.accepted !== undefined };
  }

  /** As the adapter: ingest's records alone, by id. */
  readonly findRecorded = async (eventIds: readonly string[]): Promise<ReadonlyMap<string, RecordedEvent>> =>
    new Map(
      eventIds.flatMap((id): Array<[string, RecordedEvent]> => {
        const accepted = this.events.get(id)?.accepted;
        return accepted === undefined ? [] : [[id, { tenantId: accepted.tenantId, subscriptionId: accepted.subscriptionId, fingerprint: accepted.fingerprint }]];
      }),
    );

  readonly recordAccepted = async (record: AcceptedEventRecord): Promise<RecordOutcome> => {
    this.writes.push(`recordAccepted ${record.eventId}`);
    const existing = this.events.get(record.eventId);
    if (existing?.accepted !== undefined) {
      // As the adapter: another fingerprint is another event under the same id.
      if (record.fingerprint !== undefined && existing.accepted.fingerprint !== undefined && record.fingerprint !== existing.accepted.fingerprint) return RecordOutcome.conflict;
      // As the adapter: the same place in the queue is this very write, repeated.
      const isRepeat = record.queuePosition !== undefined && existing.accepted.queuePosition === record.queuePosition;
      if (!isRepeat) return RecordOutcome.alreadyRecorded;
      return existing.status === 'accepted' ? RecordOutcome.recorded : RecordOutcome.recordedSettled;
    }
    this.events.set(record.eventId, { ...(existing ?? { status: 'accepted' }), accepted: record });
    // Settled first by the consumer: not counted here. A record the consumer only numbered is still pending.
    return existing === undefined || existing.status === 'accepted' ? RecordOutcome.recorded : RecordOutcome.recordedSettled;
  };
}

/** The store of dead letters in memory, with the adapter's rules: position order, conditional removal, a count. */
export class InMemoryDeadLetterStore implements DeadLetterStore {
  /** By subscription, then position. */
  readonly letters = new Map<string, Map<string, StoredDeadLetter>>();

  readonly put = async (letter: DeadLetter): Promise<void> => {
    const subscriptionId = letter.queued.event.subscription_id;
    const position = positionOf(letter);
    const letters = this.letters.get(subscriptionId) ?? new Map<string, StoredDeadLetter>();
    letters.set(position, { ...letter, subscriptionId, position, orderingKey: letter.queued.ordering_key, messageGroupId: letter.queued.message_group_id });
    this.letters.set(subscriptionId, letters);
  };

  readonly readPage = async (input: { subscriptionId: string; after: string | undefined; limit: number }): Promise<DeadLetterPage> => {
    const sorted = [...(this.letters.get(input.subscriptionId)?.values() ?? [])]
      .filter((letter) => input.after === undefined || letter.position > input.after)
      .sort((a, b) => (a.position < b.position ? -1 : 1));
    const page = sorted.slice(0, input.limit);
    return { letters: page, nextAfter: sorted.length > input.limit ? page.at(-1)?.position : undefined };
  };

  readonly remove = async (letter: StoredDeadLetter): Promise<RemoveOutcome> => {
    const letters = this.letters.get(letter.subscriptionId);
    const held = letters?.get(letter.position);
    if (held === undefined) return RemoveOutcome.gone;
    // As the adapter: the same give-up by its time and its number.
    if (held.deadLetteredAt !== letter.deadLetteredAt || giveUpNumberOf(held.queued) !== giveUpNumberOf(letter.queued)) return RemoveOutcome.replaced;
    letters?.delete(letter.position);
    return RemoveOutcome.removed;
  };

  readonly count = async (subscriptionId: string): Promise<number> => this.letters.get(subscriptionId)?.size ?? 0;

  /** Every dead letter of a subscription, in position order. */
  all(subscriptionId: string): StoredDeadLetter[] {
    return [...(this.letters.get(subscriptionId)?.values() ?? [])].sort((a, b) => (a.position < b.position ? -1 : 1));
  }
}

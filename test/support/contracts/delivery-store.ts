/**
 * The rules of the delivery store that the core relies on, as one suite any implementation must
 * pass: the in-memory fake the unit tests use (test/unit) and the DynamoDB adapters as the consumer
 * composes them, on dynalite (test/integration/adapters). A rule broken on one side only is a
 * divergence: fix the fake, or report the adapter; never loosen the suite.
 */
import { describe, expect, it } from 'vitest';
import { messagePositionOf, previousDeliveredBefore, settledQueryOf, type AttemptTicket, type DeliveryStore, type SettledEvent, type SettledQuery } from '../../../lambda/core/delivery.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { RecordOutcome, type AcceptedEventRecord } from '../../../lambda/core/ingest.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';

/** The delivery store with what ingest, skip and the backstop import read and write on the same records. */
export type ContractDeliveryStore = DeliveryStore & {
  readonly isSettled: (query: SettledQuery) => Promise<boolean>;
  readonly findSequence: (eventId: string) => Promise<number | undefined>;
  readonly recordAccepted: (record: AcceptedEventRecord) => Promise<RecordOutcome>;
  readonly requestSkip: (input: { readonly orderingKey: string; readonly eventId: string; readonly at: string }) => Promise<boolean>;
};

const T0 = '2026-12-02T12:00:00.000Z';
const T1 = '2026-12-02T12:01:00.000Z';
const T2 = '2026-12-02T12:02:00.000Z';
const T3 = '2026-12-02T12:03:00.000Z';

let uniqueCount = 0;
/** Keys and ids unique across tests, runs and implementations: a shared table never leaks between tests. */
function uniqueId(prefix: string): string {
  uniqueCount += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${uniqueCount}`;
}

/** A fresh ordering key, and event ids on it. */
function newKey() {
  const orderingKey = uniqueId('key');
  const subscriptionId = uniqueId('sub');
  return {
    orderingKey,
    subscriptionId,
    eventId: (n: number) => `${orderingKey}-evt-${n}`,
    queued: (eventId: string): QueuedEvent => ({
      version: 1,
      event: { event_id: eventId, tenant_id: 'tenant', subscription_id: subscriptionId, type: 'order.updated', payload_json: '{"n":1}' },
      ordering_key: orderingKey,
      message_group_id: messageGroupIdFor(orderingKey, undefined),
      accepted_at: T0,
    }),
    record: (eventId: string): AcceptedEventRecord => ({
      eventId,
      subscriptionId,
      tenantId: 'tenant',
      orderingKey,
      messageGroupId: messageGroupIdFor(orderingKey, undefined),
      acceptedAt: T0,
    }),
  };
}

const MAX = 3;

/** A ticket without the previous head, which its own tests check (`previous head and recordSequence`). */
function ticketOnly({ kind, sequence, attempts }: AttemptTicket): Pick<AttemptTicket, 'kind' | 'sequence' | 'attempts'> {
  return { kind, sequence, attempts };
}

export function describeDeliveryStoreContract(name: string, makeStore: () => ContractDeliveryStore): void {
  describe(`delivery store contract: ${name}`, () => {
    const settled = (queued: QueuedEvent, at: string, sequence = 1): SettledEvent => ({ queued, sequence, attempts: 1, at });
    /** Settled as the backstop import settles an event SQS moved before it had a number. */
    const unnumbered = (queued: QueuedEvent, at: string): SettledEvent => ({ queued, sequence: undefined, attempts: 1, at });

    describe('beginAttempt', () => {
      it('gives a new head the key next sequence and attempt 1 when the key is new or has another head', async () => {
        const store = makeStore();
        const key = newKey();
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(3), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 3, attempts: 1 });
      });

      it('numbers each ordering key on its own when two keys interleave', async () => {
        const store = makeStore();
        const a = newKey();
        const b = newKey();
        await store.beginAttempt({ orderingKey: a.orderingKey, eventId: a.eventId(1), maxAttempts: MAX });
        await store.beginAttempt({ orderingKey: a.orderingKey, eventId: a.eventId(2), maxAttempts: MAX });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: b.orderingKey, eventId: b.eventId(1), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
      });

      it('counts one more attempt and keeps the number when the same head comes again', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 2 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 3 });
      });

      it('answers exhausted without counting when the head has had maxAttempts', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = () => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: 2 });
        await begin();
        expect(ticketOnly(await begin())).toEqual({ kind: 'attempt', sequence: 1, attempts: 2 });
        expect(ticketOnly(await begin())).toEqual({ kind: 'exhausted', sequence: 1, attempts: 2 });
        expect(ticketOnly(await begin())).toEqual({ kind: 'exhausted', sequence: 1, attempts: 2 });
      });

      it('answers skipped for a head an operator asked to skip, and attempts the next head normally', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        expect(await store.requestSkip({ orderingKey: key.orderingKey, eventId: key.eventId(1), at: T1 })).toBe(true);
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX }))).toEqual({ kind: 'skipped', sequence: 1, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 2 });
      });

      it('answers skipped rather than exhausted when an exhausted head was asked to be skipped', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: 1 });
        await store.requestSkip({ orderingKey: key.orderingKey, eventId: key.eventId(1), at: T1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: 1 }))).toEqual({ kind: 'skipped', sequence: 1, attempts: 1 });
      });

      it('starts a new series keeping its sequence when a dead letter with a number is redriven', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX });
        const redrive = { redrivenAt: T1, sequence: 1 };
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX, redrive }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX, redrive }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 2 });
        // The kept number is not given out again: the key's next one follows its last.
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(3), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 3, attempts: 1 });
      });

      it('restarts the attempts of the key last head when it is redriven, and again at a second redrive', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (redrive?: { redrivenAt: string; sequence: number | undefined }) =>
          store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: 2, ...(redrive === undefined ? {} : { redrive }) });
        await begin();
        await begin();
        expect(ticketOnly(await begin())).toEqual({ kind: 'exhausted', sequence: 1, attempts: 2 });
        expect(ticketOnly(await begin({ redrivenAt: T1, sequence: 1 }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
        expect(ticketOnly(await begin({ redrivenAt: T1, sequence: 1 }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 2 });
        expect(ticketOnly(await begin({ redrivenAt: T1, sequence: 1 }))).toEqual({ kind: 'exhausted', sequence: 1, attempts: 2 });
        expect(ticketOnly(await begin({ redrivenAt: T2, sequence: 1 }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
      });

      it('keeps the head’s number for a redrive without a number of the key’s own head, as a new series', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        const first = { redrivenAt: T1, sequence: undefined };
        const second = { redrivenAt: T2, sequence: undefined };
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX, redrive: first }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX, redrive: first }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 2 });
        // A second copy of its redrive (an earlier one was numbered, then given up unrecorded).
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX, redrive: second }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(3), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 3, attempts: 1 });
      });

      it('gives the key next sequence when a dead letter without a number is redriven', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        const redrive = { redrivenAt: T1, sequence: undefined };
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX, redrive }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(3), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 3, attempts: 1 });
      });

      it('gives a redriven dead letter without a number sequence 1 when its key is new', async () => {
        const store = makeStore();
        const key = newKey();
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX, redrive: { redrivenAt: T1, sequence: undefined } }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
      });

      it('counts both attempts once each when the same head is begun twice at once', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = () => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        const tickets = await Promise.all([begin(), begin()]);
        expect(tickets.map((t) => t.sequence)).toEqual([1, 1]);
        expect(tickets.map((t) => t.attempts).sort()).toEqual([1, 2]);
      });
    });

    describe('previousDelivered and recordGivenUp (the webhook\'s previous_sequence)', () => {
      const begin = (store: ContractDeliveryStore, key: ReturnType<typeof newKey>, n: number, redrive?: { redrivenAt: string; sequence: number | undefined }) =>
        store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: MAX, ...(redrive === undefined ? {} : { redrive }) });

      it('names the number before as delivered, 0 for a key\'s first, on every attempt of the head', async () => {
        const store = makeStore();
        const key = newKey();
        expect((await begin(store, key, 1)).previousDelivered).toBe(0);
        expect((await begin(store, key, 2)).previousDelivered).toBe(1);
        expect((await begin(store, key, 2)).previousDelivered).toBe(1);
      });

      it('names the given-up event\'s own previous after a give-up, through a run of give-ups, and never moves back', async () => {
        const store = makeStore();
        const key = newKey();
        await begin(store, key, 1);
        const second = await begin(store, key, 2);
        expect(second.previousDelivered).toBe(1);
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: second.sequence, previousDelivered: second.previousDelivered });
        const third = await begin(store, key, 3);
        expect(third.previousDelivered).toBe(1);
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: third.sequence, previousDelivered: third.previousDelivered });
        // An earlier give-up repeated (a crash, a late invocation) changes nothing.
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: second.sequence, previousDelivered: 99 });
        expect((await begin(store, key, 4)).previousDelivered).toBe(1);
        expect((await begin(store, key, 5)).previousDelivered).toBe(4);
      });

      it('gives a redelivery that keeps its number the key\'s last delivered, and leaves the next event\'s as it was', async () => {
        const store = makeStore();
        const key = newKey();
        await begin(store, key, 1);
        const second = await begin(store, key, 2);
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: 2, previousDelivered: second.previousDelivered });
        await begin(store, key, 3);
        expect((await begin(store, key, 2, { redrivenAt: T1, sequence: 2 })).previousDelivered).toBe(3);
        expect((await begin(store, key, 2, { redrivenAt: T1, sequence: 2 })).previousDelivered).toBe(3);
        expect((await begin(store, key, 4)).previousDelivered).toBe(3);
        // The key's last number given up, then redriven: the last delivered is the one before it.
        const fifth = await begin(store, key, 5);
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: 5, previousDelivered: fifth.previousDelivered });
        expect((await begin(store, key, 5, { redrivenAt: T2, sequence: 5 })).previousDelivered).toBe(4);
      });

      it('numbers a redelivery without a number as any first delivery', async () => {
        const store = makeStore();
        const key = newKey();
        await begin(store, key, 1);
        expect((await begin(store, key, 2, { redrivenAt: T1, sequence: undefined })).previousDelivered).toBe(1);
      });

      it('gives a batch its first event\'s previous and the key\'s last give-up, and a member begun alone its own', async () => {
        const store = makeStore();
        const key = newKey();
        const first = await begin(store, key, 1);
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: 1, previousDelivered: first.previousDelivered });
        const batch = await store.beginBatch({ orderingKey: key.orderingKey, events: [2, 3, 4].map((n) => ({ eventId: key.eventId(n) })) });
        expect(batch?.givenUp).toEqual({ sequence: 1, previousDelivered: 0 });
        expect(batch?.sequences.map((sequence) => previousDeliveredBefore(sequence, batch.givenUp))).toEqual([0, 2, 3]);
        // The batch failed; its first is given up alone; its second begins alone after it.
        await begin(store, key, 2);
        await store.recordGivenUp({ orderingKey: key.orderingKey, sequence: 2, previousDelivered: 0 });
        expect((await begin(store, key, 3)).previousDelivered).toBe(0);
        expect((await begin(store, key, 4)).previousDelivered).toBe(3);
      });
    });

    describe('failure streak (recordFailure, recordRecovered)', () => {
      it('keeps a key’s failure streak and its last failure across heads, until the streak it was seen with is ended', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (n: number) => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: MAX });
        const streakOf = ({ failingSince, failedAt }: { failingSince?: string; failedAt?: string }) => ({ failingSince, failedAt });
        expect(streakOf(await begin(1))).toEqual({ failingSince: undefined, failedAt: undefined });
        await store.recordFailure({ orderingKey: key.orderingKey, eventId: key.eventId(1), reason: 'HTTP 500', at: T1, failingSince: T1 });
        await store.recordFailure({ orderingKey: key.orderingKey, eventId: key.eventId(1), reason: 'HTTP 502', at: T2, failingSince: T1 });
        expect(streakOf(await begin(1))).toEqual({ failingSince: T1, failedAt: T2 });
        // A new head (the one before was given up) keeps the streak; so does a batch.
        expect(streakOf(await begin(2))).toEqual({ failingSince: T1, failedAt: T2 });
        const batch = await store.beginBatch({ orderingKey: key.orderingKey, events: [{ eventId: key.eventId(3) }, { eventId: key.eventId(4) }] });
        expect(streakOf(batch ?? {})).toEqual({ failingSince: T1, failedAt: T2 });
        // Ending another streak than the one there ends nothing.
        await store.recordRecovered({ orderingKey: key.orderingKey, failingSince: T2 });
        expect(streakOf(await begin(5))).toEqual({ failingSince: T1, failedAt: T2 });
        await store.recordRecovered({ orderingKey: key.orderingKey, failingSince: T1 });
        expect(streakOf(await begin(6))).toEqual({ failingSince: undefined, failedAt: undefined });
        // A new streak, as the consumer begins one after an old one lapsed.
        await store.recordFailure({ orderingKey: key.orderingKey, eventId: key.eventId(6), reason: 'HTTP 500', at: T3, failingSince: T3 });
        expect(streakOf(await begin(6))).toEqual({ failingSince: T3, failedAt: T3 });
      });

      it('marks a head as being given up until the key’s next head, and says so when it comes back exhausted', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (n: number) => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: 1 });
        expect((await begin(1)).isGivingUp).toBeUndefined();
        await store.recordFailure({ orderingKey: key.orderingKey, eventId: key.eventId(1), reason: 'HTTP 500', at: T1, failingSince: T1, isGivingUp: true });
        expect(await begin(1)).toMatchObject({ kind: 'exhausted', isGivingUp: true, failingSince: T1 });
        expect((await begin(2)).isGivingUp).toBeUndefined();
      });

      it('starts no streak from a failure of an event that is not the key head', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX });
        await store.recordFailure({ orderingKey: key.orderingKey, eventId: key.eventId(1), reason: 'HTTP 500', at: T1, failingSince: T1 });
        expect((await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX })).failingSince).toBeUndefined();
      });
    });

    describe('grantAttempts', () => {
      it('gives an exhausted head a new round of attempts, counted on from its total, and the next head none of it', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (n: number) => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: 2 });
        await begin(1);
        await begin(1);
        expect(ticketOnly(await begin(1))).toEqual({ kind: 'exhausted', sequence: 1, attempts: 2 });
        expect(await store.grantAttempts({ orderingKey: key.orderingKey, eventId: key.eventId(1), attempts: 2, more: 2 })).toBe(true);
        const third = await begin(1);
        expect({ ...ticketOnly(third), attemptsBefore: third.attemptsBefore }).toEqual({ kind: 'attempt', sequence: 1, attempts: 3, attemptsBefore: 2 });
        expect(ticketOnly(await begin(1))).toEqual({ kind: 'attempt', sequence: 1, attempts: 4 });
        expect(ticketOnly(await begin(1))).toEqual({ kind: 'exhausted', sequence: 1, attempts: 4 });
        const next = await begin(2);
        expect({ ...ticketOnly(next), attemptsBefore: next.attemptsBefore }).toEqual({ kind: 'attempt', sequence: 2, attempts: 1, attemptsBefore: undefined });
        await begin(2);
        expect(ticketOnly(await begin(2))).toEqual({ kind: 'exhausted', sequence: 2, attempts: 2 });
      });

      it('refuses when the event is not the head with those attempts any more', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        expect(await store.grantAttempts({ orderingKey: key.orderingKey, eventId: key.eventId(1), attempts: 2, more: 2 })).toBe(false);
        expect(await store.grantAttempts({ orderingKey: key.orderingKey, eventId: key.eventId(2), attempts: 1, more: 2 })).toBe(false);
        expect(await store.grantAttempts({ orderingKey: key.orderingKey, eventId: key.eventId(1), attempts: 1, more: 2 })).toBe(true);
      });
    });

    describe('requestSkip', () => {
      it('refuses when the event is not the key head, or the key was never attempted', async () => {
        const store = makeStore();
        const key = newKey();
        expect(await store.requestSkip({ orderingKey: key.orderingKey, eventId: key.eventId(1), at: T1 })).toBe(false);
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX });
        expect(await store.requestSkip({ orderingKey: key.orderingKey, eventId: key.eventId(1), at: T1 })).toBe(false);
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 2 });
      });
    });

    describe('previous head and recordSequence', () => {
      it('keeps the head a new head replaced, with its number, and keeps it while the new head is retried', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (n: number) => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: MAX });
        expect((await begin(1)).previous).toBeUndefined();
        expect((await begin(2)).previous).toEqual({ eventId: key.eventId(1), sequence: 1 });
        expect((await begin(2)).previous).toEqual({ eventId: key.eventId(1), sequence: 1 });
        expect((await begin(3)).previous).toEqual({ eventId: key.eventId(2), sequence: 2 });
      });

      it('keeps the head before the previous one too, one head longer', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (n: number) => store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: MAX });
        expect((await begin(1)).earlier).toBeUndefined();
        expect((await begin(2)).earlier).toBeUndefined();
        const third = await begin(3);
        expect([third.previous, third.earlier]).toEqual([
          { eventId: key.eventId(2), sequence: 2 },
          { eventId: key.eventId(1), sequence: 1 },
        ]);
        // A retry of the same head moves nothing.
        expect((await begin(3)).earlier).toEqual({ eventId: key.eventId(1), sequence: 1 });
        expect((await begin(4)).earlier).toEqual({ eventId: key.eventId(2), sequence: 2 });
      });

      it('keeps a redriven head’s kept number as previous once the key moves on', async () => {
        const store = makeStore();
        const key = newKey();
        for (const n of [1, 2]) await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: MAX });
        const redriven = await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX, redrive: { redrivenAt: T1, sequence: 1 } });
        expect(redriven.previous).toEqual({ eventId: key.eventId(2), sequence: 2 });
        expect((await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(3), maxAttempts: MAX })).previous).toEqual({ eventId: key.eventId(1), sequence: 1 });
      });

      it('reads back the sequence recorded on the event, and nothing for an unknown event', async () => {
        const store = makeStore();
        const key = newKey();
        expect(await store.findSequence(key.eventId(1))).toBeUndefined();
        await store.recordSequence({ eventId: key.eventId(1), sequence: 7 });
        expect(await store.findSequence(key.eventId(1))).toBe(7);
        await store.recordSequence({ eventId: key.eventId(1), sequence: 8 });
        expect(await store.findSequence(key.eventId(1))).toBe(8);
      });

      it('keeps the recorded sequence when the event is settled without one, and takes the one it is settled with', async () => {
        const store = makeStore();
        const key = newKey();
        await store.recordSequence({ eventId: key.eventId(1), sequence: 4 });
        await store.markDeadLettered({ ...unnumbered(key.queued(key.eventId(1)), T1), reason: 'backstop' });
        expect(await store.findSequence(key.eventId(1))).toBe(4);
        await store.markDelivered(settled(key.queued(key.eventId(2)), T1, 5));
        expect(await store.findSequence(key.eventId(2))).toBe(5);
      });
    });

    describe('settling', () => {
      it('answers wasAccepted only for an event ingest recorded before it was settled', async () => {
        const store = makeStore();
        const key = newKey();
        expect(await store.recordAccepted(key.record(key.eventId(1)))).toBe(RecordOutcome.recorded);
        expect(await store.markDelivered(settled(key.queued(key.eventId(1)), T1))).toEqual({ wasAccepted: true });
        expect(await store.markDelivered(settled(key.queued(key.eventId(2)), T1))).toEqual({ wasAccepted: false });
        await store.recordAccepted(key.record(key.eventId(3)));
        expect(await store.markDeadLettered({ ...settled(key.queued(key.eventId(3)), T1), reason: 'HTTP 500' })).toEqual({ wasAccepted: true });
        expect(await store.markDeadLettered({ ...settled(key.queued(key.eventId(4)), T1), reason: 'HTTP 500' })).toEqual({ wasAccepted: false });
      });

      it('keeps wasAccepted when an event is settled again', async () => {
        const store = makeStore();
        const key = newKey();
        await store.recordAccepted(key.record(key.eventId(1)));
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(1)), T1), reason: 'HTTP 500' });
        expect(await store.markDelivered(settled(key.queued(key.eventId(1)), T2))).toEqual({ wasAccepted: true });
      });
    });

    describe('findSettled and markDeliveredUnlessSettled', () => {
      it('answers for many events at once as isSettled does, redriven ones included', async () => {
        const store = makeStore();
        const key = newKey();
        await store.markDelivered(settled(key.queued(key.eventId(1)), T1));
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(2)), T2, 2), reason: 'HTTP 500' });
        await store.recordAccepted(key.record(key.eventId(3)));
        const lookup = await store.findSettled([1, 2, 3, 4].map((n) => ({ eventId: key.eventId(n), redrivenAt: undefined })));
        expect([1, 2, 3, 4].map((n) => lookup({ eventId: key.eventId(n), redrivenAt: undefined }))).toEqual([true, true, false, false]);
        expect(lookup({ eventId: key.eventId(2), redrivenAt: T1 })).toBe(true);
        expect(lookup({ eventId: key.eventId(2), redrivenAt: T3 })).toBe(false);
      });

      it('records a late delivery only over an event not settled yet', async () => {
        const store = makeStore();
        const key = newKey();
        await store.recordAccepted(key.record(key.eventId(1)));
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(2)), T1, 2), reason: 'HTTP 500' });
        expect(await store.markDeliveredUnlessSettled(settled(key.queued(key.eventId(1)), T2))).toEqual({ wasAccepted: true });
        expect(await store.markDeliveredUnlessSettled(settled(key.queued(key.eventId(1)), T3))).toBeUndefined();
        expect(await store.markDeliveredUnlessSettled(settled(key.queued(key.eventId(2)), T2, 2))).toBeUndefined();
        // Still a dead letter: a redrive after it is not settled.
        expect(await store.isSettled({ eventId: key.eventId(2), redrivenAt: T3 })).toBe(false);
        expect(await store.markDeliveredUnlessSettled(settled(key.queued(key.eventId(3)), T2, 3))).toEqual({ wasAccepted: false });
      });

      it('records a redriven copy’s late delivery over its own earlier dead-lettering, and not over a later one', async () => {
        const store = makeStore();
        const key = newKey();
        const redriven = (n: number, redrivenAt: string): QueuedEvent => ({ ...key.queued(key.eventId(n)), redrive: { redriven_at: redrivenAt } });
        await store.recordAccepted(key.record(key.eventId(1)));
        await store.markDeadLettered({ ...unnumbered(key.queued(key.eventId(1)), T0), reason: 'moved by the backstop' });
        expect(await store.markDeliveredUnlessSettled(settled(redriven(1, T1), T2, 3))).toEqual({ wasAccepted: true });
        expect(await store.findSequence(key.eventId(1))).toBe(3);
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: T1 })).toBe(true);
        // Dead-lettered again after its redrive: settled for that copy, nothing recorded over it.
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(2)), T2, 2), reason: 'HTTP 500' });
        expect(await store.markDeliveredUnlessSettled(settled(redriven(2, T1), T3, 2))).toBeUndefined();
      });
    });

    describe('a redriven copy and the give-ups of its event, on clocks that disagree', () => {
      const at = (ms: string) => `2026-12-02T12:30:00.${ms}Z`;
      const redriven = (queued: QueuedEvent, redrivenAt: string, giveUp: number): QueuedEvent => ({ ...queued, redrive: { sequence: 1, redriven_at: redrivenAt, give_up: giveUp } });

      it('keeps a copy unsettled by the give-up it was redriven from when the redrive’s clock stamped it earlier, and records its delivery', async () => {
        const store = makeStore();
        const key = newKey();
        const original = key.queued(key.eventId(1));
        await store.recordAccepted(key.record(key.eventId(1)));
        // Given up at 12:30:00.100 on the consumer's clock, redriven at 12:30:00.050 on the operations function's.
        await store.markDeadLettered({ ...settled(original, at('100')), reason: 'HTTP 500' });
        const copy = redriven(original, at('050'), 1);
        expect(await store.isSettled(settledQueryOf(copy))).toBe(false);
        const lookup = await store.findSettled([settledQueryOf(copy)]);
        expect(lookup(settledQueryOf(copy))).toBe(false);
        expect(await store.markDeliveredUnlessSettled(settled(copy, at('200')))).toEqual({ wasAccepted: true });
        expect(await store.isSettled(settledQueryOf(copy))).toBe(true);
      });

      it('settles a copy by a later give-up of its event whatever the times, and records no delivery over it', async () => {
        const store = makeStore();
        const key = newKey();
        const original = key.queued(key.eventId(1));
        await store.markDeadLettered({ ...settled(original, at('000')), reason: 'HTTP 500' });
        // Redriven on a clock ahead, given up again on one behind: the second give-up's time is the earlier.
        const first = redriven(original, at('900'), 1);
        await store.markDeadLettered({ ...settled(first, at('500')), reason: 'HTTP 500' });
        expect(await store.isSettled(settledQueryOf(first))).toBe(true);
        expect(await store.markDeliveredUnlessSettled(settled(first, at('950')))).toBeUndefined();
        const second = redriven(original, at('900'), 2);
        expect(await store.isSettled(settledQueryOf(second))).toBe(false);
        expect(await store.markDeliveredUnlessSettled(settled(second, at('950')))).toEqual({ wasAccepted: false });
      });
    });

    describe('a replay’s copy, on clocks that disagree', () => {
      const at = (ms: string) => `2026-12-02T12:30:00.${ms}Z`;
      const replayed = (queued: QueuedEvent, redrivenAt: string, replayId: string): QueuedEvent => ({ ...queued, redrive: { sequence: 1, redriven_at: redrivenAt, replay: true, replay_id: replayId, give_up: 0 } });

      it('is settled by an outcome of its own replay’s copy alone, whatever the times', async () => {
        const store = makeStore();
        const key = newKey();
        const original = key.queued(key.eventId(1));
        await store.recordAccepted(key.record(key.eventId(1)));
        // Delivered at 12:30:00.100 on the consumer's clock; replayed at 12:30:00.050 on the operations function's.
        await store.markDelivered(settled(original, at('100')));
        const copy = replayed(original, at('050'), at('040'));
        expect(await store.isSettled(settledQueryOf(copy))).toBe(false);
        expect((await store.findSettled([settledQueryOf(copy)]))(settledQueryOf(copy))).toBe(false);
        expect(await store.markDeliveredUnlessSettled(settled(copy, at('020')))).toEqual({ wasAccepted: true });
        expect(await store.isSettled(settledQueryOf(copy))).toBe(true);
        expect(await store.markDeliveredUnlessSettled(settled(copy, at('900')))).toBeUndefined();
        // Another replay's copy, stamped before everything: not settled by the first replay's outcome.
        const later = replayed(original, at('000'), at('001'));
        expect(await store.isSettled(settledQueryOf(later))).toBe(false);
        expect(await store.markDeliveredUnlessSettled(settled(later, at('010')))).toEqual({ wasAccepted: true });
      });

      it('is settled by its own give-up, and a copy of its dead letter is numbered after it', async () => {
        const store = makeStore();
        const key = newKey();
        const original = key.queued(key.eventId(1));
        await store.markDelivered(settled(original, at('100')));
        const copy = replayed(original, at('050'), at('040'));
        await store.markDeadLettered({ ...settled(copy, at('000')), reason: 'HTTP 500' });
        expect(await store.isSettled(settledQueryOf(copy))).toBe(true);
        // Its dead letter redriven (give-up 1) on any clock: not settled until delivered or given up again.
        const redriven: QueuedEvent = { ...original, redrive: { sequence: 1, redriven_at: at('001'), give_up: 1 } };
        expect(await store.isSettled(settledQueryOf(redriven))).toBe(false);
      });
    });

    describe('beginAttempt with the message’s place in its group', () => {
      it('supersedes an older message of the head’s group, and begins a newer one or one of another group', async () => {
        const store = makeStore();
        const key = newKey();
        const begin = (n: number, group: string, sequenceNumber: string) =>
          store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(n), maxAttempts: MAX, message: { messageGroupId: group, sequenceNumber } });
        expect(ticketOnly(await begin(1, 'g1', '900'))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
        expect(ticketOnly(await begin(2, 'g1', '1000'))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        const stale = await begin(1, 'g1', '900');
        expect(stale.kind).toBe('superseded');
        expect(stale.previous).toEqual({ eventId: key.eventId(1), sequence: 1 });
        // The head's own message again is a retry, not a stale copy.
        expect(ticketOnly(await begin(2, 'g1', '1000'))).toEqual({ kind: 'attempt', sequence: 2, attempts: 2 });
        expect(ticketOnly(await begin(3, 'g2', '5'))).toEqual({ kind: 'attempt', sequence: 3, attempts: 1 });
      });

      it('orders the events of one pack by their place in the message, and a later message after all of them', async () => {
        const store = makeStore();
        const key = newKey();
        // A pack's events share their message's sequence number (see `messagePositionOf`).
        const begin = (n: number, sequenceNumber: string, indexInMessage?: number) =>
          store.beginAttempt({
            orderingKey: key.orderingKey,
            eventId: key.eventId(n),
            maxAttempts: MAX,
            message: { messageGroupId: 'g1', sequenceNumber, ...(indexInMessage === undefined ? {} : { indexInMessage }) },
          });
        expect(ticketOnly(await begin(1, '900', 0))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
        expect(ticketOnly(await begin(2, '900', 1))).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        // The pack's first event again, after its second began: a stale copy.
        expect((await begin(1, '900', 0)).kind).toBe('superseded');
        expect(ticketOnly(await begin(3, '900', 10))).toEqual({ kind: 'attempt', sequence: 3, attempts: 1 });
        // A message after the pack, alone: newer than every event of the pack.
        expect(ticketOnly(await begin(4, '901'))).toEqual({ kind: 'attempt', sequence: 4, attempts: 1 });
        expect((await begin(3, '900', 10)).kind).toBe('superseded');
      });
    });

    describe('beginBatch', () => {
      const begin = (store: ContractDeliveryStore, key: ReturnType<typeof newKey>, numbers: readonly number[], sequenceNumber?: number) =>
        store.beginBatch({
          orderingKey: key.orderingKey,
          events: numbers.map((n, index) => ({
            eventId: key.eventId(n),
            ...(sequenceNumber === undefined ? {} : { message: { messageGroupId: 'g1', sequenceNumber: String(sequenceNumber + index) } }),
          })),
        });

      it('numbers every event of a batch after the key’s last number, counting no attempt', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        const ticket = await begin(store, key, [2, 3, 4]);
        expect(ticket?.sequences).toEqual([2, 3, 4]);
        expect(ticket?.previous).toEqual({ eventId: key.eventId(1), sequence: 1 });
        // The next head from outside the batch takes the number after it.
        const next = await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(5), maxAttempts: MAX });
        expect(ticketOnly(next)).toEqual({ kind: 'attempt', sequence: 5, attempts: 1 });
        expect(next.movedAhead).toEqual(expect.arrayContaining([{ eventId: key.eventId(3), sequence: 3 }, { eventId: key.eventId(4), sequence: 4 }]));
        expect(next.movedAhead).toHaveLength(2);
      });

      it('refuses a batch whose first event is the key’s head already: a failed batch goes on one event at a time', async () => {
        const store = makeStore();
        const key = newKey();
        expect((await begin(store, key, [1, 2]))?.sequences).toEqual([1, 2]);
        expect(await begin(store, key, [1, 2])).toBeUndefined();
        // Alone, the first counts its first attempt with its number; the second keeps its own.
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 1, attempts: 1 });
        expect(await begin(store, key, [2, 3])).toBeUndefined();
        const second = await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX });
        expect(ticketOnly(second)).toEqual({ kind: 'attempt', sequence: 2, attempts: 1 });
        expect(second.previous).toEqual({ eventId: key.eventId(1), sequence: 1 });
        expect(ticketOnly(await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX }))).toEqual({ kind: 'attempt', sequence: 2, attempts: 2 });
        // Batching resumes after the batch's events, with the next number.
        expect((await begin(store, key, [3, 4]))?.sequences).toEqual([3, 4]);
      });

      it('finds the number it gave an event as head, previous head or batch member, and none for another', async () => {
        const store = makeStore();
        const key = newKey();
        await begin(store, key, [1, 2, 3]);
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(4), maxAttempts: MAX });
        const find = (n: number) => store.findNumber({ orderingKey: key.orderingKey, eventId: key.eventId(n) });
        expect([await find(1), await find(2), await find(3), await find(4), await find(5)]).toEqual([1, 2, 3, 4, undefined]);
        expect(await store.findNumber({ orderingKey: newKey().orderingKey, eventId: 'never' })).toBeUndefined();
      });

      it('refuses to skip a head whose batch failed until it has been tried alone', async () => {
        const store = makeStore();
        const key = newKey();
        await begin(store, key, [1, 2]);
        expect(await store.requestSkip({ orderingKey: key.orderingKey, eventId: key.eventId(1), at: T1 })).toBe(false);
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        expect(await store.requestSkip({ orderingKey: key.orderingKey, eventId: key.eventId(1), at: T1 })).toBe(true);
      });

      it('refuses a batch whose first message is older than the head’s', async () => {
        const store = makeStore();
        const key = newKey();
        expect((await begin(store, key, [1, 2], 100))?.sequences).toEqual([1, 2]);
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(3), maxAttempts: MAX, message: { messageGroupId: 'g1', sequenceNumber: '300' } });
        expect(await begin(store, key, [5, 6], 200)).toBeUndefined();
      });

      it('supersedes a stale copy of a batch’s later event, naming its number', async () => {
        const store = makeStore();
        const key = newKey();
        await begin(store, key, [1, 2, 3], 100);
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(4), maxAttempts: MAX, message: { messageGroupId: 'g1', sequenceNumber: '400' } });
        const stale = await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(2), maxAttempts: MAX, message: { messageGroupId: 'g1', sequenceNumber: '101' } });
        expect(stale.kind).toBe('superseded');
        expect(stale.movedAhead).toEqual(expect.arrayContaining([{ eventId: key.eventId(2), sequence: 2 }]));
      });
    });

    describe('recordDelivered and findDelivered', () => {
      const place = (group: string, sequenceNumber: number, indexInMessage?: number) => ({ messageGroupId: group, sequenceNumber: String(sequenceNumber), ...(indexInMessage === undefined ? {} : { indexInMessage }) });

      it('answers nothing for a key with no delivery recorded, or never seen', async () => {
        const store = makeStore();
        const key = newKey();
        await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(1), maxAttempts: MAX });
        const lookup = await store.findDelivered([key.orderingKey, newKey().orderingKey]);
        expect(lookup(key.orderingKey)).toBeUndefined();
      });

      it('records the place and number of a key’s last delivery, per key, and never moves it back in its group', async () => {
        const store = makeStore();
        const key = newKey();
        const other = newKey();
        await store.recordDelivered({ orderingKey: key.orderingKey, message: place('g1', 20, 3), sequence: 7 });
        await store.recordDelivered({ orderingKey: key.orderingKey, message: place('g1', 20, 1), sequence: 5 });
        await store.recordDelivered({ orderingKey: key.orderingKey, message: place('g1', 9), sequence: 4 });
        await store.recordDelivered({ orderingKey: other.orderingKey, message: place('g2', 3), sequence: 1 });
        const lookup = await store.findDelivered([key.orderingKey, other.orderingKey]);
        expect(lookup(key.orderingKey)).toEqual({ messageGroupId: 'g1', position: messagePositionOf(place('g1', 20, 3)), sequence: 7 });
        expect(lookup(other.orderingKey)).toEqual({ messageGroupId: 'g2', position: messagePositionOf(place('g2', 3)), sequence: 1 });
        // A later message of the group moves it on; a message of another group (the key moved) replaces it.
        await store.recordDelivered({ orderingKey: key.orderingKey, message: place('g1', 21), sequence: 9 });
        expect((await store.findDelivered([key.orderingKey]))(key.orderingKey)?.sequence).toBe(9);
        await store.recordDelivered({ orderingKey: key.orderingKey, message: place('g3', 2), sequence: 10 });
        expect((await store.findDelivered([key.orderingKey]))(key.orderingKey)).toEqual({ messageGroupId: 'g3', position: messagePositionOf(place('g3', 2)), sequence: 10 });
      });

      it('keeps a key’s head and numbers as they were beside its recorded delivery', async () => {
        const store = makeStore();
        const key = newKey();
        const first = await store.beginBatch({ orderingKey: key.orderingKey, events: [1, 2, 3].map((n) => ({ eventId: key.eventId(n), message: place('g1', 10, n - 1) })) });
        expect(first?.sequences).toEqual([1, 2, 3]);
        await store.recordDelivered({ orderingKey: key.orderingKey, message: place('g1', 10, 2), sequence: 3 });
        expect(await store.findNumber({ orderingKey: key.orderingKey, eventId: key.eventId(2) })).toBe(2);
        const next = await store.beginBatch({ orderingKey: key.orderingKey, events: [4, 5].map((n) => ({ eventId: key.eventId(n), message: place('g1', 11, n - 4) })) });
        expect(next).toMatchObject({ sequences: [4, 5], previous: { eventId: key.eventId(1), sequence: 1 }, movedAhead: [2, 3].map((n) => ({ eventId: key.eventId(n), sequence: n })) });
        const alone = await store.beginAttempt({ orderingKey: key.orderingKey, eventId: key.eventId(6), maxAttempts: MAX, message: place('g1', 12) });
        expect(ticketOnly(alone)).toEqual({ kind: 'attempt', sequence: 6, attempts: 1 });
        expect((await store.findDelivered([key.orderingKey]))(key.orderingKey)?.sequence).toBe(3);
        expect(await store.findNumber({ orderingKey: key.orderingKey, eventId: key.eventId(5) })).toBe(5);
      });
    });

    describe('isSettled', () => {
      it('is false for an unknown, accepted or numbered event, and true once it is delivered or dead-lettered', async () => {
        const store = makeStore();
        const key = newKey();
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: undefined })).toBe(false);
        await store.recordAccepted(key.record(key.eventId(1)));
        await store.recordSequence({ eventId: key.eventId(1), sequence: 1 });
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: undefined })).toBe(false);
        await store.markDelivered(settled(key.queued(key.eventId(1)), T1));
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: undefined })).toBe(true);
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(2)), T1), reason: 'HTTP 500' });
        expect(await store.isSettled({ eventId: key.eventId(2), redrivenAt: undefined })).toBe(true);
      });

      it('does not settle a redriven copy by its own earlier dead-lettering, only by a later one or a delivery', async () => {
        const store = makeStore();
        const key = newKey();
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(1)), T1), reason: 'HTTP 500' });
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: T2 })).toBe(false);
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(1)), T3), reason: 'HTTP 500' });
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: T2 })).toBe(true);

        await store.markDeadLettered({ ...settled(key.queued(key.eventId(2)), T1), reason: 'HTTP 500' });
        await store.markDelivered(settled(key.queued(key.eventId(2)), T3));
        expect(await store.isSettled({ eventId: key.eventId(2), redrivenAt: T2 })).toBe(true);
      });

      it('settles a redriven copy that was delivered, whatever the times', async () => {
        const store = makeStore();
        const key = newKey();
        await store.markDelivered(settled(key.queued(key.eventId(1)), T0));
        expect(await store.isSettled({ eventId: key.eventId(1), redrivenAt: T2 })).toBe(true);
      });
    });

    describe('recordAccepted', () => {
      it('records a first acceptance, and answers already_recorded to a second', async () => {
        const store = makeStore();
        const key = newKey();
        expect(await store.recordAccepted(key.record(key.eventId(1)))).toBe(RecordOutcome.recorded);
        expect(await store.recordAccepted(key.record(key.eventId(1)))).toBe(RecordOutcome.alreadyRecorded);
      });

      it('answers recorded_settled when the consumer settled the event first', async () => {
        const store = makeStore();
        const key = newKey();
        await store.markDelivered(settled(key.queued(key.eventId(1)), T1));
        expect(await store.recordAccepted(key.record(key.eventId(1)))).toBe(RecordOutcome.recordedSettled);
        await store.markDeadLettered({ ...settled(key.queued(key.eventId(2)), T1), reason: 'HTTP 500' });
        expect(await store.recordAccepted(key.record(key.eventId(2)))).toBe(RecordOutcome.recordedSettled);
        expect(await store.isSettled({ eventId: key.eventId(2), redrivenAt: undefined })).toBe(true);
      });

      it('answers recorded when the consumer only numbered the event first, so that its settling uncounts it', async () => {
        const store = makeStore();
        const key = newKey();
        await store.recordSequence({ eventId: key.eventId(1), sequence: 1 });
        expect(await store.recordAccepted(key.record(key.eventId(1)))).toBe(RecordOutcome.recorded);
        expect(await store.markDelivered(settled(key.queued(key.eventId(1)), T1))).toEqual({ wasAccepted: true });
      });

      it('records exactly one of two concurrent acceptances', async () => {
        const store = makeStore();
        const key = newKey();
        const outcomes = await Promise.all([store.recordAccepted(key.record(key.eventId(1))), store.recordAccepted(key.record(key.eventId(1)))]);
        expect(outcomes.sort()).toEqual([RecordOutcome.alreadyRecorded, RecordOutcome.recorded].sort());
      });

      it('counts an event once when ingest and the consumer race: recorded exactly when the settling saw it accepted', async () => {
        const store = makeStore();
        const key = newKey();
        const [outcome, result] = await Promise.all([store.recordAccepted(key.record(key.eventId(1))), store.markDelivered(settled(key.queued(key.eventId(1)), T1))]);
        expect(outcome === RecordOutcome.recorded).toBe(result.wasAccepted);
      });

      it("keeps the first place in the queue recorded for an event, and answers the same write repeated as its own", async () => {
        const store = makeStore();
        const key = newKey();
        const at = (n: number) => ({ ...key.record(key.eventId(1)), queuePosition: `${messageGroupIdFor(key.orderingKey, undefined)}/${String(n).padStart(40, '0')}` });
        expect(await store.recordAccepted(at(1))).toBe(RecordOutcome.recorded);
        expect(await store.recordAccepted(at(1))).toBe(RecordOutcome.recorded);
        expect(await store.recordAccepted(at(2))).toBe(RecordOutcome.alreadyRecorded);
        await store.recordAccepted(key.record(key.eventId(2)));
        const lookup = await store.findSettled([key.eventId(1), key.eventId(2), key.eventId(3)].map((eventId) => ({ eventId, redrivenAt: undefined })));
        expect([key.eventId(1), key.eventId(2), key.eventId(3)].map(lookup.positionOf)).toEqual([at(1).queuePosition, undefined, undefined]);
      });
    });
  });
}

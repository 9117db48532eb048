import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { groupByMessageGroup, likelyDrainedGroups, processBatch, type TimeBudget } from '../../../lambda/core/consumer-batch.js';
import {
  AttemptResultKind,
  OutcomeKind,
  queuePositionOf,
  type AttemptResult,
  type ConsumerRecord,
  type DeliveryPorts,
  type UnreadableRecord,
} from '../../../lambda/core/delivery.js';
import { placeOf, positionOf, type DeadLetter, type DeadLetterPlace } from '../../../lambda/core/dead-letter.js';
import { toRedrivenEvent } from '../../../lambda/core/redrive.js';
import { toReplayedEvent } from '../../../lambda/core/replay.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { HeadState } from '../../../lambda/core/lag.js';
import type { SubscriptionPause } from '../../../lambda/core/subscription.js';
import { faultBackoffSeconds, type RetryPolicy } from '../../../lambda/core/retry-policy.js';
import type { WebhookRequest } from '../../../lambda/core/webhook.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

const policy: RetryPolicy = { maxDeliveryAttempts: 3, retryBaseSeconds: 5, retryMaxSeconds: 900, onExhausted: 'dead_letter', visibilityCeilingSeconds: 43_070 };
/** An invocation that always has time for another record. */
const plentyOfTime: TimeBudget = { hasTimeFor: () => true, recordMs: 20_000 };
const secret = 'whsec_' + Buffer.alloc(32, 1).toString('base64');

function queued(eventId: string, key: string): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: key, type: 'thing.happened', payload_json: JSON.stringify({ eventId }) },
    ordering_key: key,
    message_group_id: `group-${key}`,
    accepted_at: '2026-12-02T12:00:00.000Z',
  };
}

/** A record of key `key`; its message id is the event id, so assertions read naturally. */
function record(eventId: string, key: string, receiveCount = 1): ConsumerRecord {
  return { messageId: eventId, receiptHandle: `rh-${eventId}`, body: JSON.stringify(queued(eventId, key)), messageGroupId: `group-${key}`, receiveCount };
}

/** A record with its message's SQS SequenceNumber, which grows within its group. */
function positioned(eventId: string, key: string, sequenceNumber: number): ConsumerRecord {
  return { ...record(eventId, key), sequenceNumber: String(sequenceNumber) };
}

interface Sent {
  readonly eventId: string;
  readonly sequence: number;
  readonly request: WebhookRequest;
}

function harness(respond: (eventId: string, attempt: number) => AttemptResult = () => ({ kind: AttemptResultKind.response, statusCode: 204 }), now: () => Date = () => new Date()) {
  const store = new InMemoryDeliveryStore();
  const sent: Sent[] = [];
  const deadLetters: DeadLetter[] = [];
  const quarantined: UnreadableRecord[] = [];
  const faults: string[] = [];
  const counted: DeadLetterPlace[] = [];
  /** The subscriptions paused, as the store's conditional write keeps them: the first pause stands. */
  const paused = new Map<string, SubscriptionPause>();
  const ports: DeliveryPorts = {
    store,
    findTarget: async (subscriptionId) => (subscriptionId === 'gone' ? undefined : { url: `https://example.com/${subscriptionId}`, secret, batchSize: 1, pause: paused.get(subscriptionId) }),
    send: async (_url, request) => {
      const eventId = request.headers['webhook-id'] ?? '';
      const attempt = sent.filter((s) => s.eventId === eventId).length + 1;
      sent.push({ eventId, sequence: Number(request.headers['webhook-sequence']), request });
      return respond(eventId, attempt);
    },
    deadLetters: {
      put: async (deadLetter) => {
        deadLetters.push(deadLetter);
      },
    },
    countDeadLetter: async (place) => {
      counted.push(place);
    },
    quarantine: async (record) => {
      quarantined.push(record);
    },
    pause: async ({ subscriptionId, reason, now }) => {
      if (subscriptionId === 'gone') return undefined;
      const known = paused.get(subscriptionId);
      if (known !== undefined) return { pause: known, isNew: false };
      const pause = { pausedAt: now, reason };
      paused.set(subscriptionId, pause);
      return { pause, isNew: true };
    },
    now,
    random: () => 0.5,
  };
  const run = (records: ConsumerRecord[], budget: TimeBudget = plentyOfTime, runPolicy: RetryPolicy = policy) =>
    processBatch(records, ports, runPolicy, (_error, r) => faults.push(r.messageId), budget);
  return { store, sent, deadLetters, quarantined, faults, counted, paused, ports, run };
}

/** The ports with `eventId`'s first delivery record failing, after `delayMs` (a crash or a fault between its 2xx and its record). */
function failingRecordOnce(ports: DeliveryPorts, store: InMemoryDeliveryStore, eventId: string, delayMs: number): DeliveryPorts {
  let failures = 1;
  return {
    ...ports,
    store: {
      ...store,
      markDelivered: async (input) => {
        if (input.queued.event.event_id === eventId && failures > 0) {
          failures -= 1;
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          throw new Error('the record of a delivery failed');
        }
        return store.markDelivered(input);
      },
    },
  };
}

const fail500: AttemptResult = { kind: AttemptResultKind.response, statusCode: 500 };
const ok: AttemptResult = { kind: AttemptResultKind.response, statusCode: 200 };

describe('groupByMessageGroup', () => {
  it('hints that a group is drained when the batch held fewer than a full batch of it, and not the group a full batch was cut in', () => {
    const short = likelyDrainedGroups([record('a1', 'a'), record('b1', 'b'), record('a2', 'a')], 10);
    expect([short('group-a'), short('group-b')]).toEqual([true, true]);
    const full = likelyDrainedGroups([...Array.from({ length: 9 }, (_, n) => record(`a${n}`, 'a')), record('b1', 'b')], 10);
    expect([full('group-a'), full('group-b')]).toEqual([true, false]);
    const oneGroup = likelyDrainedGroups(Array.from({ length: 10 }, (_, n) => record(`a${n}`, 'a')), 10);
    expect(oneGroup('group-a')).toBe(false);
    expect(short('group-unknown')).toBe(false);
  });

  it('keeps each group in SQS order and groups in order of first appearance', () => {
    const records = [record('a1', 'a'), record('b1', 'b'), record('a2', 'a'), record('c1', 'c'), record('b2', 'b'), record('a3', 'a')];
    expect(groupByMessageGroup(records).map((group) => group.map((r) => r.messageId))).toEqual([['a1', 'a2', 'a3'], ['b1', 'b2'], ['c1']]);
  });
});

describe('processBatch', () => {
  it('delivers several messages of one group strictly in order, with sequences 1, 2, 3', async () => {
    const { run, sent } = harness();
    const plan = await run([record('a1', 'a'), record('b1', 'b'), record('a2', 'a'), record('a3', 'a'), record('b2', 'b')]);
    expect(plan.failedMessageIds).toEqual([]);
    expect(plan.visibilityChanges).toEqual([]);
    expect(sent.filter((s) => s.eventId.startsWith('a')).map((s) => [s.eventId, s.sequence])).toEqual([['a1', 1], ['a2', 2], ['a3', 3]]);
    expect(sent.filter((s) => s.eventId.startsWith('b')).map((s) => [s.eventId, s.sequence])).toEqual([['b1', 1], ['b2', 2]]);
  });

  it('fails a failing head and every later record of its group, backing off the head and releasing the successors', async () => {
    const { run, sent } = harness((eventId) => (eventId === 'a1' ? fail500 : ok));
    const plan = await run([record('a1', 'a'), record('b1', 'b'), record('a2', 'a'), record('a3', 'a'), record('b2', 'b')]);
    expect(plan.failedMessageIds).toEqual(['a1', 'a2', 'a3']);
    expect(plan.visibilityChanges).toEqual([
      // Attempt 1 backs off within [5, 10]; random 0.5 gives 5 + floor(0.5 × 6) = 8 s.
      { messageId: 'a1', receiptHandle: 'rh-a1', timeoutSeconds: 8 },
      { messageId: 'a2', receiptHandle: 'rh-a2', timeoutSeconds: 0 },
      { messageId: 'a3', receiptHandle: 'rh-a3', timeoutSeconds: 0 },
    ]);
    // The successors were never attempted; the other group flowed.
    expect(sent.map((s) => s.eventId).sort()).toEqual(['a1', 'b1', 'b2']);
  });

  it('fails from the first failing record on, when earlier records of the group succeeded', async () => {
    const { run } = harness((eventId) => (eventId === 'a2' ? fail500 : ok));
    const plan = await run([record('a1', 'a'), record('a2', 'a'), record('a3', 'a')]);
    expect(plan.failedMessageIds).toEqual(['a2', 'a3']);
    expect(plan.visibilityChanges.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['a2', 8], ['a3', 0]]);
    expect(plan.outcomes.get('a1')?.kind).toBe(OutcomeKind.delivered);
  });

  it('never dead-letters a successor that was not attempted, across retries of its head', async () => {
    const { run, sent, deadLetters, store } = harness((eventId) => (eventId === 'a1' ? fail500 : ok));
    const batch = [record('a1', 'a'), record('a2', 'a'), record('a3', 'a')];
    // SQS hands the same three messages out again after each backoff.
    for (let invocation = 1; invocation < policy.maxDeliveryAttempts; invocation += 1) {
      const plan = await run(batch.map((r) => ({ ...r, receiveCount: invocation })));
      expect(plan.failedMessageIds).toEqual(['a1', 'a2', 'a3']);
      expect(deadLetters).toEqual([]);
    }
    const last = await run(batch.map((r) => ({ ...r, receiveCount: policy.maxDeliveryAttempts })));
    expect(last.failedMessageIds).toEqual([]);
    expect(deadLetters.map((d) => [d.queued.event.event_id, d.attempts, d.sequence])).toEqual([['a1', 3, 1]]);
    expect(deadLetters[0]?.reason).toBe('3 of 3 attempts failed; last: HTTP 500');
    expect(deadLetters[0]?.queued.event.event_id).toBe('a1');
    // The key moved on in the same invocation, and the receiver sees the gap at 1.
    expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a1', 1], ['a1', 1], ['a1', 1], ['a2', 2], ['a3', 3]]);
    expect(store.events.get('a1')).toMatchObject({ status: 'dead_lettered', attempts: 3, sequence: 1 });
    for (const deadLetter of deadLetters) expect(deadLetter.attempts).toBeGreaterThan(0);
  });

  it('holds an exhausted head at the maximum backoff when ON_EXHAUSTED=stall, attempting no successor', async () => {
    const { ports, sent, deadLetters, store } = harness((eventId) => (eventId === 'a1' ? fail500 : ok));
    const stalling: RetryPolicy = { ...policy, onExhausted: 'stall' };
    const batch = [record('a1', 'a'), record('a2', 'a')];
    for (let invocation = 1; invocation <= policy.maxDeliveryAttempts + 3; invocation += 1) {
      const plan = await processBatch(batch, ports, stalling, () => undefined, plentyOfTime);
      expect(plan.failedMessageIds).toEqual(['a1', 'a2']);
      if (invocation >= policy.maxDeliveryAttempts) expect(plan.visibilityChanges.map((c) => c.timeoutSeconds)).toEqual([900, 0]);
    }
    expect(deadLetters).toEqual([]);
    expect(sent.every((s) => s.eventId === 'a1' && s.sequence === 1)).toBe(true);
    expect(store.keys.get('a')?.headAttempts).toBe(policy.maxDeliveryAttempts + 3);
  });

  it('delivers a redriven dead letter with its original sequence and marked as a redelivery, taking no new number', async () => {
    const { run, sent, store } = harness();
    await run([record('a1', 'a'), record('a3', 'a')]);
    const redriven: ConsumerRecord = {
      ...record('a2', 'a'),
      body: JSON.stringify({ ...queued('a2', 'a'), redrive: { sequence: 2, redriven_at: '2026-12-02T13:00:00.000Z' } }),
    };
    await run([redriven, record('a4', 'a')]);
    expect(sent.map((s) => [s.eventId, s.sequence, s.request.headers['webhook-redelivery'] ?? null])).toEqual([
      ['a1', 1, null],
      ['a3', 2, null],
      ['a2', 2, 'true'],
      ['a4', 3, null],
    ]);
    expect(store.keys.get('a')?.lastSequence).toBe(3);
  });

  it('attempts a redriven dead letter afresh even when it was its key’s last head, exhausted or skipped', async () => {
    let isFailing = true;
    const { run, sent, deadLetters, store } = harness(() => (isFailing ? fail500 : ok));
    for (let i = 0; i < policy.maxDeliveryAttempts; i += 1) await run([record('a1', 'a')]);
    expect(deadLetters.map((d) => d.queued.event.event_id)).toEqual(['a1']);
    isFailing = false;
    const redriven = (redrivenAt: string): ConsumerRecord => ({
      ...record('a1', 'a'),
      body: JSON.stringify({ ...queued('a1', 'a'), redrive: { sequence: 1, redriven_at: redrivenAt } }),
    });
    store.events.delete('a1');
    const plan = await run([redriven('2026-12-02T13:00:00.000Z')]);
    expect(plan.outcomes.get('a1')).toMatchObject({ kind: OutcomeKind.delivered, sequence: 1, attempts: 1 });
    expect(sent.at(-1)?.request.headers['webhook-redelivery']).toBe('true');
    expect(deadLetters).toHaveLength(1);
  });

  it('delivers a redriven dead letter when the operations clock stamped its redrive before the consumer’s clock stamped its give-up', async () => {
    // Two functions, two hosts, two clocks: the consumer's runs 50 ms ahead of the operations function's.
    let isFailing = true;
    const { run, sent, deadLetters } = harness(() => (isFailing ? fail500 : ok), () => new Date('2026-12-02T12:30:00.100Z'));
    for (let i = 0; i < policy.maxDeliveryAttempts; i += 1) await run([record('e1', 'a')]);
    expect(deadLetters.map((d) => [d.queued.event.event_id, d.deadLetteredAt])).toEqual([['e1', '2026-12-02T12:30:00.100Z']]);
    isFailing = false;
    const [letter] = deadLetters;
    if (letter === undefined) throw new Error('no dead letter');
    const stored = { ...letter, subscriptionId: 'a', position: positionOf(letter), orderingKey: 'a', messageGroupId: 'group-a' };
    const redriven = toRedrivenEvent(stored, 'group-a', '2026-12-02T12:30:00.050Z');
    const plan = await run([{ ...record('e1', 'a'), messageId: 'e1-redriven', body: JSON.stringify(redriven) }]);
    expect(plan.outcomes.get('e1-redriven')).toMatchObject({ kind: OutcomeKind.delivered, sequence: 1 });
    expect(sent.at(-1)?.request.headers['webhook-redelivery']).toBe('true');
    // Received again (its deletion lost): settled by its own delivery, not delivered twice.
    const again = await run([{ ...record('e1', 'a'), messageId: 'e1-redriven', body: JSON.stringify(redriven) }]);
    expect(again.outcomes.get('e1-redriven')).toMatchObject({ kind: OutcomeKind.duplicate });
  });

  it('settles a redriven copy by a later give-up of the event however early its clock stamped it, and not by the one it came from', async () => {
    const { run, sent, deadLetters } = harness(() => fail500, () => new Date('2026-12-02T12:30:00.000Z'));
    for (let i = 0; i < policy.maxDeliveryAttempts; i += 1) await run([record('e1', 'a')]);
    const toStored = (letter: DeadLetter | undefined) => {
      if (letter === undefined) throw new Error('no dead letter');
      return { ...letter, subscriptionId: 'a', position: positionOf(letter), orderingKey: 'a', messageGroupId: 'group-a' };
    };
    // Redriven by an operations clock an hour ahead; given up again by the consumer at 12:30.
    const first = toRedrivenEvent(toStored(deadLetters[0]), 'group-a', '2026-12-02T13:30:00.000Z');
    for (let i = 0; i < policy.maxDeliveryAttempts; i += 1) await run([{ ...record('e1', 'a'), messageId: 'first', body: JSON.stringify(first) }]);
    expect(deadLetters).toHaveLength(2);
    const attempts = sent.length;
    // The first copy again (its deletion lost): the later give-up settles it, whatever its stamp says.
    const again = await run([{ ...record('e1', 'a'), messageId: 'first', body: JSON.stringify(first) }]);
    expect(again.outcomes.get('first')).toMatchObject({ kind: OutcomeKind.duplicate });
    expect(sent).toHaveLength(attempts);
    // The second give-up's own redrive is attempted.
    const second = toRedrivenEvent(toStored(deadLetters[1]), 'group-a', '2026-12-02T13:30:00.000Z');
    const plan = await run([{ ...record('e1', 'a'), messageId: 'second', body: JSON.stringify(second) }]);
    expect(plan.outcomes.get('second')?.kind).not.toBe(OutcomeKind.duplicate);
    expect(sent).toHaveLength(attempts + 1);
  });

  it('delivers a replay’s copy when the operations clock stamped it before the consumer’s clock stamped the event’s delivery', async () => {
    const { run, sent } = harness(() => ok, () => new Date('2026-12-02T12:30:00.100Z'));
    await run([record('e1', 'a')]);
    const copyOf = (startedAt: string): ConsumerRecord => ({
      ...record('e1', 'a'),
      messageId: `copy-${startedAt}`,
      body: JSON.stringify(toReplayedEvent(queued('e1', 'a'), 1, 'group-a', '2026-12-02T12:30:00.050Z', { startedAt, giveUp: undefined })),
    });
    const first = copyOf('2026-12-02T12:30:00.040Z');
    expect((await run([first])).outcomes.get(first.messageId)).toMatchObject({ kind: OutcomeKind.delivered, sequence: 1 });
    // Received again (its deletion lost): settled by its own replay's delivery.
    expect((await run([first])).outcomes.get(first.messageId)).toMatchObject({ kind: OutcomeKind.duplicate });
    // Another replay's copy is delivered again, whatever its stamps.
    const second = copyOf('2026-12-02T12:29:59.000Z');
    expect((await run([second])).outcomes.get(second.messageId)).toMatchObject({ kind: OutcomeKind.delivered, sequence: 1 });
    expect(sent.map((s) => [s.eventId, s.request.headers['webhook-redelivery'] ?? null])).toEqual([
      ['e1', null],
      ['e1', 'true'],
      ['e1', 'true'],
    ]);
  });

  it('delivers each replay’s copy of an event when two replays’ copies come in one batch, and one copy of a replay once', async () => {
    const { run, sent } = harness(() => ok);
    await run([record('e1', 'a'), record('e2', 'a')]);
    const copyOf = (eventId: string, sequence: number, startedAt: string, copy = 'x'): ConsumerRecord => ({
      ...record(eventId, 'a'),
      messageId: `${eventId}-${startedAt}-${copy}`,
      body: JSON.stringify(toReplayedEvent(queued(eventId, 'a'), sequence, 'group-a', startedAt, { startedAt, giveUp: undefined })),
    });
    // The first replay's copy of e2 came back after a lost answer, behind it the second replay's e1 and e2 (seed 1418).
    const batch = [copyOf('e2', 2, '2026-12-02T12:00:01.000Z'), copyOf('e1', 1, '2026-12-02T12:00:02.000Z'), copyOf('e2', 2, '2026-12-02T12:00:02.000Z'), copyOf('e2', 2, '2026-12-02T12:00:02.000Z', 'sent again')];
    const { outcomes } = await run(batch);
    expect(batch.map((copy) => outcomes.get(copy.messageId)?.kind)).toEqual([OutcomeKind.delivered, OutcomeKind.delivered, OutcomeKind.delivered, OutcomeKind.duplicate]);
    expect(sent.slice(2).map((s) => [s.eventId, s.sequence])).toEqual([
      ['e2', 2],
      ['e1', 1],
      ['e2', 2],
    ]);
  });

  it('dead-letters a head an operator asked to skip, without attempting it, and moves on', async () => {
    const { run, sent, deadLetters, store } = harness((eventId) => (eventId === 'a1' ? fail500 : ok));
    await run([record('a1', 'a'), record('a2', 'a')]);
    expect(await store.requestSkip({ orderingKey: 'a', eventId: 'a1' })).toBe(true);
    const plan = await run([record('a1', 'a'), record('a2', 'a')]);
    expect(plan.failedMessageIds).toEqual([]);
    expect(deadLetters.map((d) => [d.queued.event.event_id, d.reason, d.sequence])).toEqual([['a1', 'skipped by an operator after 1 attempt', 1]]);
    expect(sent.map((s) => s.eventId)).toEqual(['a1', 'a2']);
  });

  it('keeps an event’s sequence number and webhook-id on every retry', async () => {
    const { run, sent } = harness((eventId, attempt) => (eventId === 'a2' && attempt < 3 ? fail500 : ok));
    await run([record('a1', 'a'), record('a2', 'a')]);
    await run([record('a2', 'a'), record('a3', 'a')]);
    await run([record('a2', 'a'), record('a3', 'a')]);
    const a2 = sent.filter((s) => s.eventId === 'a2');
    expect(a2.map((s) => s.sequence)).toEqual([2, 2, 2]);
    expect(new Set(a2.map((s) => s.request.body)).size).toBe(1);
    expect(sent.find((s) => s.eventId === 'a3')?.sequence).toBe(3);
  });

  it('skips an event that was already delivered, without sending or counting it', async () => {
    const { run, sent, store } = harness();
    await run([record('a1', 'a')]);
    const writes = store.writes.length;
    const plan = await run([record('a1', 'a'), record('a2', 'a')]);
    expect(plan.outcomes.get('a1')?.kind).toBe(OutcomeKind.duplicate);
    expect(sent.map((s) => s.eventId)).toEqual(['a1', 'a2']);
    // a1, the head a2 replaces, was seen settled: its number is on its record already.
    expect(store.writes.slice(writes)).toEqual(['beginAttempt a2', 'markDelivered a2']);
  });

  it('sets a malformed record aside at once with its reason, and goes on with the group', async () => {
    const { run, sent, deadLetters, quarantined } = harness();
    const malformed: ConsumerRecord = { messageId: 'm1', receiptHandle: 'rh-m1', body: '{"version":1,"event":{}}', messageGroupId: 'group-a', receiveCount: 1 };
    const plan = await run([malformed, record('a2', 'a')]);
    expect(plan.failedMessageIds).toEqual([]);
    expect(deadLetters).toEqual([]);
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]).toMatchObject({ messageId: 'm1', messageGroupId: 'group-a', body: malformed.body });
    expect(quarantined[0]?.reason).toMatch(/^malformed record: /);
    expect(sent.map((s) => s.eventId)).toEqual(['a2']);
  });

  it.each(['not json', '[]', '{"version":2}', ''])('sets the unreadable body %j aside', async (body) => {
    const { run, quarantined, sent } = harness();
    const plan = await run([{ messageId: 'm', receiptHandle: 'rh', body, messageGroupId: 'g', receiveCount: 1 }]);
    expect(plan.failedMessageIds).toEqual([]);
    expect(quarantined.map((d) => d.reason.startsWith('malformed record'))).toEqual([true]);
    expect(sent).toEqual([]);
  });

  it('counts a dead letter in its group by its place whether or not ingest recorded the event, and uncounts it from depth only if it did', async () => {
    const { run, counted, deadLetters, store } = harness();
    await store.recordAccepted({ eventId: 'g2', subscriptionId: 'gone', tenantId: 't', orderingKey: 'gone', messageGroupId: 'group-gone', acceptedAt: '2026-12-02T12:00:00.000Z' });
    // g1: given up before ingest recorded it (the race of the dead-letter count); g2: recorded first.
    const plan = await run([record('g1', 'gone'), record('g2', 'gone')]);
    expect(counted).toEqual(deadLetters.map(placeOf));
    expect(counted.map((place) => place.messageGroupId)).toEqual(['group-gone', 'group-gone']);
    expect(plan.groups).toMatchObject([{ messageGroupId: 'group-gone', settled: 1 }]);
  });

  it('counts a dead letter before it is listed when a redrive may take it as soon as it is', async () => {
    const { ports, counted, faults } = harness(() => fail500);
    const countedWhenListed: DeadLetterPlace[][] = [];
    const listing: DeliveryPorts = { ...ports, deadLetters: { put: async () => void countedWhenListed.push([...counted]) } };
    await processBatch([record('a1', 'a'), record('a2', 'a')], listing, { ...policy, maxDeliveryAttempts: 1 }, (_error, r) => faults.push(r.messageId), plentyOfTime);
    expect(counted).toHaveLength(2);
    // When each was listed, it was counted already (a redrive taking it uncounts what is there).
    expect(countedWhenListed).toEqual([counted.slice(0, 1), counted.slice(0, 2)]);
    expect(faults).toEqual([]);
  });

  it('dead-letters at once an event whose subscription no longer exists', async () => {
    const { run, sent, deadLetters } = harness();
    await run([record('g1', 'gone')]);
    expect(sent).toEqual([]);
    expect(deadLetters[0]).toMatchObject({ attempts: 0, sequence: 1 });
    expect(deadLetters[0]?.queued.event.event_id).toBe('g1');
    expect(deadLetters[0]?.reason).toMatch(/no longer exists/);
  });

  it('writes the number of a head that left unsettled on its record when the next head replaces it, so no crash leaves it known nowhere', async () => {
    const { run, store, ports } = harness();
    // a1 is begun, then its invocation dies before the attempt is recorded (and SQS's backstop takes it).
    const crashing = { ...ports, send: async () => Promise.reject(new Error('crash during the attempt')) };
    await processBatch([record('a1', 'a')], crashing, policy, () => undefined, plentyOfTime);
    expect(store.events.get('a1')?.sequence).toBeUndefined();
    expect(store.keys.get('a')).toMatchObject({ headEventId: 'a1', headSequence: 1 });
    await run([record('a2', 'a')]);
    expect(store.events.get('a1')?.sequence).toBe(1);
    expect(store.events.get('a2')).toMatchObject({ status: 'delivered', sequence: 2 });
  });

  it('writes no number for a previous head this batch settled itself, and numbers a run of a key in one write', async () => {
    const { run, store } = harness();
    await run([record('a1', 'a'), record('a2', 'a'), record('a3', 'a')]);
    expect(store.writes).toEqual(['beginBatch a1 a2 a3', 'markDelivered a1', 'markDelivered a2', 'markDelivered a3']);
  });

  it('records each delivery while the next record is begun and sent, and sends a record whose delivery it cannot record back with its successors', async () => {
    const { run, store, ports, sent, faults } = harness();
    const failing = failingRecordOnce(ports, store, 'a2', 0);
    // One at a time (each alone in its invocation's batch), a2's record fails while a3 is begun and sent.
    await run([positioned('a1', 'a', 1)]);
    const first = await processBatch([positioned('a2', 'a', 2)], failing, policy, (_error, r) => faults.push(r.messageId), plentyOfTime);
    expect(faults).toEqual(['a2']);
    expect(first.failedMessageIds).toEqual(['a2']);
    // The new head's begin writes the number of the head before it (a1) on its record.
    expect(store.writes).toEqual(['beginAttempt a1', 'markDelivered a1', 'beginAttempt a2', 'recordSequence a1']);
    // a2 came back older than its key's head once a3 was begun: its delivery is recorded then,
    // with the number the key kept for it, and it is not sent again.
    await run([positioned('a3', 'a', 3)]);
    await run([positioned('a2', 'a', 2)]);
    expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a1', 1], ['a2', 2], ['a3', 3]]);
    expect(store.events.get('a2')).toMatchObject({ status: 'delivered', sequence: 2 });
  });

  it('sends a run’s member whose delivery it cannot record back with its successors, and records it late, unsent, once a later event of its key was recorded', async () => {
    const { store, ports, sent, faults, run } = harness();
    // Slow to fail, as a write that times out: a3 is sent and recorded meanwhile.
    const failing = failingRecordOnce(ports, store, 'a2', 5);
    const first = await processBatch([positioned('a1', 'a', 1), positioned('a2', 'a', 2), positioned('a3', 'a', 3), positioned('a4', 'a', 4)], failing, policy, (_error, r) => faults.push(r.messageId), plentyOfTime);
    expect(faults).toEqual(['a2']);
    expect(first.failedMessageIds).toEqual(['a2', 'a3', 'a4']);
    expect(['a1', 'a2', 'a3'].map((id) => store.events.get(id)?.status)).toEqual(['delivered', undefined, 'delivered']);
    const second = await run([positioned('a2', 'a', 2), positioned('a3', 'a', 3), positioned('a4', 'a', 4)]);
    // a3 was recorded, so a2 had its 2xx: recorded now with the number the run gave it, not sent again.
    expect(second.outcomes.get('a2')).toMatchObject({ kind: OutcomeKind.duplicate, isCounted: false });
    expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a1', 1], ['a2', 2], ['a3', 3], ['a4', 4]]);
    expect(['a1', 'a2', 'a3', 'a4'].map((id) => [store.events.get(id)?.status, store.events.get(id)?.sequence])).toEqual([
      ['delivered', 1],
      ['delivered', 2],
      ['delivered', 3],
      ['delivered', 4],
    ]);
  });

  it('sends an event behind which only a resent copy of an earlier event was settled: that copy proves no 2xx of it', async () => {
    const { run, store, sent } = harness();
    // a5 and a6 were numbered together; a5 was dead-lettered; the invocation stopped before a6 was sent.
    await store.beginBatch({ orderingKey: 'a', events: [{ eventId: 'a5' }, { eventId: 'a6' }] });
    await store.markDeadLettered({ queued: queued('a5', 'a'), sequence: 1, attempts: 3, at: '2026-12-02T12:00:01.000Z', reason: 'HTTP 500' });
    // Behind a6 in the queue: a5 again, sent anew by a producer whose request ingest did not answer.
    const plan = await run([positioned('a5', 'a', 1), positioned('a6', 'a', 2), { ...positioned('a5', 'a', 3), messageId: 'a5-again' }]);
    expect(plan.outcomes.get('a6')).toMatchObject({ kind: OutcomeKind.delivered, sequence: 2 });
    expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a6', 2]]);
  });

  describe('copies: a message of an event at another place than the one ingest recorded', () => {
    /** Ingest's record of `eventId`, at sequence number `at` of its key's group (at `indexInMessage` of a pack). */
    const accept = (store: InMemoryDeliveryStore, eventId: string, key: string, at: number, indexInMessage?: number) =>
      store.recordAccepted({
        eventId,
        subscriptionId: key,
        tenantId: 't',
        orderingKey: key,
        messageGroupId: `group-${key}`,
        acceptedAt: '2026-12-02T12:00:00.000Z',
        queuePosition: queuePositionOf({ messageGroupId: `group-${key}`, sequenceNumber: String(at), ...(indexInMessage === undefined ? {} : { indexInMessage }) }),
      });

    it('skips a copy behind the recorded message, settled or not, with no write and no POST', async () => {
      const { run, store, sent } = harness();
      // The recorded message of a1 came first, and SQS's backstop moved it after a crash loop.
      await accept(store, 'a1', 'a', 1);
      const plan = await run([{ ...positioned('a1', 'a', 3), messageId: 'a1-copy' }, positioned('a2', 'a', 4)]);
      expect(plan.outcomes.get('a1-copy')).toEqual({ kind: OutcomeKind.duplicate });
      expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a2', 1]]);
      expect(store.writes.filter((write) => write.endsWith(' a1'))).toEqual(['recordAccepted a1']);
    });

    it('delivers a copy ahead of the recorded message in its place, and skips the recorded one as settled', async () => {
      const { run, store, sent } = harness();
      // A pack of a1 and a2; a1's record failed, a2's landed; the request sent again recorded a1 alone, later.
      await accept(store, 'a2', 'a', 1, 1);
      await accept(store, 'a1', 'a', 2);
      const packed = (id: string, index: number): ConsumerRecord => ({ ...positioned(id, 'a', 1), messageId: `p1#${index}`, pack: { messageId: 'p1', index } });
      const plan = await run([packed('a1', 0), packed('a2', 1), { ...positioned('a1', 'a', 2), messageId: 'a1-again' }]);
      expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a1', 1], ['a2', 2]]);
      expect(plan.outcomes.get('a1-again')).toEqual({ kind: OutcomeKind.duplicate });
    });

    it('skips a copy in another group, whose key moved there, however early it comes', async () => {
      const { run, store, sent } = harness();
      await accept(store, 'a1', 'a', 1);
      const plan = await run([{ ...positioned('a1', 'a', 9), messageGroupId: 'group-elsewhere' }]);
      expect(plan.outcomes.get('a1')).toEqual({ kind: OutcomeKind.duplicate });
      expect(sent).toEqual([]);
      expect(store.keys.get('a')).toBeUndefined();
    });

    it('ends a run at a copy, and goes on past it, numbering the events around it in order', async () => {
      const { run, store, sent } = harness();
      // a1's recorded message (at 2) was moved by SQS's backstop; its copy at 3 rides between a0 and a2.
      for (const [id, at] of [['a0', 1], ['a1', 2], ['a2', 4]] as const) await accept(store, id, 'a', at);
      const plan = await run([positioned('a0', 'a', 1), { ...positioned('a1', 'a', 3), messageId: 'a1-copy' }, positioned('a2', 'a', 4), positioned('a3', 'a', 5)]);
      expect(plan.outcomes.get('a1-copy')).toEqual({ kind: OutcomeKind.duplicate });
      expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a0', 1], ['a2', 2], ['a3', 3]]);
      expect(plan.failedMessageIds).toEqual([]);
    });

    it('delivers a message at its recorded place, and one whose event has no place recorded', async () => {
      const { run, store, sent } = harness();
      await accept(store, 'a1', 'a', 1);
      await run([positioned('a1', 'a', 1), positioned('a2', 'a', 2)]);
      expect(sent.map((s) => s.eventId)).toEqual(['a1', 'a2']);
    });

    it('delivers a redriven dead letter wherever it is: from its redrive on, it is its event’s message', async () => {
      const { run, store, sent } = harness();
      await accept(store, 'a1', 'a', 1);
      await store.markDeadLettered({ queued: queued('a1', 'a'), sequence: 1, attempts: 3, at: '2026-12-02T12:00:01.000Z', reason: 'HTTP 500' });
      const redriven: QueuedEvent = { ...queued('a1', 'a'), redrive: { redriven_at: '2026-12-02T12:00:02.000Z', sequence: 1 } };
      const plan = await run([{ ...positioned('a1', 'a', 7), body: JSON.stringify(redriven) }]);
      expect(plan.outcomes.get('a1')).toMatchObject({ kind: OutcomeKind.delivered, sequence: 1 });
      expect(sent.map((s) => s.eventId)).toEqual(['a1']);
    });
  });

  describe('a key’s recorded deliveries', () => {
    /** The key records deliveries through sequence number `at` of its group, numbered up to `sequence`. */
    const deliveredThrough = (store: InMemoryDeliveryStore, key: string, at: number, sequence: number) =>
      store.recordDelivered({ orderingKey: key, message: { messageGroupId: `group-${key}`, sequenceNumber: String(at) }, sequence });

    /** A message SQS hands out again. */
    const again = (record: ConsumerRecord): ConsumerRecord => ({ ...record, receiveCount: 2 });

    it('skips a message received again at or before the recorded place, taken before, with no write and no POST', async () => {
      const { run, store, sent } = harness();
      await deliveredThrough(store, 'a', 5, 5);
      const writes = store.writes.length;
      const plan = await run([again(positioned('a4', 'a', 4)), positioned('a5', 'a', 5)]);
      expect([plan.outcomes.get('a4'), plan.outcomes.get('a5')]).toEqual([{ kind: OutcomeKind.duplicate }, { kind: OutcomeKind.duplicate }]);
      expect(plan.failedMessageIds).toEqual([]);
      expect(sent).toEqual([]);
      expect(store.writes.slice(writes)).toEqual([]);
    });

    it('delivers a later message of the key, and a message of another group', async () => {
      const { run, store, sent } = harness();
      await deliveredThrough(store, 'a', 5, 5);
      await run([again(positioned('a6', 'a', 6))]);
      await run([again({ ...positioned('a7', 'a', 1), messageGroupId: 'group-moved' })]);
      expect(sent.map((s) => s.eventId)).toEqual(['a6', 'a7']);
    });

    it('reads the items of the keys whose messages SQS handed out before, and no other', async () => {
      const { run, store } = harness();
      await run([positioned('a1', 'a', 1), positioned('b1', 'b', 1)]);
      await run([positioned('a2', 'a', 2), again(positioned('b2', 'b', 2)), again(positioned('c1', 'c', 1))]);
      expect(store.reads.filter((read) => read.startsWith('findDelivered'))).toEqual(['findDelivered b c']);
    });

    it('delivers a redriven dead letter at or before the recorded place: it is not of the key’s order of places', async () => {
      const { run, store, sent } = harness();
      await deliveredThrough(store, 'a', 5, 5);
      const redriven: QueuedEvent = { ...queued('a1', 'a'), redrive: { redriven_at: '2026-12-02T12:00:02.000Z', sequence: 1 } };
      await run([again({ ...positioned('a1', 'a', 3), body: JSON.stringify(redriven) })]);
      expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([['a1', 1]]);
    });

    it('writes no number on a run’s events the key moves aside when its recorded delivery reaches them: they were settled', async () => {
      const { run, store } = harness();
      await store.beginBatch({ orderingKey: 'a', events: [{ eventId: 'a1' }, { eventId: 'a2' }] });
      await deliveredThrough(store, 'a', 2, 2);
      await run([positioned('a3', 'a', 3)]);
      expect(store.writes.filter((write) => write.startsWith('recordSequence'))).toEqual([]);
      expect(store.reads.filter((read) => read.startsWith('findDelivered'))).toEqual(['findDelivered a']);
      // Without a recorded delivery, the numbers go on their records.
      const other = harness();
      await other.store.beginBatch({ orderingKey: 'a', events: [{ eventId: 'a1' }, { eventId: 'a2' }] });
      await other.run([positioned('a3', 'a', 3)]);
      expect(other.store.writes.filter((write) => write.startsWith('recordSequence')).sort()).toEqual(['recordSequence a1', 'recordSequence a2']);
    });

    it('spares only the moved-aside numbers its recorded delivery reaches', async () => {
      const { run, store } = harness();
      await store.beginBatch({ orderingKey: 'a', events: [{ eventId: 'a1' }, { eventId: 'a2' }, { eventId: 'a3' }] });
      await deliveredThrough(store, 'a', 2, 2);
      await run([positioned('a4', 'a', 4)]);
      expect(store.writes.filter((write) => write.startsWith('recordSequence'))).toEqual(['recordSequence a3']);
    });

    it('writes every moved-aside number when the recorded deliveries cannot be read', async () => {
      const { ports, store } = harness();
      await store.beginBatch({ orderingKey: 'a', events: [{ eventId: 'a1' }, { eventId: 'a2' }] });
      await deliveredThrough(store, 'a', 2, 2);
      const unreadable = new Proxy(store, { get: (target, name) => (name === 'findDelivered' ? () => Promise.reject(new Error('throttled')) : Reflect.get(target, name)) });
      await processBatch([positioned('a3', 'a', 3)], { ...ports, store: unreadable }, policy, () => undefined, plentyOfTime);
      expect(store.writes.filter((write) => write.startsWith('recordSequence')).sort()).toEqual(['recordSequence a1', 'recordSequence a2']);
    });

    it('reads no recorded delivery for previous heads begun one at a time: their deliveries wrote their records', async () => {
      const { run, store } = harness();
      await store.beginAttempt({ orderingKey: 'a', eventId: 'a1', maxAttempts: 3 });
      await store.beginAttempt({ orderingKey: 'a', eventId: 'a2', maxAttempts: 3 });
      // Even a recorded delivery that reaches them is not read: each number goes on its record (one cheap read first, in the store).
      await deliveredThrough(store, 'a', 2, 2);
      await run([positioned('a3', 'a', 3)]);
      expect(store.reads.filter((read) => read.startsWith('findDelivered'))).toEqual([]);
      expect(store.writes.filter((write) => write.startsWith('recordSequence'))).toEqual(['recordSequence a2', 'recordSequence a1']);
    });
  });

  it('begins nothing for a copy older than its key’s head in the same group (an invocation that ran late)', async () => {
    const { run, store, sent } = harness();
    // One at a time: the key's head moves to a2 (a run would keep its first event as the head).
    await run([positioned('a1', 'a', 1)]);
    await run([positioned('a2', 'a', 2)]);
    const writes = store.writes.length;
    // A late copy of a1's message, read as unsettled before a1 was recorded.
    store.events.delete('a1');
    const plan = await run([positioned('a1', 'a', 1)]);
    expect(plan.outcomes.get('a1')?.kind).toBe(OutcomeKind.duplicate);
    expect(store.keys.get('a')).toMatchObject({ headEventId: 'a2', headSequence: 2, lastSequence: 2 });
    expect(sent.map((s) => s.eventId)).toEqual(['a1', 'a2']);
    expect(store.writes.slice(writes)).toEqual(['beginAttempt a1', 'markDeliveredUnlessSettled a1']);
  });

  it('holds the event back as a fault when the previous head’s number cannot be written', async () => {
    const { run, store, ports, faults } = harness();
    await run([record('a1', 'a')]);
    const failing = { ...ports, store: { ...store, recordSequence: async () => Promise.reject(new Error('DynamoDB unavailable')) } };
    const plan = await processBatch([record('a2', 'a')], failing, policy, () => faults.push('a2'), plentyOfTime);
    expect(faults).toEqual(['a2']);
    expect(plan.failedMessageIds).toEqual(['a2']);
    expect(store.events.get('a2')?.status).toBeUndefined();
  });

  it('gives up without another attempt when the attempts were spent before a crash', async () => {
    const { run, sent, deadLetters, store } = harness();
    // Three attempts were counted, the last one's outcome was lost in a crash.
    for (let i = 0; i < 3; i += 1) await store.beginAttempt({ orderingKey: 'a', eventId: 'a1', maxAttempts: 3 });
    const plan = await run([record('a1', 'a'), record('a2', 'a')]);
    expect(sent.map((s) => s.eventId)).toEqual(['a2']);
    expect(deadLetters.map((d) => [d.queued.event.event_id, d.attempts])).toEqual([['a1', 3]]);
    expect(plan.failedMessageIds).toEqual([]);
  });

  it('honours Retry-After for the head’s visibility', async () => {
    const { run } = harness(() => ({ kind: AttemptResultKind.response, statusCode: 429, retryAfter: '120' }));
    const plan = await run([record('a1', 'a'), record('a2', 'a')]);
    expect(plan.visibilityChanges.map((c) => c.timeoutSeconds)).toEqual([120, 0]);
  });

  it.each([
    { result: { kind: AttemptResultKind.timeout, afterMs: 50 } as AttemptResult, reason: 'no response within 50 ms' },
    { result: { kind: AttemptResultKind.unreachable, message: 'ECONNREFUSED' } as AttemptResult, reason: 'unreachable: ECONNREFUSED' },
    { result: { kind: AttemptResultKind.endpointNotAllowed, address: '10.0.0.1' } as AttemptResult, reason: 'endpoint resolved to 10.0.0.1, which is not a public address' },
    { result: { kind: AttemptResultKind.response, statusCode: 302 } as AttemptResult, reason: 'HTTP 302' },
  ])('counts $reason as a failed attempt and remembers it', async ({ result, reason }) => {
    const { run, store } = harness(() => result);
    const plan = await run([record('a1', 'a')]);
    expect(plan.outcomes.get('a1')).toMatchObject({ kind: OutcomeKind.retryLater, reason });
    expect(store.keys.get('a')?.headLastError).toBe(reason);
  });

  it('counts in its group’s lag what a record did while the previous delivery’s record failed to be written', async () => {
    const { store, ports, deadLetters } = harness((eventId) => (eventId === 'a2' ? fail500 : ok));
    for (const n of [1, 2]) await store.recordAccepted({ eventId: `a${n}`, subscriptionId: 'a', tenantId: 't', orderingKey: 'a', messageGroupId: 'g-a', acceptedAt: '2026-12-02T12:00:00.000Z' });
    const faulty: DeliveryPorts = { ...ports, store: { ...store, markDelivered: async () => Promise.reject(new Error('DynamoDB unavailable')) } };
    const plan = await processBatch([positioned('a1', 'a', 1), positioned('a2', 'a', 2)], faulty, { ...policy, maxDeliveryAttempts: 1 }, () => undefined, plentyOfTime);
    // a2 was given up (its dead letter written) while a1's delivery could not be recorded: both go
    // back, and a2's dead-lettering leaves the group's depth now, since its copy will be a duplicate.
    expect(deadLetters.map((d) => d.queued.event.event_id)).toEqual(['a2']);
    expect(plan.failedMessageIds).toEqual(['a1', 'a2']);
    expect(plan.groups.map((g) => g.settled)).toEqual([1]);
  });

  it('treats a fault as a wait: the group’s records fail, the head backs off by its receive count toward the visibility ceiling, other groups go on', async () => {
    const { ports, faults, sent } = harness();
    const faulty: DeliveryPorts = {
      ...ports,
      store: {
        ...ports.store,
        markDelivered: async (input) => {
          if (input.queued.ordering_key === 'a') throw new Error('DynamoDB unavailable');
          return ports.store.markDelivered(input);
        },
      },
    };
    const plan = await processBatch([record('a1', 'a', 3), record('a2', 'a', 3), record('b1', 'b')], faulty, policy, (_error, r) => faults.push(r.messageId), plentyOfTime);
    expect(faults).toEqual(['a1']);
    expect(plan.failedMessageIds).toEqual(['a1', 'a2']);
    // Third receive: a fault backs off within [20, 40]; random 0.5 gives 20 + floor(0.5 × 21) = 30 s.
    expect(plan.visibilityChanges.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['a1', 30], ['a2', 0]]);
    // a2 was sent while a1's record was being written; it comes back with a1.
    expect(sent.map((s) => s.eventId).sort()).toEqual(['a1', 'a2', 'b1']);
  });

  it('waits at least a second after a fault even when the base delay is 0', async () => {
    const { ports } = harness();
    const faulty: DeliveryPorts = { ...ports, findTarget: async () => { throw new Error('DynamoDB unavailable'); } };
    const plan = await processBatch([positioned('a1', 'a', 1)], { ...faulty, random: () => 0 }, { ...policy, retryBaseSeconds: 0 }, () => undefined, plentyOfTime);
    expect(plan.visibilityChanges.map((c) => c.timeoutSeconds)).toEqual([1]);
  });

  it('backs a fault off by the highest receive count among the records it holds back, which ride with the head', async () => {
    const { ports, sent } = harness();
    const faulty: DeliveryPorts = { ...ports, findTarget: async () => { throw new Error('AccessDeniedException'); } };
    // a2 already collected 55 receives behind earlier heads: the backstop is 5 receives away for it.
    const plan = await processBatch([positioned('a1', 'a', 1), record('a2', 'a', 55), record('a3', 'a', 2)], faulty, policy, () => undefined, plentyOfTime);
    expect(plan.failedMessageIds).toEqual(['a1', 'a2', 'a3']);
    expect(plan.visibilityChanges.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([
      ['a1', faultBackoffSeconds(55, policy, ports.random)],
      ['a2', 0],
      ['a3', 0],
    ]);
    expect(plan.visibilityChanges[0]?.timeoutSeconds).toBeGreaterThanOrEqual(Math.ceil(policy.visibilityCeilingSeconds / 2));
    expect(sent).toEqual([]);
  });

  describe('keeps every visibility within SQS’s 12 hours from the receive, less the consumer’s timeout', () => {
    // A policy whose RETRY_MAX_SECONDS is above the ceiling (config refuses one; the core holds anyway).
    const loose: RetryPolicy = { ...policy, retryMaxSeconds: 43_200, visibilityCeilingSeconds: 43_070 };
    const retryAfterDay: AttemptResult = { kind: AttemptResultKind.response, statusCode: 503, retryAfter: '86400' };
    it.each([
      { name: 'a Retry-After of a day', policy: loose, respond: () => retryAfterDay, priorAttempts: 0, receiveCount: 1, isFaulty: false },
      { name: 'a held head (ON_EXHAUSTED=stall)', policy: { ...loose, onExhausted: 'stall', maxDeliveryAttempts: 1 } as RetryPolicy, respond: () => fail500, priorAttempts: 0, receiveCount: 2, isFaulty: false },
      { name: 'a backoff after 40 attempts', policy: { ...loose, maxDeliveryAttempts: 100 }, respond: () => fail500, priorAttempts: 40, receiveCount: 41, isFaulty: false },
      { name: 'a fault at the 1000th receive', policy: loose, respond: () => ok, priorAttempts: 0, receiveCount: 1000, isFaulty: true },
    ])('for $name', async ({ policy: tested, respond, priorAttempts, receiveCount, isFaulty }) => {
      const { ports, store } = harness(respond);
      for (let i = 0; i < priorAttempts; i += 1) await store.beginAttempt({ orderingKey: 'a', eventId: 'a1', maxAttempts: Number.MAX_SAFE_INTEGER });
      const faulty: DeliveryPorts = isFaulty ? { ...ports, findTarget: async () => { throw new Error('DynamoDB unavailable'); } } : ports;
      const batch = [record('a1', 'a', receiveCount), record('a2', 'a', receiveCount)];
      const plan = await processBatch(batch, { ...faulty, random: () => 0.999_999 }, tested, () => undefined, plentyOfTime);
      // The head waits as long as SQS allows, and no longer; its successor is released.
      expect(plan.visibilityChanges.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['a1', 43_070], ['a2', 0]]);
    });
  });

  describe('starts a record only with time left to finish it', () => {
    /** A budget that answers the checks in turn, then no; it records what it was asked for. */
    function answering(answers: readonly boolean[]): TimeBudget & { readonly asked: number[] } {
      const asked: number[] = [];
      return {
        asked,
        recordMs: 20_000,
        hasTimeFor: (ms) => {
          asked.push(ms);
          return answers[asked.length - 1] ?? false;
        },
      };
    }
    const always = Array.from({ length: 10 }, () => true);
    // Groups start in order of first appearance, each asking before its first record and again
    // after each record it finished: a1, b1, c1 are asked first, then a2, b2, then a3.
    const batch = () => [record('a1', 'a'), record('b1', 'b'), record('a2', 'a'), record('c1', 'c'), record('b2', 'b'), record('a3', 'a')];

    it.each([
      { name: 'plenty of time', answers: always, started: ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'], unstarted: [] },
      { name: 'time for the first record only', answers: [true], started: ['a1'], unstarted: ['a2', 'a3', 'b1', 'b2', 'c1'] },
      { name: 'no time at all', answers: [], started: [], unstarted: ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'] },
      { name: 'time for each group’s first record', answers: [true, true, true], started: ['a1', 'b1', 'c1'], unstarted: ['a2', 'a3', 'b2'] },
      // Time that seems to come back later (another group's answer) never lets a group skip ahead.
      { name: 'no time for a group’s first record, then time again', answers: [false, true, true, true, true, true], started: ['b1', 'b2', 'c1'], unstarted: ['a1', 'a2', 'a3'] },
    ])('with $name', async ({ answers, started, unstarted }) => {
      const { run, sent, faults } = harness();
      const budget = answering(answers);
      const plan = await run(batch(), budget);
      expect(sent.map((s) => s.eventId).sort()).toEqual(started);
      expect([...plan.unstartedMessageIds].sort()).toEqual(unstarted);
      expect([...plan.failedMessageIds].sort()).toEqual(unstarted);
      // Visible at once, each group's in SQS order: none is held for the queue's visibility timeout.
      expect(plan.visibilityChanges.map((c) => [c.messageId, c.timeoutSeconds])).toEqual(unstarted.map((id) => [id, 0]));
      expect([...plan.outcomes.keys()].sort()).toEqual(started);
      expect(faults).toEqual([]);
      expect(new Set(budget.asked)).toEqual(new Set([20_000]));
    });

    it('holds a failing head at its backoff and returns another group it had no time for', async () => {
      const { run } = harness((eventId) => (eventId === 'a1' ? fail500 : ok));
      const plan = await run([record('a1', 'a'), record('b1', 'b'), record('a2', 'a')], answering([true]));
      expect(plan.failedMessageIds).toEqual(['a1', 'a2', 'b1']);
      expect(plan.visibilityChanges.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['a1', 8], ['a2', 0], ['b1', 0]]);
      expect(plan.unstartedMessageIds).toEqual(['b1']);
    });

    it('counts what a group settled before time ran out, and leaves its head as it was', async () => {
      const { run, store } = harness();
      for (const eventId of ['a1', 'a2']) {
        await store.recordAccepted({ eventId, subscriptionId: 'a', tenantId: 't', orderingKey: 'a', messageGroupId: 'group-a', acceptedAt: '2026-12-02T12:00:00.000Z' });
      }
      const plan = await run([record('a1', 'a'), record('a2', 'a')], answering([true]));
      expect(plan.groups).toEqual([
        { messageGroupId: 'group-a', settled: 1, lastSettledAcceptedAt: '2026-12-02T12:00:00.000Z', head: { state: 'unknown' }, hasDelivered: true },
      ]);
    });
  });

  it('redelivers after a crash between the receiver’s 2xx and the record with the same webhook-id and sequence', async () => {
    const { ports, sent } = harness();
    let isCrashing = true;
    const crashing: DeliveryPorts = {
      ...ports,
      store: {
        ...ports.store,
        markDelivered: async (input) => {
          if (isCrashing) throw new Error('crash before the record');
          return ports.store.markDelivered(input);
        },
      },
    };
    await processBatch([record('a1', 'a')], crashing, policy, () => undefined, plentyOfTime);
    isCrashing = false;
    await processBatch([record('a1', 'a', 2)], crashing, policy, () => undefined, plentyOfTime);
    expect(sent.map((s) => [s.request.headers['webhook-id'], s.sequence])).toEqual([['a1', 1], ['a1', 1]]);
  });

  it('signs what it sends so that the receiver can verify it', async () => {
    const { run, sent } = harness();
    await run([record('a1', 'a')]);
    const request = sent[0]?.request;
    expect(request).toBeDefined();
    if (request !== undefined) expect(() => new Webhook(secret).verify(request.body, request.headers)).not.toThrow();
  });

  it('processes groups concurrently', async () => {
    let releaseA: () => void = () => undefined;
    const aMayFinish = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const { ports } = harness();
    const concurrent: DeliveryPorts = {
      ...ports,
      send: async (url, request) => {
        // a1 waits until b1 has been sent: only concurrent groups let this batch finish.
        if (request.headers['webhook-id'] === 'a1') await aMayFinish;
        if (request.headers['webhook-id'] === 'b1') releaseA();
        return ports.send(url, request);
      },
    };
    const plan = await processBatch([record('a1', 'a'), record('b1', 'b')], concurrent, policy, () => undefined, plentyOfTime);
    expect(plan.failedMessageIds).toEqual([]);
  });
});

describe('processBatch: the automatic pause', () => {
  const autoPausing: RetryPolicy = { ...policy, maxDeliveryAttempts: 2, autoPauseAfterSeconds: 3600 };
  const hoursAgo = (hours: number): string => new Date(Date.now() - hours * 3_600_000).toISOString();
  /** The key's failure streak, as if it had begun `hours` ago. */
  const failingFor = (store: InMemoryDeliveryStore, key: string, hours: number): void => {
    const state = store.keys.get(key);
    if (state === undefined) throw new Error(`no head on ${key}`);
    state.failingSince = hoursAgo(hours);
  };

  it('pauses the subscription instead of giving up a head whose key has failed that long, holds the group and gives up nothing', async () => {
    let isEndpointUp = false;
    const { store, sent, deadLetters, paused, run } = harness((eventId) => ({ kind: AttemptResultKind.response, statusCode: isEndpointUp || eventId === 'never' ? 204 : 503 }));
    const batch = [record('e1', 'k'), record('e2', 'k')];
    const first = await run(batch, plentyOfTime, autoPausing);
    expect(first.outcomes.get('e1')?.kind).toBe(OutcomeKind.retryLater);
    expect(store.keys.get('k')?.failingSince).toBeDefined();
    failingFor(store, 'k', 2);

    const second = await run(batch, plentyOfTime, autoPausing);
    const outcome = second.outcomes.get('e1');
    expect(outcome).toMatchObject({ kind: OutcomeKind.paused, subscriptionId: 'k', attempts: 2, isNewPause: true });
    expect(paused.get('k')?.reason).toMatch(/^auto: failing since .+; 2 of 2 attempts failed; last: HTTP 503$/);
    expect(second.failedMessageIds).toEqual(['e1', 'e2']);
    expect(second.visibilityChanges).toEqual([
      { messageId: 'e1', receiptHandle: 'rh-e1', timeoutSeconds: policy.visibilityCeilingSeconds },
      { messageId: 'e2', receiptHandle: 'rh-e2', timeoutSeconds: 0 },
    ]);
    expect(second.groups[0]?.head).toMatchObject({ state: HeadState.held, hold: { subscriptionId: 'k', receiptHandle: 'rh-e1' } });
    expect(deadLetters).toEqual([]);

    // While paused: held at once, nothing attempted.
    const attemptsBefore = sent.length;
    const third = await run(batch, plentyOfTime, autoPausing);
    expect(third.groups[0]?.head.state).toBe(HeadState.held);
    expect(sent).toHaveLength(attemptsBefore);

    // Resumed with the endpoint fixed: the head has a new round, and everything goes in order.
    paused.delete('k');
    isEndpointUp = true;
    const fourth = await run(batch, plentyOfTime, autoPausing);
    expect(fourth.failedMessageIds).toEqual([]);
    expect(sent.slice(attemptsBefore).map(({ eventId, sequence }) => [eventId, sequence])).toEqual([['e1', 1], ['e2', 2]]);
    expect(store.events.get('e1')).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(store.keys.get('k')?.failingSince).toBeUndefined();
    expect(deadLetters).toEqual([]);
  });

  it('pauses again after the new round fails too, still giving nothing up', async () => {
    const { store, deadLetters, paused, run } = harness(() => ({ kind: AttemptResultKind.response, statusCode: 500 }));
    const batch = [record('e1', 'k')];
    await run(batch, plentyOfTime, autoPausing);
    failingFor(store, 'k', 2);
    await run(batch, plentyOfTime, autoPausing);
    expect(paused.has('k')).toBe(true);
    paused.delete('k');
    const outcomes = [];
    for (let receive = 0; receive < 3; receive += 1) outcomes.push((await run(batch, plentyOfTime, autoPausing)).outcomes.get('e1')?.kind);
    expect(outcomes).toEqual([OutcomeKind.retryLater, OutcomeKind.paused, undefined]);
    expect(store.keys.get('k')?.headAttempts).toBe(4);
    expect(deadLetters).toEqual([]);
  });

  it('gives the head up as before when its key has failed for less than AUTO_PAUSE_AFTER_SECONDS', async () => {
    const { store, deadLetters, paused, run } = harness(() => ({ kind: AttemptResultKind.response, statusCode: 500 }));
    const batch = [record('e1', 'k')];
    await run(batch, plentyOfTime, autoPausing);
    failingFor(store, 'k', 0.5);
    const plan = await run(batch, plentyOfTime, autoPausing);
    expect(plan.outcomes.get('e1')?.kind).toBe(OutcomeKind.deadLettered);
    expect(deadLetters.map((letter) => letter.queued.event.event_id)).toEqual(['e1']);
    expect(paused.size).toBe(0);
  });

  it('counts the streak across heads given up, and a delivery ends it: the next failing head is given up, not paused', async () => {
    const onceOnly: RetryPolicy = { ...autoPausing, maxDeliveryAttempts: 1 };
    const { store, deadLetters, paused, run } = harness((eventId) => ({ kind: AttemptResultKind.response, statusCode: eventId === 'ok' ? 204 : 500 }));
    // A head given up (its only attempt) starts the streak; the next head's exhaustion measures it.
    await run([record('e1', 'k')], plentyOfTime, onceOnly);
    expect(store.keys.get('k')?.failingSince).toBeDefined();
    failingFor(store, 'k', 2);
    // Delivered, then failing in the same receive: the delivery ended the streak, so e2 is given up.
    const plan = await run([record('ok', 'k'), record('e2', 'k')], plentyOfTime, onceOnly);
    expect(plan.outcomes.get('ok')?.kind).toBe(OutcomeKind.delivered);
    expect(plan.outcomes.get('e2')?.kind).toBe(OutcomeKind.deadLettered);
    expect(deadLetters.map((letter) => letter.queued.event.event_id)).toEqual(['e1', 'e2']);
    expect(paused.size).toBe(0);
  });

  it('does not count a streak that a delivery just before it in the same receive ended, while its record is still landing', async () => {
    const onceOnly: RetryPolicy = { ...autoPausing, maxDeliveryAttempts: 1 };
    const { store, deadLetters, paused, run } = harness((eventId) => ({ kind: AttemptResultKind.response, statusCode: eventId === 'ok' ? 204 : 500 }));
    await run([record('e1', 'k')], plentyOfTime, onceOnly);
    failingFor(store, 'k', 2);
    // The end of the streak lands late, as a write can: after the next head has begun.
    const endStreak = store.recordRecovered;
    Object.assign(store, { recordRecovered: async (input: Parameters<typeof endStreak>[0]) => new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => endStreak(input)) });
    // A redriven dead letter goes alone, so the head after it begins while its delivery is recorded.
    const redriven: ConsumerRecord = { ...record('ok', 'k'), body: JSON.stringify({ ...queued('ok', 'k'), redrive: { redriven_at: hoursAgo(0.01) } }) };
    const plan = await run([redriven, record('e2', 'k')], plentyOfTime, onceOnly);
    expect(plan.outcomes.get('ok')?.kind).toBe(OutcomeKind.delivered);
    expect(plan.outcomes.get('e2')?.kind).toBe(OutcomeKind.deadLettered);
    expect(deadLetters.map((letter) => letter.queued.event.event_id)).toEqual(['e1', 'e2']);
    expect(paused.size).toBe(0);
  });

  it('finishes a give-up that a crash interrupted as a give-up, even once the key has failed long enough for a pause', async () => {
    const { store, ports, counted, deadLetters, paused } = harness(() => ({ kind: AttemptResultKind.response, statusCode: 500 }));
    const batch = [record('e1', 'k')];
    const crashing: DeliveryPorts = {
      ...ports,
      countDeadLetter: async () => {
        throw new Error('the process died while counting the dead letter');
      },
    };
    const crashed = await processBatch(batch, crashing, { ...autoPausing, maxDeliveryAttempts: 1 }, () => undefined, plentyOfTime);
    expect(crashed.failedMessageIds).toEqual(['e1']);
    // The message comes back once the key has been failing for hours.
    failingFor(store, 'k', 2);
    const plan = await processBatch(batch, ports, { ...autoPausing, maxDeliveryAttempts: 1 }, () => undefined, plentyOfTime);
    expect(plan.outcomes.get('e1')?.kind).toBe(OutcomeKind.deadLettered);
    expect(deadLetters.map((letter) => letter.queued.event.event_id)).toEqual(['e1']);
    expect(counted).toHaveLength(1);
    expect(paused.size).toBe(0);
  });

  it('counts the streak of the key itself only: another key’s delivery just before it in a partition’s group ends nothing', async () => {
    const onceOnly: RetryPolicy = { ...autoPausing, maxDeliveryAttempts: 1 };
    const { store, deadLetters, paused, run } = harness((eventId) => ({ kind: AttemptResultKind.response, statusCode: eventId === 'x1' ? 204 : 500 }));
    const inPartition = (recorded: ConsumerRecord): ConsumerRecord => ({ ...recorded, messageGroupId: 'partition-0' });
    await run([inPartition(record('e1', 'k'))], plentyOfTime, onceOnly);
    failingFor(store, 'k', 2);
    const plan = await run([inPartition(record('x1', 'kx')), inPartition(record('e2', 'k'))], plentyOfTime, onceOnly);
    expect(plan.outcomes.get('x1')?.kind).toBe(OutcomeKind.delivered);
    expect(plan.outcomes.get('e2')).toMatchObject({ kind: OutcomeKind.paused, subscriptionId: 'k' });
    expect(deadLetters.map((letter) => letter.queued.event.event_id)).toEqual(['e1']);
    expect([...paused.keys()]).toEqual(['k']);
  });

  it('begins a new streak when the key’s last failure is older than the longest retry delay and some slack: it was not being tried', async () => {
    const { store, deadLetters, paused, run } = harness(() => ({ kind: AttemptResultKind.response, statusCode: 500 }));
    const batch = [record('e1', 'k')];
    await run(batch, plentyOfTime, autoPausing);
    const state = store.keys.get('k');
    if (state === undefined) throw new Error('no head on k');
    // Failing since a week ago, its last failure three days ago: idle since, or held.
    state.failingSince = hoursAgo(24 * 7);
    state.failedAt = hoursAgo(24 * 3);
    const before = Date.now();
    const plan = await run(batch, plentyOfTime, autoPausing);
    expect(plan.outcomes.get('e1')?.kind).toBe(OutcomeKind.deadLettered);
    expect(deadLetters).toHaveLength(1);
    expect(paused.size).toBe(0);
    // The streak begins again with this failure.
    expect(Date.parse(store.keys.get('k')?.failingSince ?? '')).toBeGreaterThanOrEqual(before);
  });

  it('ends, at a run’s next delivery, the streak that a give-up inside the run began', async () => {
    const onceOnly: RetryPolicy = { ...autoPausing, maxDeliveryAttempts: 1 };
    const { store, deadLetters, run } = harness((eventId) => ({ kind: AttemptResultKind.response, statusCode: eventId === 'm1' ? 500 : 204 }));
    // One receive of three events of one key: a run, one POST each.
    const plan = await run([record('m0', 'k'), record('m1', 'k'), record('m2', 'k')], plentyOfTime, onceOnly);
    expect(['m0', 'm1', 'm2'].map((id) => plan.outcomes.get(id)?.kind)).toEqual([OutcomeKind.delivered, OutcomeKind.deadLettered, OutcomeKind.delivered]);
    expect(deadLetters.map((letter) => letter.queued.event.event_id)).toEqual(['m1']);
    expect(store.keys.get('k')?.failingSince).toBeUndefined();
  });

  it('keeps a pause that came first, an operator’s, with its reason, and makes no second one', async () => {
    const operators = { pausedAt: hoursAgo(0.1), reason: 'maintenance' };
    let pausedMeanwhile: (() => void) | undefined;
    const { store, paused, run } = harness(() => {
      // An operator pauses the subscription after this batch read it, while its last attempt is under way.
      pausedMeanwhile?.();
      return { kind: AttemptResultKind.response, statusCode: 500 };
    });
    const batch = [record('e1', 'k')];
    await run(batch, plentyOfTime, autoPausing);
    failingFor(store, 'k', 2);
    pausedMeanwhile = () => paused.set('k', operators);
    const plan = await run(batch, plentyOfTime, autoPausing);
    expect(plan.outcomes.get('e1')).toMatchObject({ kind: OutcomeKind.paused, isNewPause: false, pause: operators });
    expect(plan.groups[0]?.head).toMatchObject({ state: HeadState.held, hold: { reason: 'maintenance', pausedAt: operators.pausedAt } });
    expect(paused.get('k')).toBe(operators);
  });
});

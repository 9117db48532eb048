import { describe, expect, it } from 'vitest';
import { redriveDeduplicationId, type DeadLetterPlace, type StoredDeadLetter } from '../../../lambda/core/dead-letter.js';
import { SendFailureKind, type OutgoingMessage, type SendFailure } from '../../../lambda/core/enqueue-plan.js';
import { queuedEventSchema, type QueuedEvent } from '../../../lambda/core/event.js';
import { checkRedrive, MAX_REDRIVEN_PER_STEP, redriveStep, type RedrivePorts } from '../../../lambda/core/redrive.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';
import { InMemoryDeadLetterStore } from '../../support/in-memory-ports.js';

const at = new Date('2026-12-02T13:00:00.000Z');

function queued(eventId: string, subscription: string, key = subscription): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: subscription, type: 'x', payload_json: JSON.stringify({ eventId }) },
    ordering_key: key,
    message_group_id: messageGroupIdFor(key, undefined),
    accepted_at: '2026-12-02T12:00:00.000Z',
  };
}

async function storeWith(letters: readonly { eventId: string; subscription: string; key?: string; sequence: number | undefined }[]) {
  const store = new InMemoryDeadLetterStore();
  for (const letter of letters) {
    await store.put({ queued: queued(letter.eventId, letter.subscription, letter.key), sequence: letter.sequence, attempts: 5, reason: 'HTTP 500', deadLetteredAt: '2026-12-02T12:30:00.000Z' });
  }
  return store;
}

/** The delivery queue as SendMessageBatch sees it: entries taken in call order, some refused. */
/** How the harness's SQS refuses a message: `true` is a transient refusal. */
type Refuse = (message: OutgoingMessage) => boolean | SendFailure;

const placeKey = (place: DeadLetterPlace) => `${place.messageGroupId} ${place.subscriptionId} ${place.position}`;

function harness(store: InMemoryDeadLetterStore, options: { refuse?: Refuse; hasTime?: () => boolean } = {}) {
  const enqueued: OutgoingMessage[] = [];
  const calls: OutgoingMessage[][] = [];
  const moved: { eventId: string; from: string; to: string }[] = [];
  /** The places counted in the lag, as the group store keeps them: once per place. */
  const counted = new Set(store.all('s').map((letter) => placeKey(letter)));
  const ports: RedrivePorts = {
    store,
    enqueue: async (entries) => {
      calls.push([...entries]);
      const refused = new Map<number, SendFailure>();
      for (const entry of entries) {
        const refusal = options.refuse?.(entry) ?? false;
        if (refusal === false) enqueued.push(entry);
        else refused.set(entry.index, refusal === true ? { kind: SendFailureKind.transient, code: 'ServiceUnavailable' } : refusal);
      }
      return { refused, sequenceNumbers: new Map() };
    },
    recordRedriven: async ({ letter, toGroup }) => {
      moved.push({ eventId: letter.queued.event.event_id, from: letter.messageGroupId, to: toGroup });
    },
    countDeadLetter: async (place) => {
      counted.add(placeKey(place));
    },
    uncountDeadLetter: async (place) => {
      counted.delete(placeKey(place));
    },
    groupOf: (orderingKey) => messageGroupIdFor(orderingKey, undefined),
    now: () => at,
    hasTime: options.hasTime ?? (() => true),
  };
  const bodies = () => enqueued.map((message) => queuedEventSchema.parse(JSON.parse(message.body)));
  return { ports, enqueued, calls, moved, bodies, counted };
}

describe('redriveStep', () => {
  it('sends a subscription’s dead letters in sequence order per key, with their ids and sequences, marked as redrives', async () => {
    const store = await storeWith([
      { eventId: 'a4', subscription: 's', sequence: 4 },
      { eventId: 'a2', subscription: 's', sequence: 2 },
      { eventId: 'a11', subscription: 's', sequence: 11 },
      { eventId: 'b1', subscription: 'other', sequence: 1 },
    ]);
    const { ports, bodies, moved, calls } = harness(store);
    const step = await redriveStep('s', ports);
    expect(step).toEqual({ redriven: [{ event_id: 'a2', sequence: 2 }, { event_id: 'a4', sequence: 4 }, { event_id: 'a11', sequence: 11 }], remaining: 0, isDone: true, refused: [] });
    expect(bodies().map((body) => [body.event.event_id, body.redrive])).toEqual([
      ['a2', { sequence: 2, redriven_at: at.toISOString(), give_up: 1 }],
      ['a4', { sequence: 4, redriven_at: at.toISOString(), give_up: 1 }],
      ['a11', { sequence: 11, redriven_at: at.toISOString(), give_up: 1 }],
    ]);
    // One event of a key per SendMessageBatch, as ingest does: a refused entry can never be overtaken.
    expect(calls.every((call) => new Set(call.map((message) => message.orderingKey)).size === call.length)).toBe(true);
    expect(store.all('s')).toEqual([]);
    expect(store.all('other')).toHaveLength(1);
    expect(moved.map((m) => m.eventId)).toEqual(['a2', 'a4', 'a11']);
  });

  it('redrives a parked event\'s copy given up as a redrive alone, without the mark of the park (which ended for it)', async () => {
    const store = new InMemoryDeadLetterStore();
    await store.put({ queued: { ...queued('p1', 's'), parked: { place: '0'.repeat(40) } }, sequence: 3, attempts: 5, reason: 'HTTP 500', deadLetteredAt: '2026-12-02T12:30:00.000Z' });
    const { ports, bodies } = harness(store);
    await redriveStep('s', ports);
    expect(bodies()).toHaveLength(1);
    expect(bodies()[0]?.parked).toBeUndefined();
    expect(bodies()[0]?.redrive).toEqual({ sequence: 3, redriven_at: at.toISOString(), give_up: 1 });
  });

  it('keeps the payload whole and uses one deduplication id per dead-lettering', async () => {
    const store = await storeWith([{ eventId: 'a1', subscription: 's', sequence: 1 }]);
    const [letter] = store.all('s');
    const { ports, enqueued, bodies } = harness(store);
    await redriveStep('s', ports);
    expect(bodies()[0]?.event).toEqual(letter?.queued.event);
    expect(enqueued[0]?.deduplicationId).toBe(redriveDeduplicationId(letter as StoredDeadLetter));
    expect(redriveDeduplicationId({ ...(letter as StoredDeadLetter), deadLetteredAt: '2026-12-02T12:31:00.000Z' })).not.toBe(enqueued[0]?.deduplicationId);
    expect(enqueued[0]?.deduplicationId.length).toBeLessThanOrEqual(128);
  });

  it('redrives any number of dead letters of one key in bounded steps, in order, never stuck', async () => {
    const count = MAX_REDRIVEN_PER_STEP * 2 + 37;
    const store = await storeWith(Array.from({ length: count }, (_, i) => ({ eventId: `e${count - i}`, subscription: 's', sequence: count - i })));
    const { ports, bodies } = harness(store);
    const steps = [];
    for (let step = 0; step < 5; step += 1) {
      const result = await redriveStep('s', ports);
      steps.push([result.redriven.length, result.isDone]);
      if (result.isDone) break;
    }
    expect(steps).toEqual([
      [MAX_REDRIVEN_PER_STEP, false],
      [MAX_REDRIVEN_PER_STEP, false],
      [37, true],
    ]);
    expect(bodies().map((body) => body.redrive?.sequence)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  });

  it('holds a key back after SQS refused one of its dead letters, lets other keys go, and finishes in order on the next step', async () => {
    const store = await storeWith([
      { eventId: 'a1', subscription: 's', key: 'k1', sequence: 1 },
      { eventId: 'a2', subscription: 's', key: 'k1', sequence: 2 },
      { eventId: 'a3', subscription: 's', key: 'k1', sequence: 3 },
      { eventId: 'b1', subscription: 's', key: 'k2', sequence: 1 },
    ]);
    let isRefusing = true;
    const { ports, bodies, counted } = harness(store, { refuse: (message) => isRefusing && JSON.parse(message.body).event.event_id === 'a2' });
    const first = await redriveStep('s', ports);
    expect(first.redriven.map((r) => r.event_id).sort()).toEqual(['a1', 'b1']);
    expect(first).toMatchObject({ remaining: 2, isDone: false, refused: [] });
    // What was not sent stays listed, and counted: the count follows the list.
    expect([...counted].sort()).toEqual(store.all('s').map(placeKey).sort());
    isRefusing = false;
    const second = await redriveStep('s', ports);
    expect(second).toMatchObject({ redriven: [{ event_id: 'a2', sequence: 2 }, { event_id: 'a3', sequence: 3 }], remaining: 0, isDone: true });
    expect(bodies().filter((body) => body.ordering_key === 'k1').map((body) => body.event.event_id)).toEqual(['a1', 'a2', 'a3']);
  });

  it('reports a dead letter SQS refuses permanently, keeps it and its key\'s later ones, and ends the step', async () => {
    const store = await storeWith([
      { eventId: 'a1', subscription: 's', key: 'k1', sequence: 1 },
      { eventId: 'a2', subscription: 's', key: 'k1', sequence: 2 },
      { eventId: 'b1', subscription: 's', key: 'k2', sequence: 1 },
    ]);
    const refusal: SendFailure = { kind: SendFailureKind.messageRefused, code: 'InvalidMessageContents' };
    const { ports } = harness(store, { refuse: (message) => (JSON.parse(message.body).event.event_id === 'a1' ? refusal : false) });
    const step = await redriveStep('s', ports);
    expect(step.refused).toEqual([{ event_id: 'a1', code: 'InvalidMessageContents' }]);
    expect(step.redriven).toEqual([{ event_id: 'b1', sequence: 1 }]);
    expect(step.isDone).toBe(false);
    expect(store.all('s').map((letter) => letter.queued.event.event_id).sort()).toEqual(['a1', 'a2']);
  });

  it('writes the body with the SQS encoding, so that an emoji or U+FFFF is taken', async () => {
    const store = new InMemoryDeadLetterStore();
    const base = queued('e1', 's');
    await store.put({ queued: { ...base, event: { ...base.event, payload_json: JSON.stringify({ text: '😀\uFFFF' }) } }, sequence: 1, attempts: 1, reason: 'HTTP 500', deadLetteredAt: '2026-12-02T12:00:00.000Z' });
    const { ports, enqueued, bodies } = harness(store);
    await redriveStep('s', ports);
    expect(enqueued[0]?.body).toMatch(/^[\t\n\r\u0020-\ud7ff\ue000-\ufffd]*$/);
    expect(bodies()[0]?.event.payload_json).toBe(JSON.stringify({ text: '😀\uFFFF' }));
  });

  it('leaves a dead letter that was given up again after it was read, and counts it once', async () => {
    const store = await storeWith([{ eventId: 'a1', subscription: 's', sequence: 1 }]);
    const { ports, moved, counted } = harness(store);
    const racing: RedrivePorts = {
      ...ports,
      enqueue: async (entries) => {
        const refused = await ports.enqueue(entries);
        // Between the send and the removal, the consumer gives the event up again and writes it back.
        const [letter] = store.all('s');
        await store.put({ ...(letter as StoredDeadLetter), deadLetteredAt: '2026-12-02T12:59:00.000Z', reason: 'HTTP 503' });
        return refused;
      },
    };
    const step = await redriveStep('s', racing);
    expect(step.redriven).toEqual([]);
    expect(store.all('s').map((letter) => letter.reason)).toEqual(['HTTP 503']);
    expect(moved).toEqual([]);
    // Uncounted before the removal was refused, and counted again: the count follows the list.
    expect([...counted]).toEqual(store.all('s').map(placeKey));
  });

  it('sends a dead letter again with the same deduplication id when a crash fell between sending and removing', async () => {
    const store = await storeWith([{ eventId: 'a1', subscription: 's', sequence: 1 }]);
    const { ports, enqueued, counted } = harness(store);
    const crashing: RedrivePorts = {
      ...ports,
      store: {
        ...store,
        remove: async () => {
          throw new Error('crash');
        },
      },
    };
    await expect(redriveStep('s', crashing)).rejects.toThrow('crash');
    // Uncounted, still listed: one short until the step is repeated, never a count of nothing.
    expect(counted.size).toBe(0);
    const step = await redriveStep('s', ports);
    expect(step).toMatchObject({ redriven: [{ event_id: 'a1', sequence: 1 }], isDone: true });
    expect(enqueued.map((message) => message.deduplicationId)).toEqual([enqueued[0]?.deduplicationId, enqueued[0]?.deduplicationId]);
    expect(counted.size).toBe(0);
    expect(store.all('s')).toEqual([]);
  });

  it('sends a dead letter without a sequence after its key’s numbered ones, without a sequence', async () => {
    const store = await storeWith([
      { eventId: 'late', subscription: 's', sequence: undefined },
      { eventId: 'a3', subscription: 's', sequence: 3 },
    ]);
    const { ports, bodies } = harness(store);
    const step = await redriveStep('s', ports);
    expect(step.redriven).toEqual([
      { event_id: 'a3', sequence: 3 },
      { event_id: 'late', sequence: null },
    ]);
    expect(bodies()[1]?.redrive).toEqual({ redriven_at: at.toISOString(), give_up: 1 });
  });

  it('numbers each redrive by the give-up it comes from: one more than its copy’s, none for a copy redriven before the numbers', async () => {
    const store = new InMemoryDeadLetterStore();
    const letter = (eventId: string, key: string, redrive: QueuedEvent['redrive']) =>
      store.put({ queued: { ...queued(eventId, 's', key), redrive }, sequence: 1, attempts: 5, reason: 'HTTP 500', deadLetteredAt: '2026-12-02T12:30:00.000Z' });
    await letter('again', 'k1', { sequence: 1, redriven_at: '2026-12-02T12:20:00.000Z', give_up: 2 });
    await letter('legacy', 'k2', { sequence: 1, redriven_at: '2026-12-02T12:20:00.000Z' });
    const { ports, bodies } = harness(store);
    await redriveStep('s', ports);
    expect(new Map(bodies().map((body) => [body.event.event_id, body.redrive]))).toEqual(
      new Map([
        ['again', { sequence: 1, redriven_at: at.toISOString(), give_up: 3 }],
        ['legacy', { sequence: 1, redriven_at: at.toISOString() }],
      ]),
    );
  });

  it('stops when its time is up, and says what remains', async () => {
    const store = await storeWith([1, 2, 3].map((n) => ({ eventId: `a${n}`, subscription: 's', sequence: n })));
    const { ports, enqueued } = harness(store, { hasTime: () => false });
    expect(await redriveStep('s', ports)).toEqual({ redriven: [], remaining: 3, isDone: false, refused: [] });
    expect(enqueued).toEqual([]);
  });
});

describe('checkRedrive', () => {
  it.each([
    { isPaused: false, expected: undefined },
    { isPaused: true, expected: { code: 'ingest_paused', message: 'Ingest is paused for a routing switch; redrive after it resumes.' } },
  ])('decides $expected when isPaused is $isPaused', ({ isPaused, expected }) => {
    expect(checkRedrive({ isPaused })).toEqual(expected);
  });
});

import { describe, expect, it } from 'vitest';
import type { DeliveredLookup } from '../../../lambda/core/delivery.js';
import { SendFailureKind, type OutgoingMessage, type SendBatch } from '../../../lambda/core/enqueue-plan.js';
import { readQueuedEvent, type QueuedEvent } from '../../../lambda/core/event.js';
import type { KeptEvent, RunNumbers } from '../../../lambda/core/kept-event.js';
import { REPLAY_PAGE_SIZE, requestReplay, safePrefixLength, stepReplaysUnderWay, type ReplayRecord, type ReplayRequestPorts, type ReplayState, type ReplayStateStore } from '../../../lambda/core/replay.js';

const SINCE = '2026-12-04T10:00:00.000Z';
const UNTIL = '2026-12-04T11:00:00.000Z';
const NOW = new Date('2026-12-04T12:00:00.000Z');

/** A kept event of `key` accepted `second` seconds into the window, at place `place` of its group. */
function kept(key: string, n: number, second: number, place = n): KeptEvent {
  const queued: QueuedEvent = {
    version: 1,
    event: { event_id: `${key}-${n}`, tenant_id: 't', subscription_id: 'sub', type: 'x', payload_json: JSON.stringify({ n }) },
    ordering_key: key,
    message_group_id: `g-${key}`,
    accepted_at: new Date(Date.parse(SINCE) + second * 1000).toISOString(),
  };
  return { queued, queuePosition: `g-${key}/${String(place).padStart(40, '0')}` };
}

/** Replay state held as the subscription's item holds it. */
function stateStore(): ReplayRequestPorts['states'] & Pick<ReplayStateStore, 'listUnderWay'> & { current: () => ReplayState | undefined; last: () => ReplayState | undefined } {
  let replay: ReplayState | undefined;
  let last: ReplayState | undefined;
  return {
    current: () => replay,
    last: () => last,
    start: async (_id, state) => {
      if (replay !== undefined) return { state: replay, isNew: false };
      replay = state;
      return { state, isNew: true };
    },
    claim: async ({ startedAt, now, leaseUntil }) => {
      if (replay === undefined || (startedAt !== undefined && replay.startedAt !== startedAt) || (replay.leaseUntil !== undefined && replay.leaseUntil >= now)) return undefined;
      replay = { ...replay, leaseUntil };
      return replay;
    },
    listUnderWay: async () => (replay === undefined ? [] : ['sub']),
    save: async (_id, state) => {
      if (replay?.startedAt === state.startedAt) replay = state;
    },
    finish: async (_id, state) => {
      if (replay?.startedAt !== state.startedAt) return;
      replay = undefined;
      last = state;
    },
  };
}

function setup(input: { events: KeptEvent[]; records: Map<string, ReplayRecord>; runs?: RunNumbers[]; deliveredThrough?: Record<string, number>; refuse?: (message: OutgoingMessage) => boolean; pagesPerStep?: number }) {
  const states = stateStore();
  const sent: { eventId: string; sequence: number | undefined; isReplay: boolean; deduplicationId: string; group: string }[] = [];
  const counted: string[] = [];
  let pages = 0;
  const sorted = [...input.events].sort((a, b) => `${a.queued.accepted_at}#${a.queuePosition}`.localeCompare(`${b.queued.accepted_at}#${b.queuePosition}`));
  const enqueue: SendBatch = async (entries) => {
    const refused = entries.filter((entry) => input.refuse?.(entry) ?? false);
    for (const entry of entries.filter((e) => !refused.includes(e))) {
      const read = readQueuedEvent(entry.body);
      if ('reason' in read) throw new Error(read.reason);
      sent.push({ eventId: read.queued.event.event_id, sequence: read.queued.redrive?.sequence, isReplay: read.queued.redrive?.replay === true, deduplicationId: entry.deduplicationId, group: entry.messageGroupId });
    }
    return { refused: new Map(refused.map((entry) => [entry.index, { kind: SendFailureKind.messageRefused, code: 'InvalidParameterValue' }])), sequenceNumbers: new Map() };
  };
  const ports: ReplayRequestPorts & { readonly states: ReturnType<typeof stateStore> } = {
    states,
    kept: {
      readWindow: async ({ after, limit }) => {
        pages += 1;
        const from = after === undefined ? 0 : Number(after);
        const events = sorted.slice(from, from + limit).map((event, index) => ({ ...event, cursor: String(from + index + 1) }));
        return { events, nextAfter: from + limit < sorted.length ? String(from + limit) : undefined };
      },
      findNumbers: async ({ orderingKey, queuePosition }) =>
        (input.runs ?? []).filter((run) => run.orderingKey === orderingKey && run.firstPosition <= queuePosition).sort((a, b) => b.firstPosition.localeCompare(a.firstPosition))[0],
    },
    readRecords: async (ids) => new Map(ids.flatMap((id) => (input.records.has(id) ? [[id, input.records.get(id) as ReplayRecord] as const] : []))),
    findDelivered: async (): Promise<DeliveredLookup> => (key) => {
      const sequence = input.deliveredThrough?.[key];
      return sequence === undefined ? undefined : { messageGroupId: `g-${key}`, position: '', sequence };
    },
    enqueue,
    recordReplayed: async ({ toGroup, events }) => {
      counted.push(`${toGroup} ${events}`);
    },
    groupOf: (key) => `now-${key}`,
    now: () => NOW,
    hasTime: () => pages < (input.pagesPerStep ?? Number.POSITIVE_INFINITY),
  };
  return { ports, states, sent, counted, resetPages: () => (pages = 0) };
}

const delivered = (sequence: number, place?: KeptEvent): ReplayRecord => ({ status: 'delivered', sequence, queuePosition: place?.queuePosition });

describe('requestReplay', () => {
  it('sends every delivered event of the window again, each key in the order of its numbers, with its number, as a replay, into its group of now, counted there', async () => {
    // Key a's events 2 and 3 were accepted by concurrent requests, 3 first in the queue.
    const events = [kept('a', 1, 1), kept('b', 1, 2), kept('a', 3, 3, 2), kept('a', 2, 3, 3)];
    const records = new Map([
      ['a-1', delivered(1)],
      ['b-1', delivered(7)],
      ['a-3', delivered(2)],
      ['a-2', delivered(3)],
    ]);
    const { ports, sent, counted, states } = setup({ events, records });
    const outcome = await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports);
    expect(outcome).toMatchObject({ kind: 'stepped', isDone: true, refused: [], state: { replayed: 4, deadLettered: 0, notDelivered: 0, reached: UNTIL } });
    // Keys are sent side by side (one event of a key per SendMessageBatch); each key's in order.
    expect(sent.filter((s) => s.group === 'now-a').map((s) => [s.eventId, s.sequence, s.isReplay])).toEqual([
      ['a-1', 1, true],
      ['a-3', 2, true],
      ['a-2', 3, true],
    ]);
    expect(sent.filter((s) => s.group === 'now-b').map((s) => [s.eventId, s.sequence, s.isReplay])).toEqual([['b-1', 7, true]]);
    expect(counted.sort()).toEqual(['now-a 3', 'now-b 1']);
    expect(new Set(sent.map((s) => s.deduplicationId)).size).toBe(4);
    expect(states.current()).toBeUndefined();
    expect(states.last()).toMatchObject({ replayed: 4, startedAt: NOW.toISOString() });
  });

  it('sends a kept copy under the key its record names: a resend’s copy kept under a new ordering of an event delivered under the old', async () => {
    // a-1 went out under key a; its first request failed after its send, and the resend, after a
    // change of ordering, kept its copy (the one the record names) under the resource key r.
    const copy = kept('r', 1, 1);
    const resent: KeptEvent = { ...copy, queued: { ...copy.queued, event: { ...copy.queued.event, event_id: 'a-1' } } };
    const records = new Map<string, ReplayRecord>([['a-1', { ...delivered(1, resent), orderingKey: 'a' }]]);
    const { ports, sent } = setup({ events: [kept('a', 1, 1, 9), resent], records });
    await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports);
    expect(sent.map((s) => [s.eventId, s.sequence, s.group])).toEqual([['a-1', 1, 'now-a']]);
  });

  it('marks each copy with its replay’s start and the number of its event’s last give-up, for the consumer to settle it by (not by clocks)', async () => {
    const events = [kept('a', 1, 1), kept('a', 2, 2)];
    const records = new Map<string, ReplayRecord>([
      ['a-1', delivered(1)],
      ['a-2', { ...delivered(2), giveUp: 3 }],
    ]);
    const bodies: QueuedEvent[] = [];
    const { ports } = setup({ events, records });
    const outcome = await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, {
      ...ports,
      enqueue: async (entries) => {
        for (const entry of entries) {
          const read = readQueuedEvent(entry.body);
          if ('queued' in read) bodies.push(read.queued);
        }
        return ports.enqueue(entries);
      },
    });
    expect(outcome).toMatchObject({ kind: 'stepped', isDone: true });
    expect(bodies.map((body) => [body.event.event_id, body.redrive?.replay_id, body.redrive?.give_up])).toEqual([
      ['a-1', NOW.toISOString(), 0],
      ['a-2', NOW.toISOString(), 3],
    ]);
  });

  it('numbers a run’s members from its kept numbers when the key’s deliveries reach them, and leaves copies, dead letters and what is not delivered yet', async () => {
    const events = [kept('a', 1, 1), kept('a', 2, 1, 2), kept('a', 3, 1, 3), kept('a', 4, 2, 4), kept('a', 5, 3, 9), kept('a', 6, 4, 10)];
    const records = new Map<string, ReplayRecord>([
      ['a-1', { status: 'accepted', sequence: undefined, queuePosition: events[0]?.queuePosition }],
      ['a-2', { status: 'accepted', sequence: undefined, queuePosition: events[1]?.queuePosition }],
      ['a-3', { status: 'dead_lettered', sequence: 3, queuePosition: events[2]?.queuePosition }],
      // Kept at place 4, recorded at another: a resend's copy, never delivered.
      ['a-4', { status: 'delivered', sequence: 4, queuePosition: 'g-a/elsewhere' }],
      // A run whose numbers reach past the key's deliveries: not delivered yet.
      ['a-5', { status: 'accepted', sequence: undefined, queuePosition: events[4]?.queuePosition }],
    ]);
    const runs: RunNumbers[] = [
      { orderingKey: 'a', firstPosition: events[0]?.queuePosition ?? '', firstSequence: 1, eventIds: ['a-1', 'a-2', 'a-3'] },
      { orderingKey: 'a', firstPosition: events[4]?.queuePosition ?? '', firstSequence: 5, eventIds: ['a-5'] },
    ];
    const { ports, sent } = setup({ events, records, runs, deliveredThrough: { a: 4 } });
    const outcome = await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports);
    expect(sent.map((s) => [s.eventId, s.sequence])).toEqual([
      ['a-1', 1],
      ['a-2', 2],
    ]);
    // a-6 has no record at all: not delivered.
    expect(outcome).toMatchObject({ kind: 'stepped', isDone: true, state: { replayed: 2, deadLettered: 1, notDelivered: 2 } });
  });

  it('goes on step after step from where the last one saved, each event sent once, in order', async () => {
    // One a second: a page of ten spans ten seconds, and an event is sent once what was accepted up to 30 s after it was read.
    const events = Array.from({ length: REPLAY_PAGE_SIZE * 10 + 5 }, (_, n) => kept('a', n + 1, n));
    const records = new Map(events.map((event, n) => [event.queued.event.event_id, delivered(n + 1)]));
    const { ports, sent, states, resetPages } = setup({ events, records, pagesPerStep: 5 });
    const first = await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports);
    // Five pages read, seconds 0 to 49: those up to 19 sent.
    expect(first).toMatchObject({ kind: 'stepped', isDone: false, state: { replayed: 20, after: '20', reached: kept('a', 20, 19).queued.accepted_at } });
    expect(states.current()).toMatchObject({ replayed: 20, after: '20' });
    expect(states.current()?.leaseUntil).toBeUndefined();
    // The next call names `since` alone: the replay under way, whatever its `until`.
    let steps = 1;
    for (;;) {
      resetPages();
      steps += 1;
      const next = await requestReplay('sub', { since: SINCE, until: NOW.toISOString(), isUntilGiven: false }, ports);
      if (next.kind === 'stepped' && next.isDone) break;
      expect(steps).toBeLessThan(20);
    }
    expect(states.last()).toMatchObject({ replayed: events.length, reached: UNTIL });
    expect(sent.map((s) => s.sequence)).toEqual(events.map((_, n) => n + 1));
  });

  it("holds an event back until everything accepted up to 30 s after it was read: a key's lower number accepted later is sent first", async () => {
    // Key a's number 1 was accepted 25 s after its number 2 (its request was slow to reach the queue), a page later.
    const events = [kept('a', 2, 0, 2), ...Array.from({ length: REPLAY_PAGE_SIZE - 1 }, (_, n) => kept('b', n + 1, 1 + n)), kept('a', 1, 25, 1)];
    const records = new Map<string, ReplayRecord>(events.map((event) => [event.queued.event.event_id, delivered(Number(event.queued.event.event_id.split('-')[1]))]));
    const { ports, sent } = setup({ events, records });
    expect(await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports)).toMatchObject({ isDone: true, state: { replayed: events.length } });
    expect(sent.filter((s) => s.group === 'now-a').map((s) => s.sequence)).toEqual([1, 2]);
  });

  it('answers another window with the replay under way, and a step held by another caller with the state as it stands, sending nothing', async () => {
    const events = [kept('a', 1, 1)];
    const { ports, sent, states } = setup({ events, records: new Map([['a-1', delivered(1)]]) });
    const state: ReplayState = { since: SINCE, until: UNTIL, startedAt: '2026-12-04T11:59:00.000Z', replayed: 0, deadLettered: 0, notDelivered: 0, leaseUntil: '2026-12-04T12:00:30.000Z' };
    await states.start('sub', state, { isUntilGiven: true });
    expect(await requestReplay('sub', { since: '2026-12-04T10:30:00.000Z', until: UNTIL, isUntilGiven: true }, ports)).toEqual({ kind: 'other_window', state });
    expect(await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports)).toEqual({ kind: 'busy', state });
    expect(sent).toEqual([]);
  });

  it('keeps a page it could not send whole for the next step, sending nothing after a refused event of its key, and names what SQS refused', async () => {
    const events = [kept('a', 1, 1), kept('a', 2, 2), kept('b', 1, 3)];
    const records = new Map([
      ['a-1', delivered(1)],
      ['a-2', delivered(2)],
      ['b-1', delivered(1)],
    ]);
    let isRefusing = true;
    const { ports, sent, states } = setup({ events, records, refuse: (message) => isRefusing && message.body.includes('"a-1"') });
    const outcome = await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports);
    expect(outcome).toMatchObject({ kind: 'stepped', isDone: false, refused: [{ event_id: 'a-1', code: 'InvalidParameterValue' }] });
    expect(sent.map((s) => s.eventId)).toEqual(['b-1']);
    expect(states.current()).toMatchObject({ replayed: 0 });
    expect(states.current()?.after).toBeUndefined();
    isRefusing = false;
    expect(await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports)).toMatchObject({ isDone: true, state: { replayed: 3 } });
    // b-1 again, with the same deduplication id: SQS drops it within five minutes.
    expect(sent.map((s) => s.eventId).sort()).toEqual(['a-1', 'a-2', 'b-1', 'b-1']);
    expect(sent.filter((s) => s.eventId.startsWith('a-')).map((s) => s.eventId)).toEqual(['a-1', 'a-2']);
    const [firstB, secondB] = sent.filter((s) => s.eventId === 'b-1');
    expect(firstB?.deduplicationId).toBe(secondB?.deduplicationId);
  });

  it("sends no event of a key before a lower number of its key read after it, even one accepted within 30 s of the last read", async () => {
    // Key a's number 2 was accepted at 0 s, its number 1 at 20 s (slow to reach the queue); key b's events fill the pages.
    const events = [kept('a', 2, 0, 2), kept('a', 1, 20, 1), ...Array.from({ length: 40 }, (_, n) => kept('b', n + 1, 21 + n))];
    const records = new Map<string, ReplayRecord>(events.map((event) => [event.queued.event.event_id, delivered(Number(event.queued.event.event_id.split('-')[1]))]));
    const { ports, sent } = setup({ events, records });
    expect(await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports)).toMatchObject({ isDone: true, state: { replayed: events.length } });
    expect(sent.filter((s) => s.group === 'now-a').map((s) => s.sequence)).toEqual([1, 2]);
    expect(sent.filter((s) => s.group === 'now-b').map((s) => s.sequence)).toEqual(Array.from({ length: 40 }, (_, n) => n + 1));
  });
});

describe('stepReplaysUnderWay', () => {
  it('steps each replay under way that no step holds, until it ends, without its caller', async () => {
    const events = Array.from({ length: REPLAY_PAGE_SIZE * 10 + 5 }, (_, n) => kept('a', n + 1, n));
    const records = new Map(events.map((event, n) => [event.queued.event.event_id, delivered(n + 1)]));
    const { ports, sent, states, resetPages } = setup({ events, records, pagesPerStep: 5 });
    expect(await requestReplay('sub', { since: SINCE, until: UNTIL, isUntilGiven: true }, ports)).toMatchObject({ isDone: false });
    // Held by a step (a crashed one's lease not run out): left alone.
    const held = states.current();
    if (held === undefined) throw new Error('no replay under way');
    await states.save('sub', { ...held, leaseUntil: new Date(NOW.getTime() + 1000).toISOString() });
    expect(await stepReplaysUnderWay(ports)).toEqual({ stepped: [], done: 0 });
    await states.save('sub', held);
    let runs = 0;
    for (let result = { stepped: [] as readonly string[], done: 0 }; result.done === 0; runs += 1) {
      resetPages();
      result = await stepReplaysUnderWay(ports);
      expect(result.stepped).toEqual(['sub']);
      expect(runs).toBeLessThan(20);
    }
    expect(states.current()).toBeUndefined();
    expect(sent.map((s) => s.sequence)).toEqual(events.map((_, n) => n + 1));
    expect(await stepReplaysUnderWay(ports)).toEqual({ stepped: [], done: 0 });
  });
});

describe('safePrefixLength', () => {
  const entry = (key: string, number: number | undefined, cursor: string) => ({ key, number, cursor });

  it('cuts before no lower number of a key that follows, and inside no kept message', () => {
    const entries = [entry('a', 2, 'c1'), entry('b', 1, 'c2'), entry('a', 1, 'c3'), entry('a', 3, 'c4'), entry('b', 2, 'c5'), entry('b', 3, 'c5')];
    // a's 2 before a's 1: no cut from 1 to 2; b's 2 and 3 share a kept message: no cut at 5.
    expect(safePrefixLength(entries, 10, 6)).toBe(6);
    expect(safePrefixLength(entries, 4, 4)).toBe(4);
    expect(safePrefixLength(entries, 10, 5)).toBe(4);
    expect(safePrefixLength(entries, 2, 6)).toBe(3);
    expect(safePrefixLength(entries, 10, 2)).toBe(0);
    // Events not replayed bind nothing.
    expect(safePrefixLength([entry('a', undefined, 'c1'), entry('a', 1, 'c2')], 1, 2)).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import type { OutgoingMessage, SendAnswer } from '../../../lambda/core/enqueue-plan.js';
import { readQueuedEvent, type QueuedEvent } from '../../../lambda/core/event.js';
import {
  decidePark,
  holdSecondsFor,
  isAbandonedMark,
  isDueToPark,
  isParkOpen,
  MAX_UNPARKED_PER_STEP,
  newParkId,
  ParkDecision,
  stepMarkedParks,
  stepUnpark,
  unparkDeduplicationId,
  type ParkedEvent,
  type ParkState,
  type MarkedSubscription,
  type ParkStore,
} from '../../../lambda/core/park.js';
import type { GroupLag } from '../../../lambda/core/lag.js';
import { groupLag } from '../../support/group-lag.js';

const place = (n: number): string => String(n).padStart(40, '0');
const NOW = new Date('2026-12-04T12:30:00.000Z');
const state = (lastParked: number, returnedThrough: number | undefined, parkingThrough = lastParked): ParkState => ({
  lastParked: place(lastParked),
  parkingThrough: place(parkingThrough),
  returnedThrough: returnedThrough === undefined ? '' : place(returnedThrough),
  parkId: 'park-1',
});

function parked(group: string, n: number, key = 'sub-1'): ParkedEvent {
  const queued: QueuedEvent = {
    version: 1,
    event: { event_id: `evt-${n}`, tenant_id: 't', subscription_id: 'sub-1', type: 'thing.happened', payload_json: JSON.stringify({ n }) },
    ordering_key: key,
    message_group_id: group,
    accepted_at: '2026-12-04T12:00:00.000Z',
  };
  return { place: place(n), queued };
}

describe('decidePark', () => {
  it('parks every live event while a parked one has not come back settled, behind it', () => {
    expect(decidePark(state(10, undefined), place(11), false)).toBe(ParkDecision.park);
    expect(decidePark(state(10, 5), place(11), false)).toBe(ParkDecision.park);
    expect(isParkOpen(state(10, 5))).toBe(true);
  });

  it('delivers what comes after the last copy settled: the group is FIFO, so it was behind every copy', () => {
    expect(isParkOpen(state(10, 10))).toBe(false);
    expect(decidePark(state(10, 10), place(11), false)).toBe(ParkDecision.deliver);
    expect(decidePark(undefined, place(11), false)).toBe(ParkDecision.deliver);
  });

  it('drops a live event at or before the last place parked: it was handled before, and SQS handed it out again', () => {
    expect(decidePark(state(10, undefined), place(10), false)).toBe(ParkDecision.drop);
    expect(decidePark(state(10, 10), place(3), true)).toBe(ParkDecision.drop);
  });

  it('parks again what a park cut short began to write, whatever else is settled', () => {
    // Noted through 12, confirmed through 10, every copy through 10 settled: 11 and 12 come back.
    expect(isParkOpen(state(10, 10, 12))).toBe(true);
    expect(decidePark(state(10, 10, 12), place(11), false)).toBe(ParkDecision.park);
  });

  it('starts a park for an event due, with no park or a park ended', () => {
    expect(decidePark(undefined, place(1), true)).toBe(ParkDecision.park);
    expect(decidePark(state(10, 10), place(11), true)).toBe(ParkDecision.park);
  });
});

describe('when a held group is parked', () => {
  const now = new Date('2026-12-14T12:00:00.000Z');

  it('is due once its head has waited the age, never without one', () => {
    expect(isDueToPark('2026-12-04T12:00:00.000Z', now, 864_000)).toBe(true);
    expect(isDueToPark('2026-12-04T12:00:01.000Z', now, 864_000)).toBe(false);
    expect(isDueToPark('2026-11-01T12:00:00.000Z', now, undefined)).toBe(false);
  });

  it('holds no longer than until the head is due, at least a second, at most the ceiling', () => {
    expect(holdSecondsFor('2026-12-04T12:00:00.000Z', now, 43_000, undefined)).toBe(43_000);
    expect(holdSecondsFor('2026-12-14T11:00:00.000Z', now, 43_000, 86_400)).toBe(43_000);
    expect(holdSecondsFor('2026-12-13T12:10:00.000Z', now, 43_000, 86_400)).toBe(600);
    expect(holdSecondsFor('2026-12-01T12:00:00.000Z', now, 43_000, 86_400)).toBe(1);
  });

  it('tells an abandoned mark by the time its park id begins with', () => {
    expect(isAbandonedMark(newParkId('2026-12-14T11:44:00.000Z', 'x'), now)).toBe(true);
    expect(isAbandonedMark(newParkId('2026-12-14T11:46:00.000Z', 'x'), now)).toBe(false);
    expect(isAbandonedMark('no time', now)).toBe(true);
  });
});

/** A park store in memory: one group's state and parked events per subscription and group. */
function memoryStore(initial: Record<string, { state: ParkState | undefined; events: ParkedEvent[] }>) {
  const groups = new Map(Object.entries(initial).map(([group, value]) => [group, { ...value, events: [...value.events] }]));
  const ended: string[] = [];
  const unmarked: string[] = [];
  const store: Pick<ParkStore, 'readState' | 'readParked' | 'removeParked' | 'end' | 'unmark'> = {
    readState: async ({ messageGroupId }) => groups.get(messageGroupId)?.state,
    readParked: async ({ messageGroupId, through, limit }) => (groups.get(messageGroupId)?.events ?? []).filter((event) => event.place <= through).slice(0, limit),
    removeParked: async ({ messageGroupId, events }) => {
      const group = groups.get(messageGroupId);
      if (group !== undefined) group.events = group.events.filter((event) => !events.some((removed) => removed.place === event.place));
    },
    end: async ({ messageGroupId, state: read }) => {
      const group = groups.get(messageGroupId);
      if (group?.state === undefined || JSON.stringify(group.state) !== JSON.stringify(read)) return false;
      group.state = undefined;
      ended.push(messageGroupId);
      return true;
    },
    unmark: async ({ messageGroupId }) => {
      unmarked.push(messageGroupId);
    },
  };
  return { store, groups, ended, unmarked };
}

/** SQS in memory: every entry taken unless refused, each call recorded. */
function queue(refuse: (message: OutgoingMessage) => boolean = () => false) {
  const calls: OutgoingMessage[][] = [];
  const enqueue = async (entries: readonly OutgoingMessage[]): Promise<SendAnswer> => {
    calls.push([...entries]);
    const refused = new Map(entries.filter(refuse).map((message) => [message.index, { kind: 'transient' as const, code: 'ServiceUnavailable' }]));
    return { refused, sequenceNumbers: new Map() };
  };
  return { calls, enqueue };
}

describe('stepUnpark', () => {
  it('sends each group\'s parked events back one at a time, in place order, marked with their places, and removes them', async () => {
    const { store, groups } = memoryStore({ g1: { state: state(3, undefined), events: [parked('g1', 1), parked('g1', 2, 'sub-1/r2'), parked('g1', 3)] } });
    const { calls, enqueue } = queue();
    const step = await stepUnpark('sub-1', new Map([['g1', 'park-1']]), { store, enqueue, hasTime: () => true, now: () => NOW });
    expect(step).toEqual({ sent: 3, ended: 0, isSent: true });
    // One entry per call, even across keys: a copy's place settles every place before it.
    expect(calls.map((call) => call.length)).toEqual([1, 1, 1]);
    const sent = calls.flat().map((message) => readQueuedEvent(message.body));
    expect(sent.map((read) => ('queued' in read ? read.queued.parked?.place : undefined))).toEqual([place(1), place(2), place(3)]);
    expect(calls.flat().map((message) => message.messageGroupId)).toEqual(['g1', 'g1', 'g1']);
    expect(calls.flat()[0]?.deduplicationId).toBe(unparkDeduplicationId('sub-1', parked('g1', 1)));
    expect(groups.get('g1')?.events).toEqual([]);
  });

  it('sends nothing past the last place confirmed', async () => {
    const { store, groups } = memoryStore({ g1: { state: state(2, undefined, 3), events: [parked('g1', 1), parked('g1', 2), parked('g1', 3)] } });
    const { calls, enqueue } = queue();
    expect(await stepUnpark('sub-1', new Map([['g1', 'park-1']]), { store, enqueue, hasTime: () => true, now: () => NOW })).toEqual({ sent: 2, ended: 0, isSent: true });
    expect(calls).toHaveLength(2);
    expect(groups.get('g1')?.events.map((event) => event.place)).toEqual([place(3)]);
  });

  it('stops a group at a refusal, leaving it and what follows parked for the next step, in order', async () => {
    const { store, groups } = memoryStore({ g1: { state: state(3, undefined), events: [parked('g1', 1), parked('g1', 2), parked('g1', 3)] } });
    const { enqueue } = queue((message) => message.body.includes('"evt-2"'));
    const step = await stepUnpark('sub-1', new Map([['g1', 'park-1']]), { store, enqueue, hasTime: () => true, now: () => NOW });
    expect(step).toEqual({ sent: 1, ended: 0, isSent: false });
    expect(groups.get('g1')?.events.map((event) => event.place)).toEqual([place(2), place(3)]);
  });

  it('ends a group with nothing left whose copies were all settled, and unmarks one whose state is long gone, not one being made', async () => {
    const { store, ended, unmarked } = memoryStore({ done: { state: state(3, 3), events: [] }, open: { state: state(3, 2), events: [] }, gone: { state: undefined, events: [] }, making: { state: undefined, events: [] } });
    const marks = new Map([
      ['done', 'park-1'],
      ['open', 'park-2'],
      ['gone', newParkId('2026-12-04T12:00:00.000Z', 'a')],
      // Its marks come before its state: a minute old, it may be a park being made now.
      ['making', newParkId('2026-12-04T12:29:00.000Z', 'b')],
    ]);
    const step = await stepUnpark('sub-1', marks, { store, enqueue: queue().enqueue, hasTime: () => true, now: () => NOW });
    expect(step).toEqual({ sent: 0, ended: 1, isSent: true });
    expect(ended).toEqual(['done']);
    expect(unmarked).toEqual(['gone']);
  });

  it('sends at most its bound in one step, and nothing once out of time', async () => {
    const events = Array.from({ length: MAX_UNPARKED_PER_STEP + 5 }, (_, index) => parked('g1', index + 1));
    const { store } = memoryStore({ g1: { state: state(events.length, undefined), events } });
    expect(await stepUnpark('sub-1', new Map([['g1', 'p']]), { store, enqueue: queue().enqueue, hasTime: () => true, now: () => NOW })).toEqual({ sent: MAX_UNPARKED_PER_STEP, ended: 0, isSent: false });
    expect(await stepUnpark('sub-1', new Map([['g1', 'p']]), { store, enqueue: queue().enqueue, hasTime: () => false, now: () => NOW })).toEqual({ sent: 0, ended: 0, isSent: false });
  });
});

describe('stepMarkedParks (the lag job)', () => {
  const group = (messageGroupId: string, parkedSubscriptions: Record<string, string>): GroupLag => groupLag({ messageGroupId, parkedSubscriptions });

  it('steps each resumed subscription marked on an active group over its own marks, never a paused one', async () => {
    const { store, groups } = memoryStore({ g1: { state: state(2, undefined), events: [parked('g1', 1), parked('g1', 2)] }, g2: { state: state(1, undefined), events: [parked('g2', 1)] } });
    const { calls, enqueue } = queue();
    const subscriptions: Record<string, MarkedSubscription> = {
      'sub-1': { isPaused: false, marks: new Map([['g1', 'park-1']]) },
      'sub-2': { isPaused: true, marks: new Map([['g2', 'park-2']]) },
    };
    const step = await stepMarkedParks([group('g1', { 'sub-1': 'park-1' }), group('g2', { 'sub-2': 'park-2' })], {
      readSubscription: async (id) => subscriptions[id],
      store,
      enqueue,
      hasTime: () => true,
      now: () => NOW,
    });
    expect(step).toEqual({ subscriptions: 1, sent: 2, ended: 0 });
    expect(calls.flat().map((message) => message.messageGroupId)).toEqual(['g1', 'g1']);
    expect(groups.get('g2')?.events).toHaveLength(1);
  });

  it('removes a group\'s mark its subscription lacks once it is old, not one a park being made may have just written', async () => {
    const { store, unmarked } = memoryStore({});
    const old = newParkId('2026-12-04T12:00:00.000Z', 'a');
    const fresh = newParkId('2026-12-04T12:29:30.000Z', 'b');
    const step = await stepMarkedParks([group('g-old', { 'sub-1': old }), group('g-fresh', { 'sub-1': fresh }), group('g-gone', { 'sub-gone': old })], {
      readSubscription: async (id) => (id === 'sub-1' ? { isPaused: false, marks: new Map() } : undefined),
      store,
      enqueue: queue().enqueue,
      hasTime: () => true,
      now: () => NOW,
    });
    expect(step).toEqual({ subscriptions: 0, sent: 0, ended: 0 });
    expect(unmarked).toEqual(['g-old', 'g-gone']);
  });
});

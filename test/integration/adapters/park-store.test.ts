/**
 * Parked events and each group's park on dynalite: written in place order and read back so, the
 * state raised and never lowered, the copies' note, the marks on the subscription and on the
 * group (which keeps the group in the index of active groups), and the end, refused once the
 * state changed.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroupStore } from '../../../lambda/adapters/group-store.js';
import { createParkStore, type DynamoParkStore } from '../../../lambda/adapters/park-store.js';
import { createSubscriptionStore, toDeliveryTarget } from '../../../lambda/adapters/subscription-store.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { isParkOpen, type ParkedEvent } from '../../../lambda/core/park.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';
import { inMemoryPayloads } from '../support/payloads.js';

let tables: DynaliteTables;
let store: DynamoParkStore;
const payloads = inMemoryPayloads();

const AT = '2026-12-04T12:00:00.000Z';
let count = 0;

async function subscription(): Promise<string> {
  count += 1;
  const id = `sub-park-${process.pid}-${count}`;
  await createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName).put({ subscription_id: id, tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', now: AT });
  return id;
}

function parked(subscriptionId: string, group: string, place: string, data: Record<string, unknown> = { n: place }): ParkedEvent {
  const queued: QueuedEvent = {
    version: 1,
    event: { event_id: `evt-${place}`, tenant_id: 't', subscription_id: subscriptionId, type: 'thing.happened', payload_json: JSON.stringify(data) },
    ordering_key: subscriptionId,
    message_group_id: group,
    accepted_at: AT,
  };
  return { place, queued };
}

const place = (n: number): string => String(n).padStart(40, '0');

beforeAll(async () => {
  tables = await startDynaliteTables();
  store = createParkStore(tables.dynamo, {
    tables: { deadLetters: TABLES.deadLetters.localName, subscriptions: TABLES.subscriptions.localName, groups: TABLES.groups.localName },
    payloads,
  });
});

afterAll(async () => {
  await tables.stop();
});

describe('park store on dynalite', () => {
  it('parks events in place order, marks the group on the subscription and on the group, and reads them back in that order', async () => {
    const id = await subscription();
    const first = await store.park({ subscriptionId: id, messageGroupId: 'g1', events: [parked(id, 'g1', place(20)), parked(id, 'g1', place(30))], state: undefined, parkedAt: AT });
    expect(first).toMatchObject({ lastParked: place(30), parkingThrough: place(30), returnedThrough: '' });
    expect(isParkOpen(first)).toBe(true);
    const more = await store.park({ subscriptionId: id, messageGroupId: 'g1', events: [parked(id, 'g1', place(40))], state: first, parkedAt: AT });
    // The same park: the marks are not made again.
    expect(more).toEqual({ ...first, lastParked: place(40), parkingThrough: place(40) });
    expect(await store.readState({ subscriptionId: id, messageGroupId: 'g1' })).toEqual(more);
    expect((await store.readParked({ subscriptionId: id, messageGroupId: 'g1', through: place(99), limit: 10 })).map((event) => event.place)).toEqual([place(20), place(30), place(40)]);
    expect((await store.readParked({ subscriptionId: id, messageGroupId: 'g1', through: place(99), limit: 2 })).map((event) => event.queued.event.event_id)).toEqual([`evt-${place(20)}`, `evt-${place(30)}`]);
    const target = toDeliveryTarget(await createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName).get(id));
    expect(target?.parkedGroups).toEqual(new Map([['g1', first.parkId]]));
    const groups = await createGroupStore(tables.dynamo, TABLES.groups.localName).listActiveGroups({ isConsistent: true });
    // A group with nothing counted stays in the index while it is marked: the lag job finds it there.
    expect(groups.find((group) => group.messageGroupId === 'g1')?.parkedSubscriptions).toEqual({ [id]: first.parkId });
  });

  it('never lowers the last place parked: a park repeated after a crash writes its events again and keeps the state', async () => {
    const id = await subscription();
    const state = await store.park({ subscriptionId: id, messageGroupId: 'g2', events: [parked(id, 'g2', place(5)), parked(id, 'g2', place(6))], state: undefined, parkedAt: AT });
    const again = await store.park({ subscriptionId: id, messageGroupId: 'g2', events: [parked(id, 'g2', place(6))], state, parkedAt: AT });
    expect(again).toEqual(state);
    expect((await store.readParked({ subscriptionId: id, messageGroupId: 'g2', through: place(99), limit: 10 })).map((event) => event.place)).toEqual([place(5), place(6)]);
  });

  it('reads nothing past the last place confirmed: a park cut short leaves its events for its messages to park again', async () => {
    const id = await subscription();
    const state = await store.park({ subscriptionId: id, messageGroupId: 'g6', events: [parked(id, 'g6', place(1))], state: undefined, parkedAt: AT });
    expect(state).toMatchObject({ lastParked: place(1), parkingThrough: place(1) });
    // Cut short: the event written, the place not confirmed (a crash between the two).
    await tables.dynamo.send(
      new PutCommand({ TableName: TABLES.deadLetters.localName, Item: { subscription_id: id, position: `!park#g6#${place(2)}`, place: place(2), event_id: 'evt-2', parked_at: AT, queued_event: JSON.stringify(parked(id, 'g6', place(2)).queued) } }),
    );
    expect((await store.readParked({ subscriptionId: id, messageGroupId: 'g6', through: state.lastParked, limit: 10 })).map((event) => event.place)).toEqual([place(1)]);
  });

  it('keeps an event too large for an item in the payload bucket, and removes it with its item', async () => {
    const id = await subscription();
    const large = parked(id, 'g3', place(1), { blob: 'x'.repeat(360_000) });
    await store.park({ subscriptionId: id, messageGroupId: 'g3', events: [large], state: undefined, parkedAt: AT });
    const [read] = await store.readParked({ subscriptionId: id, messageGroupId: 'g3', through: place(99), limit: 10 });
    expect(read?.queued).toEqual(large.queued);
    expect(read?.payloadKey).toMatch(/^dead-letters\//);
    expect(payloads.objects.has(read?.payloadKey ?? '')).toBe(true);
    await store.removeParked({ subscriptionId: id, messageGroupId: 'g3', events: read === undefined ? [] : [read] });
    expect(await store.readParked({ subscriptionId: id, messageGroupId: 'g3', through: place(99), limit: 10 })).toEqual([]);
    expect(payloads.objects.has(read?.payloadKey ?? '')).toBe(false);
  });

  it('notes returned copies upward only, and ends a closed park with its marks, unless it changed', async () => {
    const id = await subscription();
    const state = await store.park({ subscriptionId: id, messageGroupId: 'g4', events: [parked(id, 'g4', place(7)), parked(id, 'g4', place(8))], state: undefined, parkedAt: AT });
    await store.removeParked({ subscriptionId: id, messageGroupId: 'g4', events: await store.readParked({ subscriptionId: id, messageGroupId: 'g4', through: place(99), limit: 10 }) });
    expect(await store.noteReturned({ subscriptionId: id, messageGroupId: 'g4', place: place(7) })).toEqual({ ...state, returnedThrough: place(7) });
    // A copy noted before (a duplicate) raises nothing.
    expect(await store.noteReturned({ subscriptionId: id, messageGroupId: 'g4', place: place(7) })).toBeUndefined();
    const closed = await store.noteReturned({ subscriptionId: id, messageGroupId: 'g4', place: place(8) });
    expect(closed !== undefined && isParkOpen(closed)).toBe(false);
    // An end that read the state before the last note is refused.
    expect(await store.end({ subscriptionId: id, messageGroupId: 'g4', state: { ...state, returnedThrough: place(7) } })).toBe(false);
    expect(closed === undefined ? false : await store.end({ subscriptionId: id, messageGroupId: 'g4', state: closed })).toBe(true);
    expect(await store.readState({ subscriptionId: id, messageGroupId: 'g4' })).toBeUndefined();
    expect(toDeliveryTarget(await createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName).get(id))?.parkedGroups).toBeUndefined();
    const group = (await createGroupStore(tables.dynamo, TABLES.groups.localName).listActiveGroups({ isConsistent: true })).find((row) => row.messageGroupId === 'g4');
    expect(group?.parkedSubscriptions).toBeUndefined();
  });

  it('keeps the marks of a park begun again after the one being ended was read', async () => {
    const id = await subscription();
    const old = await store.park({ subscriptionId: id, messageGroupId: 'g5', events: [parked(id, 'g5', place(1))], state: undefined, parkedAt: AT });
    const closed = await store.noteReturned({ subscriptionId: id, messageGroupId: 'g5', place: place(1) });
    if (closed === undefined) throw new Error('the note raised nothing');
    // Parked again (a second pause): another park, its own marks.
    const again = await store.park({ subscriptionId: id, messageGroupId: 'g5', events: [parked(id, 'g5', place(2))], state: closed, parkedAt: '2026-12-04T13:00:00.000Z' });
    expect(again.parkId).not.toBe(old.parkId);
    expect(await store.end({ subscriptionId: id, messageGroupId: 'g5', state: closed })).toBe(false);
    await store.unmark({ subscriptionId: id, messageGroupId: 'g5', parkId: old.parkId });
    expect(toDeliveryTarget(await createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName).get(id))?.parkedGroups).toEqual(new Map([['g5', again.parkId]]));
  });
});

/**
 * The Groups adapter on dynalite: the lag counts that ingest, the consumer and redrive write, and
 * the sparse, key-only `active-group-keys` index a group enters with work and leaves when it
 * drains. One table for the file; each test uses its own message groups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createGroupStore, MAX_DEAD_LETTERS_TRACKED, MAX_KEYS_TRACKED, placeMark as placeMarkOf, type GroupStore } from '../../../lambda/adapters/group-store.js';
import { HeadState, IDLE_GROUP_MINUTES, idleCutoff, lagShardOf, type GroupProgress } from '../../../lambda/core/lag.js';
import { allBucketNamesOf, RateCounter, ratesOfLastFullMinute } from '../../../lambda/core/group-rates.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;
let store: GroupStore;

beforeAll(async () => {
  tables = await startDynaliteTables();
  store = createGroupStore(tables.dynamo, TABLES.groups.localName);
});

afterAll(async () => {
  await tables.stop();
});

let groupCount = 0;
function newGroup(): string {
  groupCount += 1;
  return `group-${process.pid}-${Date.now().toString(36)}-${groupCount}`;
}

const T0 = '2026-12-02T12:00:00.000Z';
const T1 = '2026-12-02T12:01:00.000Z';
const NOW = new Date('2026-12-02T12:05:00.000Z');
const LATER = new Date('2026-12-02T12:06:00.000Z');

async function isActive(messageGroupId: string): Promise<boolean> {
  return (await store.listActiveGroups()).some((group) => group.messageGroupId === messageGroupId);
}

const place = (messageGroupId: string, position: string) => ({ messageGroupId, subscriptionId: 'sub-1', position });

const clear = (messageGroupId: string, settled: number): GroupProgress => ({
  messageGroupId,
  settled,
  lastSettledAcceptedAt: T1,
  head: { state: HeadState.clear },
});

describe('createGroupStore on dynalite', () => {
  it('keeps a held group in the index when its last dead letter is redriven away, whatever its depth says', async () => {
    const group = newGroup();
    const hold = { subscriptionId: 'sub-held', receiptHandle: 'rh-1', pausedAt: T0, reason: 'r', heldAt: T1, until: '2026-12-03T00:00:00.000Z' };
    await store.recordProgress({ messageGroupId: group, settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.held, hold, acceptedAt: T0 } }, NOW);
    await store.countDeadLetter(place(group, '1'));
    await store.uncountDeadLetter(place(group, '1'));
    expect((await store.listActiveGroups({ isConsistent: true })).find((row) => row.messageGroupId === group)?.hold).toEqual(hold);
  });

  it('keeps a hold through a drifted drain, the idle upkeep and a late failing write, and forgets it only by its own handle or the next delivery', async () => {
    const group = newGroup();
    const hold = { subscriptionId: 'sub-held', receiptHandle: 'rh-1', pausedAt: T0, reason: 'maintenance', heldAt: T1, until: '2026-12-03T00:00:00.000Z' };
    // No intake counted (a drifted depth): the held write drains the group to 0.
    await store.recordProgress({ messageGroupId: group, settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.held, hold, acceptedAt: T0 } }, NOW);
    expect(await store.getGroup(group)).toMatchObject({ depth: 0, hold });
    // Idle for longer than the lag job waits: still in the index, still held, still listed.
    await store.listActiveForgettingIdle(idleCutoff(new Date(NOW.getTime() + (IDLE_GROUP_MINUTES + 1) * 60_000)));
    expect((await store.listActiveGroups()).find((row) => row.messageGroupId === group)?.hold).toEqual(hold);
    await store.forgetHold(group, 'rh-other');
    expect((await store.getGroup(group))?.hold).toEqual(hold);
    await store.forgetHold(group, 'rh-1');
    expect((await store.getGroup(group))?.hold).toBeUndefined();

    await store.recordProgress({ messageGroupId: group, settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.held, hold: { ...hold, receiptHandle: 'rh-2' }, acceptedAt: T0 } }, NOW);
    // A failing head's write may land after a later batch held the group anew: it keeps the hold.
    await store.recordProgress({ messageGroupId: group, settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, eventId: 'e1', orderingKey: 'sub-held', attempts: 2, lastError: 'HTTP 500', acceptedAt: T0 } }, NOW);
    expect((await store.getGroup(group))?.hold?.receiptHandle).toBe('rh-2');
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['sub-held'], acceptedAt: T0 });
    await store.recordProgress(clear(group, 1), LATER);
    expect((await store.getGroup(group))?.hold).toBeUndefined();
  });

  it('counts intake into a group, keeps its oldest acceptance and its keys, and lists it as active', async () => {
    const group = newGroup();
    expect(await store.getGroup(group)).toBeUndefined();
    await store.recordIntake({ messageGroupId: group, events: 2, orderingKeys: ['k1', 'k2'], acceptedAt: T0 });
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k2', 'k3'], acceptedAt: T1 });
    expect(await store.getGroup(group)).toMatchObject({ messageGroupId: group, depth: 3, oldestAcceptedAt: T0, keysAffected: 3, deadLettered: 0 });
    expect(await isActive(group)).toBe(true);
  });

  it('lists an active group with its whole lag when the index it is found in holds its keys alone', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 2, orderingKeys: ['k1', 'k2'], acceptedAt: T0 });
    await store.recordProgress({ messageGroupId: group, settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, eventId: 'e1', orderingKey: 'k1', attempts: 2, lastError: 'HTTP 500', acceptedAt: T0 } }, NOW);
    // The local stack's index, as local/tables.ts creates it from lambda/resources.ts: keys only.
    const index = TABLES.groups.indexes[0];
    const entries = await tables.dynamo.send(
      new QueryCommand({ TableName: TABLES.groups.localName, IndexName: index.name, KeyConditionExpression: 'lag_shard = :shard', ExpressionAttributeValues: { ':shard': lagShardOf(group) } }),
    );
    expect(entries.Items?.find((entry) => entry.message_group_id === group)).toEqual({ message_group_id: group, lag_shard: lagShardOf(group) });
    const listed = (await store.listActiveGroups()).find((candidate) => candidate.messageGroupId === group);
    expect(listed).toMatchObject({ depth: 2, oldestAcceptedAt: T0, keysAffected: 2, headAttempts: 2, lastError: 'HTTP 500', headEventId: 'e1', headOrderingKey: 'k1', headFailingSince: NOW.toISOString() });
  });

  it('keeps a drained group in the index, idle and unlisted, until the lag job takes it out after IDLE_GROUP_MINUTES', async () => {
    const group = newGroup();
    const inIndex = async (): Promise<boolean> => {
      const entries = await tables.dynamo.send(
        new QueryCommand({ TableName: TABLES.groups.localName, IndexName: TABLES.groups.indexes[0].name, KeyConditionExpression: 'lag_shard = :shard', ExpressionAttributeValues: { ':shard': lagShardOf(group) } }),
      );
      return (entries.Items ?? []).some((entry) => entry.message_group_id === group);
    };
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T0 });
    await store.recordProgress(clear(group, 1), NOW);
    expect([await inIndex(), await isActive(group)]).toEqual([true, false]);
    // Active again within the idle time: listed, and still idle for nothing.
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T1 });
    expect(await store.listActiveForgettingIdle(idleCutoff(new Date(LATER.getTime() + 60 * 60_000)))).toEqual(expect.arrayContaining([expect.objectContaining({ messageGroupId: group, depth: 1 })]));
    expect(await inIndex()).toBe(true);
    // Drained again: kept while idle for less than IDLE_GROUP_MINUTES, taken out after.
    await store.recordProgress(clear(group, 1), LATER);
    await store.listActiveForgettingIdle(idleCutoff(new Date(LATER.getTime() + (IDLE_GROUP_MINUTES - 1) * 60_000)));
    expect(await inIndex()).toBe(true);
    await store.listActiveForgettingIdle(idleCutoff(new Date(LATER.getTime() + (IDLE_GROUP_MINUTES + 1) * 60_000)));
    expect(await inIndex()).toBe(false);
    expect(await store.getGroup(group)).toMatchObject({ depth: 0, deadLettered: 0 });
    // Its next event puts it back.
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T1 });
    expect([await inIndex(), await isActive(group)]).toEqual([true, true]);
  });

  it('keeps a per-key group\'s ordering key from its first intake on, through its draining; none for a partition', async () => {
    const key = `${newGroup()}-key`;
    const perKeyGroup = messageGroupIdFor(key, undefined);
    await store.recordIntake({ messageGroupId: perKeyGroup, events: 1, orderingKeys: [key], acceptedAt: T0 });
    expect(await store.getGroup(perKeyGroup)).toMatchObject({ orderingKey: key });
    await store.recordProgress(clear(perKeyGroup, 1), NOW);
    expect(await store.getGroup(perKeyGroup)).toMatchObject({ depth: 0, orderingKey: key });

    const partition = `partition-${groupCount}-${Date.now()}`;
    await store.recordIntake({ messageGroupId: partition, events: 2, orderingKeys: [key, `${key}-2`], acceptedAt: T0 });
    expect(await store.getGroup(partition)).toMatchObject({ depth: 2, orderingKey: undefined });
  });

  it('records a failing head, keeping its stall clock from its first failure', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T0 });
    const waiting = (attempts: number): GroupProgress => ({
      messageGroupId: group,
      settled: 0,
      lastSettledAcceptedAt: undefined,
      head: { state: HeadState.waiting, eventId: 'evt-1', orderingKey: 'k1', attempts, lastError: `HTTP 50${attempts}`, acceptedAt: T0 },
    });
    await store.recordProgress(waiting(1), NOW);
    await store.recordProgress(waiting(2), LATER);
    expect(await store.getGroup(group)).toMatchObject({ depth: 1, headAttempts: 2, lastError: 'HTTP 502', headFailingSince: NOW.toISOString(), headEventId: 'evt-1', headOrderingKey: 'k1' });
  });

  it('drains a group in one write when the batch likely emptied it, and falls back to the two writes when it did not', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 3, orderingKeys: ['k1'], acceptedAt: T0 });
    // A wrong hint: one event of three settled. Refused, then the usual write.
    await store.recordProgress({ ...clear(group, 1), isLikelyDrained: true }, NOW);
    expect(await store.getGroup(group)).toMatchObject({ depth: 2, oldestAcceptedAt: T1 });
    expect(await isActive(group)).toBe(true);
    await store.recordProgress({ ...clear(group, 2), isLikelyDrained: true }, NOW);
    const drained = await store.getGroup(group);
    expect(drained).toMatchObject({ depth: 0, keysAffected: 0 });
    expect(drained?.oldestAcceptedAt).toBeUndefined();
    expect(await isActive(group)).toBe(false);
  });

  it('keeps a drained group with dead letters in the index, whatever the hint', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 2, orderingKeys: ['k1'], acceptedAt: T0 });
    await store.countDeadLetter({ subscriptionId: 's', position: 'p1', messageGroupId: group });
    await store.recordProgress({ ...clear(group, 2), isLikelyDrained: true }, NOW);
    expect(await store.getGroup(group)).toMatchObject({ depth: 0, deadLettered: 1 });
    expect(await isActive(group)).toBe(true);
  });

  it('forgets a drained group and takes it out of the index, so its next events start its wait afresh', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 2, orderingKeys: ['k1'], acceptedAt: T0 });
    await store.recordProgress(clear(group, 1), NOW);
    expect(await store.getGroup(group)).toMatchObject({ depth: 1, oldestAcceptedAt: T1 });
    await store.recordProgress(clear(group, 1), NOW);
    const drained = await store.getGroup(group);
    expect(drained).toMatchObject({ depth: 0, keysAffected: 0 });
    expect(drained?.oldestAcceptedAt).toBeUndefined();
    expect(await isActive(group)).toBe(false);
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k9'], acceptedAt: '2026-12-02T13:00:00.000Z' });
    expect(await store.getGroup(group)).toMatchObject({ depth: 1, oldestAcceptedAt: '2026-12-02T13:00:00.000Z', keysAffected: 1 });
    expect(await isActive(group)).toBe(true);
  });

  it('keeps a drained group with dead letters in the index, without a head', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T0 });
    await store.recordProgress(clear(group, 1), NOW);
    await store.countDeadLetter(place(group, 'p1'));
    const group1 = await store.getGroup(group);
    expect(group1).toMatchObject({ depth: 0, deadLettered: 1 });
    expect(group1?.oldestAcceptedAt).toBeUndefined();
    expect(await isActive(group)).toBe(true);
  });

  it('keeps a failing head listed when its event was never counted in the group, and forgets the group once the head is clear', async () => {
    // A copy whose ingest request failed between its send and its count: the depth says 0, the head fails.
    const group = newGroup();
    const waiting: GroupProgress = {
      messageGroupId: group,
      settled: 0,
      lastSettledAcceptedAt: undefined,
      head: { state: HeadState.waiting, eventId: 'evt-1', orderingKey: 'k1', attempts: 1, lastError: 'HTTP 503', acceptedAt: T0 },
    };
    await store.recordProgress(waiting, NOW);
    expect(await store.getGroup(group)).toMatchObject({ depth: 0, headAttempts: 1, headFailingSince: NOW.toISOString(), headOrderingKey: 'k1' });
    expect(await isActive(group)).toBe(true);
    await store.recordProgress(clear(group, 0), LATER);
    expect(await isActive(group)).toBe(false);
  });

  it('forgets a group whose intake arrives after the consumer settled its events', async () => {
    const group = newGroup();
    await store.recordProgress(clear(group, 1), NOW);
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T0 });
    const counted = await store.getGroup(group);
    expect(counted).toMatchObject({ depth: 0 });
    expect(counted?.oldestAcceptedAt).toBeUndefined();
    expect(await isActive(group)).toBe(false);
  });

  it('moves redriven dead letters to their new group, taking the old one out of the index once empty', async () => {
    const from = newGroup();
    const to = newGroup();
    await store.recordIntake({ messageGroupId: from, events: 2, orderingKeys: ['k1'], acceptedAt: T0 });
    await store.recordProgress(clear(from, 2), NOW);
    await store.countDeadLetter(place(from, 'p1'));
    await store.countDeadLetter(place(from, 'p2'));
    await store.uncountDeadLetter(place(from, 'p1'));
    await store.uncountDeadLetter(place(from, 'p2'));
    await store.recordRedrive({ toGroup: to, orderingKey: 'k1', events: 2, at: T1 });
    expect(await store.getGroup(from)).toMatchObject({ depth: 0, deadLettered: 0 });
    expect(await isActive(from)).toBe(false);
    expect(await store.getGroup(to)).toMatchObject({ depth: 2, deadLettered: 0, oldestAcceptedAt: T1, keysAffected: 1 });
    expect(await isActive(to)).toBe(true);
  });

  it('moves redriven dead letters back to pending within the same group', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: T0 });
    await store.recordProgress(clear(group, 1), NOW);
    await store.countDeadLetter(place(group, 'p1'));
    await store.uncountDeadLetter(place(group, 'p1'));
    await store.recordRedrive({ toGroup: group, orderingKey: 'k1', events: 1, at: T1 });
    expect(await store.getGroup(group)).toMatchObject({ depth: 1, deadLettered: 0, oldestAcceptedAt: T1 });
    expect(await isActive(group)).toBe(true);
  });

  it('counts a dead letter once per place, however often and in whatever order it is counted and uncounted', async () => {
    const group = newGroup();
    // The consumer gives an event up before ingest counted it: no intake at all yet.
    await store.countDeadLetter(place(group, 'p1'));
    await store.countDeadLetter(place(group, 'p1'));
    await store.countDeadLetter(place(group, 'p2'));
    await store.countDeadLetter({ ...place(group, 'p1'), subscriptionId: 'another' });
    expect(await store.getGroup(group)).toMatchObject({ depth: 0, deadLettered: 3 });
    expect(await isActive(group)).toBe(true);
    await store.uncountDeadLetter(place(group, 'p1'));
    await store.uncountDeadLetter(place(group, 'p1'));
    await store.uncountDeadLetter(place(group, 'never-counted'));
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: 2 });
    await store.uncountDeadLetter(place(group, 'p2'));
    await store.uncountDeadLetter({ ...place(group, 'p1'), subscriptionId: 'another' });
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: 0 });
    expect(await isActive(group)).toBe(false);
  });

  it('keeps the marks of its dead letters off the group’s item, which the delivery path writes, and counts them there exactly', async () => {
    const group = newGroup();
    await store.recordIntake({ messageGroupId: group, events: 3, orderingKeys: ['k1'], acceptedAt: T0 });
    for (const position of ['p1', 'p2', 'p1']) await store.countDeadLetter(place(group, position));
    const raw = await tables.dynamo.send(new GetCommand({ TableName: TABLES.groups.localName, Key: { [TABLES.groups.partitionKey]: group }, ConsistentRead: true }));
    expect(raw.Item?.dead_letter_places).toBeUndefined();
    expect(raw.Item?.dead_lettered).toBe(2);
    // A size the write of a batch's progress is billed by: one write unit, whatever the dead letters.
    expect(Buffer.byteLength(JSON.stringify(raw.Item))).toBeLessThan(1024);
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: 2, depth: 3 });
    expect((await store.listActiveGroups()).filter((listed) => listed.messageGroupId.startsWith(group)).map((listed) => listed.messageGroupId)).toEqual([group]);
  });

  it('repairs the group’s copy of its dead-letter count when a count or an uncount is repeated after a crash between its two writes', async () => {
    const group = newGroup();
    await store.countDeadLetter(place(group, 'p1'));
    // As a crash would leave it: the dead-letter item counted p2, the group's copy was never written.
    await tables.dynamo.send(
      new UpdateCommand({
        TableName: TABLES.groups.localName,
        Key: { [TABLES.groups.partitionKey]: `${group}#dead-letters` },
        UpdateExpression: 'ADD dead_lettered :one, dead_letters_version :one, dead_letter_places :marks',
        ExpressionAttributeValues: { ':one': 1, ':marks': new Set([placeMarkOf(place(group, 'p2'))]) },
      }),
    );
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: 1 });
    await store.countDeadLetter(place(group, 'p2'));
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: 2 });
    await store.uncountDeadLetter(place(group, 'p2'));
    await store.uncountDeadLetter(place(group, 'p2'));
    await store.uncountDeadLetter(place(group, 'p1'));
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: 0 });
    expect(await isActive(group)).toBe(false);
  });

  it('counts on without marks past MAX_DEAD_LETTERS_TRACKED, and uncounts those too', async () => {
    const group = newGroup();
    const marks = new Set(Array.from({ length: MAX_DEAD_LETTERS_TRACKED }, (_, index) => `mark-${index}`));
    await tables.dynamo.send(
      new UpdateCommand({
        TableName: TABLES.groups.localName,
        // The group's dead-letter item (see the adapter's deadLettersKeyOf), full of marks.
        Key: { [TABLES.groups.partitionKey]: `${group}#dead-letters` },
        UpdateExpression: 'SET dead_lettered = :count, dead_letter_places = :marks, dead_letters_version = :count',
        ExpressionAttributeValues: { ':count': MAX_DEAD_LETTERS_TRACKED, ':marks': marks },
      }),
    );
    await store.countDeadLetter(place(group, 'past-the-cap'));
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: MAX_DEAD_LETTERS_TRACKED + 1 });
    await store.uncountDeadLetter(place(group, 'past-the-cap'));
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: MAX_DEAD_LETTERS_TRACKED });
    // Nothing unmarked is left: a place never counted uncounts nothing.
    await store.uncountDeadLetter(place(group, 'past-the-cap'));
    expect(await store.getGroup(group)).toMatchObject({ deadLettered: MAX_DEAD_LETTERS_TRACKED });
  });

  it('counts on without remembering more keys when the group already tracks MAX_KEYS_TRACKED', async () => {
    const group = newGroup();
    const keys = Array.from({ length: MAX_KEYS_TRACKED }, (_, index) => `k${index}`);
    await store.recordIntake({ messageGroupId: group, events: MAX_KEYS_TRACKED, orderingKeys: keys, acceptedAt: T0 });
    await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['one-too-many'], acceptedAt: T1 });
    expect(await store.getGroup(group)).toMatchObject({ depth: MAX_KEYS_TRACKED + 1, keysAffected: MAX_KEYS_TRACKED, oldestAcceptedAt: T0 });
  });

  describe('events per minute', () => {
    /** `minutes` whole minutes after 12:00 on T0's day, plus `seconds`. */
    const at = (minutes: number, seconds = 0) => new Date(Date.parse(T0) + minutes * 60_000 + seconds * 1000);
    const rawItem = async (group: string) =>
      (await tables.dynamo.send(new GetCommand({ TableName: TABLES.groups.localName, Key: { [TABLES.groups.partitionKey]: group }, ConsistentRead: true }))).Item ?? {};
    const bucketsOn = (item: Record<string, unknown>, counter: RateCounter) => allBucketNamesOf(counter).filter((name) => item[name] !== undefined);

    it('counts accepted events from intake and settled ones from progress into their minutes, by the writes already made', async () => {
      const group = newGroup();
      await store.recordIntake({ messageGroupId: group, events: 5, orderingKeys: ['k1'], acceptedAt: at(1, 10).toISOString() });
      await store.recordIntake({ messageGroupId: group, events: 4, orderingKeys: ['k1'], acceptedAt: at(1, 50).toISOString() });
      await store.recordProgress(clear(group, 2), at(1, 55));
      // A head waiting settles nothing, and counts nothing.
      await store.recordProgress({ messageGroupId: group, settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, eventId: 'e3', orderingKey: 'k1', attempts: 1, lastError: 'HTTP 500', acceptedAt: T0 } }, at(1, 56));
      await store.recordIntake({ messageGroupId: group, events: 1, orderingKeys: ['k1'], acceptedAt: at(2, 1).toISOString() });
      await store.recordProgress(clear(group, 3), at(2, 2));

      const listed = (await store.listActiveGroups()).find((candidate) => candidate.messageGroupId === group);
      expect(listed).toBeDefined();
      expect(ratesOfLastFullMinute(listed?.rateBuckets ?? {}, at(2, 30))).toEqual({ acceptedPerMinute: 9, deliveredPerMinute: 2 });
      expect(ratesOfLastFullMinute(listed?.rateBuckets ?? {}, at(3, 0))).toEqual({ acceptedPerMinute: 1, deliveredPerMinute: 3 });
      // Idle since: nothing is counted for a minute without writes.
      expect(ratesOfLastFullMinute(listed?.rateBuckets ?? {}, at(4, 0))).toEqual({ acceptedPerMinute: 0, deliveredPerMinute: 0 });
    });

    it('counts the settled events of a drain in one write, and keeps the counts through the draining', async () => {
      const group = newGroup();
      await store.recordIntake({ messageGroupId: group, events: 3, orderingKeys: ['k1'], acceptedAt: at(7).toISOString() });
      await store.recordProgress({ ...clear(group, 3), isLikelyDrained: true }, at(7, 30));
      expect(await isActive(group)).toBe(false);
      const drained = await store.getGroup(group);
      expect(ratesOfLastFullMinute(drained?.rateBuckets ?? {}, at(8))).toEqual({ acceptedPerMinute: 3, deliveredPerMinute: 3 });
    });

    it('keeps at most three buckets of each counter on the item, whatever the minutes written, and starts afresh after a pause', async () => {
      const group = newGroup();
      for (const minute of [0, 1, 2, 3, 10, 11, 75, 200, 201]) {
        await store.recordIntake({ messageGroupId: group, events: 2, orderingKeys: ['k1'], acceptedAt: at(minute).toISOString() });
        await store.recordProgress(clear(group, 1), at(minute, 5));
        const item = await rawItem(group);
        expect(bucketsOn(item, RateCounter.accepted).length).toBeLessThanOrEqual(3);
        expect(bucketsOn(item, RateCounter.delivered).length).toBeLessThanOrEqual(3);
      }
      expect(ratesOfLastFullMinute((await store.getGroup(group))?.rateBuckets ?? {}, at(202))).toEqual({ acceptedPerMinute: 2, deliveredPerMinute: 1 });
    });
  });
});

/**
 * The lag view's `dead_lettered` against the list of dead letters, on the local stack, in the race
 * of the dead-letter count: ingest enqueues first and records second, so the consumer can give an event up
 * before ingest has recorded it. Here ingest's record of each event waits until the consumer has
 * dead-lettered it; the count must still equal the list, and come back to exactly 0 after a redrive.
 */
import { describe, expect, it } from 'vitest';
import { createGroupStore } from '../../lambda/adapters/group-store.js';
import { call, makeEvent, subscribe, uniquePrefix } from './support/api.js';
import { deadLettersOf, lagRowOf, redriveUntilDone } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const EVENT_COUNT = 6;

describe('local stack dead_lettered count', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('dl-count');
  let isRefusing = true;
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '1', RETRY_BASE_SECONDS: '0' },
    {
      respond: () => (isRefusing ? { statusCode: 500 } : undefined),
      // Ingest records an event only once the consumer has given it up: the race, every time.
      wrapIngestPorts: (ports) => ({
        ...ports,
        recordAccepted: async (record) => {
          if (record.eventId.startsWith(prefix)) {
            await waitFor(`the consumer's give-up of ${record.eventId} before its record`, async () => (await stack().eventItem(record.eventId))?.status === 'dead_lettered');
          }
          return ports.recordAccepted(record);
        },
      }),
    },
  );

  /** The group's count as stored, not clamped by the view: a drift below 0 shows. */
  const storedCount = async (messageGroupId: string): Promise<number | undefined> =>
    (await createGroupStore(stack().clients.dynamo, stack().resources.groupsTable).getGroup(messageGroupId))?.deadLettered;

  it('counts every dead letter the consumer gave up before ingest recorded it, and none after their redrive', async () => {
    const key = `${prefix}-sub`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    const events = Array.from({ length: EVENT_COUNT }, (_, index) => makeEvent(key, `${key}-${index + 1}`));
    const answer = await call(stack().url, 'POST', '/v1/events', { events });
    expect(answer.status).toBe(202);
    const group = (answer.body as { results: { message_group_id: string }[] }).results[0]?.message_group_id ?? '';

    await waitFor('every event dead-lettered and listed', async () => (await deadLettersOf(stack(), key)).length === EVENT_COUNT);
    // The consumer's lag write after a batch may trail its dead letters by a moment: poll, then assert.
    await waitFor(`the lag view to count ${EVENT_COUNT} dead letters`, async () => {
      expect(await lagRowOf(stack(), group)).toMatchObject({ depth: 0, dead_lettered: EVENT_COUNT });
      expect(await storedCount(group)).toBe(EVENT_COUNT);
      return true;
    }, 5_000);

    isRefusing = false;
    expect(await redriveUntilDone(stack(), key)).toHaveLength(EVENT_COUNT);
    await waitFor('every redriven event delivered', () => receiver().deliveredTo(key).length === EVENT_COUNT);
    await waitFor('the group gone from the lag view', async () => (await lagRowOf(stack(), group)) === undefined);
    expect(await deadLettersOf(stack(), key)).toEqual([]);
    expect(await storedCount(group)).toBe(0);
  });
});

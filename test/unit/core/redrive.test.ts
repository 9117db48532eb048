import { describe, expect, it } from 'vitest';
import type { OutgoingMessage } from '../../../lambda/core/enqueue-plan.js';
import { queuedEventSchema, type QueuedEvent } from '../../../lambda/core/event.js';
import { redriveStep, type DeadLetterMessage, type ListedDeadLetter, type RedrivePorts } from '../../../lambda/core/redrive.js';

const at = new Date('2026-12-02T13:00:00.000Z');

function queued(eventId: string, subscription: string, group: string): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: subscription, type: 'x', payload: { eventId } },
    ordering_key: subscription,
    message_group_id: group,
    accepted_at: '2026-12-02T12:00:00.000Z',
  };
}

function letter(eventId: string, subscription: string, group: string, sequence: number | undefined): DeadLetterMessage {
  return { messageId: `m-${eventId}`, receiptHandle: `rh-${eventId}`, messageGroupId: group, body: JSON.stringify(queued(eventId, subscription, group)), sequence, attributes: {} };
}

/** A dead-letter queue that hands out its messages as FIFO does: a group's next only after the previous left. */
function fakeQueue(
  initial: DeadLetterMessage[],
  options: { refuse?: (message: OutgoingMessage) => boolean; listed: ListedDeadLetter[]; redrivenBefore?: readonly string[] },
) {
  const queue = [...initial];
  const inFlight = new Set<string>();
  const enqueued: OutgoingMessage[] = [];
  const redriven: string[] = [];
  const released: string[] = [];
  const ports: RedrivePorts = {
    listDeadLetters: async () => options.listed,
    receive: async () => {
      const lockedGroups = new Set(queue.filter((m) => inFlight.has(m.messageId)).map((m) => m.messageGroupId));
      const batch: DeadLetterMessage[] = [];
      for (const message of queue) {
        if (batch.length === 10) break;
        if (inFlight.has(message.messageId) || lockedGroups.has(message.messageGroupId)) continue;
        // FIFO: only the first available message of each group, then the group is locked.
        batch.push(message);
        inFlight.add(message.messageId);
        lockedGroups.add(message.messageGroupId);
      }
      return batch;
    },
    release: async (messages) => {
      for (const message of messages) {
        inFlight.delete(message.messageId);
        released.push(message.messageId);
      }
    },
    remove: async (message) => {
      queue.splice(queue.findIndex((m) => m.messageId === message.messageId), 1);
      inFlight.delete(message.messageId);
    },
    moveToBack: async (message) => {
      queue.splice(queue.findIndex((m) => m.messageId === message.messageId), 1);
      inFlight.delete(message.messageId);
      queue.push({ ...message, messageId: `${message.messageId}-again` });
    },
    enqueue: async (message) => {
      if (options.refuse?.(message) === true) return false;
      enqueued.push(message);
      return true;
    },
    markRedriven: async ({ queued: event }) => {
      const isListed = !redriven.includes(event.event.event_id);
      redriven.push(event.event.event_id);
      return isListed;
    },
    wasRedriven: async (eventId) => options.redrivenBefore?.includes(eventId) ?? false,
    groupOf: async (key) => `now-${key}`,
    deduplicationIdOf: (eventId) => `redrive-${eventId}`,
    now: () => at,
    hasTime: () => true,
  };
  return { ports, queue, enqueued, redriven, released };
}

describe('redriveStep', () => {
  it('goes in sequence order when a key’s dead letters sit in two groups (before and after a repartition)', async () => {
    const listed = [
      { event_id: 'a1', message_group_id: 'partition-3', sequence: 1 },
      { event_id: 'a2', message_group_id: 'old', sequence: 2 },
    ];
    // The newer group's dead letter is handed out first.
    const fake = fakeQueue([letter('a2', 'sub_a', 'old', 2), letter('a1', 'sub_a', 'partition-3', 1)], { listed });
    const step = await redriveStep('sub_a', fake.ports);
    expect(step.isDone).toBe(true);
    expect(fake.enqueued.map((m) => m.deduplicationId)).toEqual(['redrive-a1', 'redrive-a2']);
  });

  it('removes what a crashed step left in the queue after listing it off, enqueuing it once', async () => {
    // a2 was enqueued and taken off the list; the step crashed before removing it.
    const fake = fakeQueue([letter('a2', 'sub_a', 'ga', 2), letter('a3', 'sub_a', 'ga', 3)], {
      listed: [{ event_id: 'a3', message_group_id: 'ga', sequence: 3 }],
      redrivenBefore: ['a2'],
    });
    const step = await redriveStep('sub_a', fake.ports);
    expect(step).toEqual({ redriven: [{ event_id: 'a3', sequence: 3 }], remaining: 0, isDone: true });
    expect(fake.enqueued.map((m) => m.deduplicationId)).toEqual(['redrive-a3']);
    expect(fake.queue).toEqual([]);
  });

  it('re-enqueues a key’s dead letters in their order, keeping ids and sequences, marked and routed as now', async () => {
    const listed = [
      { event_id: 'a2', message_group_id: 'ga', sequence: 2 },
      { event_id: 'a4', message_group_id: 'ga', sequence: 4 },
    ];
    const fake = fakeQueue([letter('a2', 'sub_a', 'ga', 2), letter('b1', 'sub_b', 'gb', 1), letter('a4', 'sub_a', 'ga', 4)], { listed });
    const step = await redriveStep('sub_a', fake.ports);
    expect(step).toEqual({ redriven: [{ event_id: 'a2', sequence: 2 }, { event_id: 'a4', sequence: 4 }], remaining: 0, isDone: true });
    expect(fake.enqueued.map((m) => [m.deduplicationId, m.messageGroupId])).toEqual([
      ['redrive-a2', 'now-sub_a'],
      ['redrive-a4', 'now-sub_a'],
    ]);
    const body = queuedEventSchema.parse(JSON.parse(fake.enqueued[0]?.body ?? ''));
    expect(body).toMatchObject({ event: { event_id: 'a2', payload: { eventId: 'a2' } }, message_group_id: 'now-sub_a', redrive: { sequence: 2, redriven_at: at.toISOString() } });
    expect(fake.redriven).toEqual(['a2', 'a4']);
    // Another key's dead letter stays, released.
    expect(fake.queue.map((m) => m.messageId)).toEqual(['m-b1']);
    expect(fake.released).toContain('m-b1');
  });

  it('moves another key’s dead letters in the same group to the back, their order kept', async () => {
    const listed = [{ event_id: 'a2', message_group_id: 'p1', sequence: 2 }];
    const fake = fakeQueue([letter('b1', 'sub_b', 'p1', 1), letter('b2', 'sub_b', 'p1', 2), letter('a2', 'sub_a', 'p1', 2)], { listed });
    const step = await redriveStep('sub_a', fake.ports);
    expect(step.isDone).toBe(true);
    expect(fake.enqueued.map((m) => m.deduplicationId)).toEqual(['redrive-a2']);
    expect(fake.queue.map((m) => m.messageId)).toEqual(['m-b1-again', 'm-b2-again']);
  });

  it('stops in order when SQS refuses one, leaving it listed and in the dead-letter queue', async () => {
    const listed = [
      { event_id: 'a2', message_group_id: 'ga', sequence: 2 },
      { event_id: 'a4', message_group_id: 'ga', sequence: 4 },
    ];
    const fake = fakeQueue([letter('a2', 'sub_a', 'ga', 2), letter('a4', 'sub_a', 'ga', 4)], { listed, refuse: (m) => m.deduplicationId === 'redrive-a4' });
    const step = await redriveStep('sub_a', fake.ports);
    expect(step).toEqual({ redriven: [{ event_id: 'a2', sequence: 2 }], remaining: 1, isDone: false });
    expect(fake.queue.map((m) => m.messageId)).toEqual(['m-a4']);
    expect(fake.redriven).toEqual(['a2']);
    expect(fake.released).toEqual(['m-a4']);
  });

  it('takes the sequence from the list when the dead letter lacks it, and enqueues nothing unlisted', async () => {
    const fake = fakeQueue([letter('a2', 'sub_a', 'ga', undefined)], { listed: [{ event_id: 'a2', message_group_id: 'ga', sequence: 7 }] });
    expect((await redriveStep('sub_a', fake.ports)).redriven).toEqual([{ event_id: 'a2', sequence: 7 }]);
    const empty = fakeQueue([letter('b9', 'sub_b', 'gb', 1)], { listed: [] });
    expect(await redriveStep('sub_a', empty.ports)).toEqual({ redriven: [], remaining: 0, isDone: true });
    expect(empty.enqueued).toEqual([]);
    expect(empty.queue.map((m) => m.messageId)).toEqual(['m-b9']);
  });

  it('leaves alone a dead letter of the subscription that was never listed (moved by SQS’s backstop)', async () => {
    const fake = fakeQueue([letter('a0', 'sub_a', 'ga', undefined), letter('a2', 'sub_a', 'gb', 2)], { listed: [{ event_id: 'a2', message_group_id: 'gb', sequence: 2 }] });
    const step = await redriveStep('sub_a', fake.ports);
    expect(step.isDone).toBe(true);
    expect(fake.enqueued.map((m) => m.deduplicationId)).toEqual(['redrive-a2']);
    expect(fake.queue.map((m) => m.messageId)).toEqual(['m-a0']);
    expect(fake.released).toContain('m-a0');
  });
});

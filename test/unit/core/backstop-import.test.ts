import { describe, expect, it } from 'vitest';
import { importBackstopStep, type BackstopImportPorts, type BackstopMessage, type KeyHead } from '../../../lambda/core/backstop-import.js';
import { encodeQueuedMessage, type QueuedEvent } from '../../../lambda/core/event.js';
import type { DeadLetterPlace } from '../../../lambda/core/dead-letter.js';
import type { GroupProgress } from '../../../lambda/core/lag.js';
import { InMemoryDeadLetterStore, InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

const at = new Date('2026-12-02T13:00:00.000Z');

function queued(eventId: string, key: string): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: key, type: 'x', payload_json: JSON.stringify({ eventId }) },
    ordering_key: key,
    message_group_id: `g-${key}`,
    accepted_at: '2026-12-02T12:00:00.000Z',
  };
}

function message(id: string, body: string): BackstopMessage {
  return { messageId: id, receiptHandle: `rh-${id}`, messageGroupId: 'g', body, receiveCount: 60 };
}

/** A backstop queue handing out its messages 10 at a time, keeping what is released. */
function harness(messages: BackstopMessage[], heads: ReadonlyMap<string, KeyHead> = new Map()) {
  const queue = [...messages];
  const held = new Set<string>();
  const deadLetters = new InMemoryDeadLetterStore();
  const events = new InMemoryDeliveryStore();
  const progress: GroupProgress[] = [];
  const counted: DeadLetterPlace[] = [];
  const ports: BackstopImportPorts = {
    receive: async () => {
      const batch = queue.filter((m) => !held.has(m.messageId)).slice(0, 10);
      for (const m of batch) held.add(m.messageId);
      return batch;
    },
    release: async (released) => {
      for (const m of released) held.delete(m.messageId);
    },
    remove: async (removed) => {
      queue.splice(queue.findIndex((m) => m.messageId === removed.messageId), 1);
      held.delete(removed.messageId);
    },
    findHead: async (key) => heads.get(key),
    deadLetters,
    countDeadLetter: async (place) => {
      counted.push(place);
    },
    events,
    recordProgress: async (p) => {
      progress.push(p);
    },
    now: () => at,
    hasTime: () => true,
  };
  return { ports, queue, deadLetters, events, progress, counted };
}

describe('importBackstopStep', () => {
  it('moves each event into the store with the sequence its key gave it, records it dead-lettered, and empties the queue', async () => {
    const { ports, queue, deadLetters, events, progress, counted } = harness(
      [message('m1', JSON.stringify(queued('a1', 'a'))), message('m2', JSON.stringify(queued('b1', 'b')))],
      new Map([['a', { eventId: 'a1', sequence: 7, attempts: 2 }]]),
    );
    await events.recordAccepted({ eventId: 'a1', subscriptionId: 'a', tenantId: 't', orderingKey: 'a', messageGroupId: 'g-a', acceptedAt: '2026-12-02T12:00:00.000Z' });
    const step = await importBackstopStep(ports);
    expect(step).toEqual({
      imported: [
        { event_id: 'a1', subscription_id: 'a', sequence: 7 },
        { event_id: 'b1', subscription_id: 'b', sequence: null },
      ],
      unreadable: 0,
      isDone: true,
    });
    expect(queue).toEqual([]);
    expect(deadLetters.all('a').map((l) => [l.queued.event.event_id, l.sequence, l.attempts])).toEqual([['a1', 7, 2]]);
    expect(deadLetters.all('a')[0]?.reason).toBe('moved to the dead-letter queue by SQS after 60 receives (a crash loop); 2 attempts made');
    expect(deadLetters.all('b').map((l) => [l.queued.event.event_id, l.sequence])).toEqual([['b1', undefined]]);
    expect(events.events.get('a1')).toMatchObject({ status: 'dead_lettered', sequence: 7 });
    // Only what ingest counted leaves the depth; every dead letter is counted by its place.
    expect(progress.map((p) => [p.messageGroupId, p.settled])).toEqual([['g-a', 1]]);
    expect(counted).toEqual([...deadLetters.all('a'), ...deadLetters.all('b')].map((l) => ({ subscriptionId: l.subscriptionId, position: l.position, messageGroupId: l.messageGroupId })));
  });

  it('gives a moved event the sequence recorded for it when its key moved on since', async () => {
    const { ports, deadLetters, events } = harness([message('m1', JSON.stringify(queued('a2', 'a')))], new Map([['a', { eventId: 'a3', sequence: 9, attempts: 1 }]]));
    await events.recordSequence({ eventId: 'a2', sequence: 8 });
    const step = await importBackstopStep(ports);
    expect(step.imported).toEqual([{ event_id: 'a2', subscription_id: 'a', sequence: 8 }]);
    expect(deadLetters.all('a').map((l) => l.sequence)).toEqual([8]);
  });

  it('gives a moved event the number its key keeps for it as the previous head, before the consumer wrote it on its record', async () => {
    const head = { eventId: 'a3', sequence: 9, attempts: 1, previous: { eventId: 'a2', sequence: 8 } };
    const { ports, deadLetters } = harness([message('m1', JSON.stringify(queued('a2', 'a')))], new Map([['a', head]]));
    const step = await importBackstopStep(ports);
    expect(step.imported).toEqual([{ event_id: 'a2', subscription_id: 'a', sequence: 8 }]);
    expect(deadLetters.all('a').map((l) => l.sequence)).toEqual([8]);
  });

  it('gives a moved event the number its batch gave it, kept on the key until the consumer wrote it on its record', async () => {
    const head = { eventId: 'a3', sequence: 9, attempts: 1, numberedAhead: [{ eventId: 'a4', sequence: 10 }, { eventId: 'a5', sequence: 11 }] };
    const { ports, deadLetters } = harness([message('m1', JSON.stringify(queued('a5', 'a')))], new Map([['a', head]]));
    const step = await importBackstopStep(ports);
    expect(step.imported).toEqual([{ event_id: 'a5', subscription_id: 'a', sequence: 11 }]);
    expect(deadLetters.all('a').map((l) => l.sequence)).toEqual([11]);
  });

  it('moves each event of a pack in order, and removes the message once all are in the store', async () => {
    const head = { eventId: 'a1', sequence: 4, attempts: 3 };
    const { ports, queue, deadLetters } = harness([message('m1', encodeQueuedMessage([queued('a1', 'a'), queued('a2', 'a'), queued('a3', 'a')]))], new Map([['a', head]]));
    const step = await importBackstopStep(ports);
    expect(step).toEqual({
      imported: [
        { event_id: 'a1', subscription_id: 'a', sequence: 4 },
        { event_id: 'a2', subscription_id: 'a', sequence: null },
        { event_id: 'a3', subscription_id: 'a', sequence: null },
      ],
      unreadable: 0,
      isDone: true,
    });
    expect(queue).toEqual([]);
    expect(deadLetters.all('a').map((l) => l.queued.event.event_id)).toEqual(['a1', 'a2', 'a3']);
  });

  it('stops between the events of a pack when its time is up, gives the message back, and finishes it in the next step', async () => {
    const { ports, queue, deadLetters } = harness([message('m1', encodeQueuedMessage([queued('a1', 'a'), queued('a2', 'a'), queued('a3', 'a')])), message('m2', JSON.stringify(queued('b1', 'b')))]);
    // Time for the first step's first receive and the pack's first two events only.
    let checks = 0;
    const step = await importBackstopStep({ ...ports, hasTime: () => (checks += 1) <= 3 });
    expect(step).toEqual({ imported: [{ event_id: 'a1', subscription_id: 'a', sequence: null }, { event_id: 'a2', subscription_id: 'a', sequence: null }], unreadable: 0, isDone: false });
    expect(queue.map((m) => m.messageId)).toEqual(['m1', 'm2']);
    const next = await importBackstopStep(ports);
    expect(next.imported.map((event) => event.event_id)).toEqual(['a3', 'b1']);
    expect(next.isDone).toBe(true);
    expect(queue).toEqual([]);
    expect(deadLetters.all('a').map((l) => l.queued.event.event_id)).toEqual(['a1', 'a2', 'a3']);
  });

  it('moves the events of a pack beside an item that is no event, leaves the message for a person, and finishes', async () => {
    const body = JSON.stringify({ version: 2, events: [queued('a1', 'a'), { not: 'an event' }, queued('a2', 'a')] });
    const { ports, queue, deadLetters } = harness([message('m1', body)]);
    const step = await importBackstopStep(ports);
    expect(step).toEqual({
      imported: [
        { event_id: 'a1', subscription_id: 'a', sequence: null },
        { event_id: 'a2', subscription_id: 'a', sequence: null },
      ],
      unreadable: 1,
      isDone: true,
    });
    expect(queue.map((m) => m.messageId)).toEqual(['m1']);
    expect(deadLetters.all('a')).toHaveLength(2);
    // A second step finds the message's events settled and lists nothing twice.
    expect(await importBackstopStep(ports)).toEqual({ imported: [], unreadable: 1, isDone: true });
    expect(deadLetters.all('a')).toHaveLength(2);
  });

  it('imports a redriven copy the consumer gave up before, whichever clock stamped the redrive earlier, and numbers its give-up after', async () => {
    const original = queued('a1', 'a');
    // Given up by the consumer at 12:30:00.100 on its clock; redriven at 12:30:00.050 on the
    // operations function's; that copy then killed every consumer that took it (a crash loop).
    const copy: QueuedEvent = { ...original, redrive: { sequence: 1, redriven_at: '2026-12-02T12:30:00.050Z', give_up: 1 } };
    const { ports, queue, deadLetters, events } = harness([message('m1', JSON.stringify(copy))]);
    await events.markDeadLettered({ queued: original, sequence: 1, attempts: 3, at: '2026-12-02T12:30:00.100Z', reason: 'HTTP 500' });
    const step = await importBackstopStep(ports);
    expect(step.imported).toEqual([{ event_id: 'a1', subscription_id: 'a', sequence: 1 }]);
    expect(queue).toEqual([]);
    expect(deadLetters.all('a').map((l) => l.queued.redrive?.give_up)).toEqual([1]);
    expect(events.events.get('a1')).toMatchObject({ status: 'dead_lettered', giveUp: 2 });
  });

  it('only removes an event that was settled after all', async () => {
    const { ports, queue, deadLetters, events } = harness([message('m1', JSON.stringify(queued('a1', 'a')))]);
    await events.markDelivered({ queued: queued('a1', 'a'), sequence: 1, attempts: 1, at: at.toISOString() });
    expect(await importBackstopStep(ports)).toEqual({ imported: [], unreadable: 0, isDone: true });
    expect(queue).toEqual([]);
    expect(deadLetters.all('a')).toEqual([]);
  });

  it('reaches the events behind a record that is no event in its FIFO group, and then finishes', async () => {
    // A FIFO queue: a group's messages in order, nothing of a group while one of it is in flight.
    const messages = [message('bad', 'garbage'), ...Array.from({ length: 14 }, (_, n) => message(`m${n}`, JSON.stringify(queued(`a${n}`, 'a'))))];
    const { ports, queue } = harness(messages);
    const fifoPorts: BackstopImportPorts = {
      ...ports,
      receive: async () => {
        const locked = queue.some((m) => held.has(m.messageId));
        if (locked) return [];
        const batch = queue.slice(0, 10);
        for (const m of batch) held.add(m.messageId);
        return batch;
      },
      release: async (released) => {
        for (const m of released) held.delete(m.messageId);
      },
      remove: async (removed) => {
        held.delete(removed.messageId);
        await ports.remove(removed);
      },
    };
    const held = new Set<string>();
    const step = await importBackstopStep(fifoPorts);
    expect(step).toMatchObject({ unreadable: 1, isDone: true });
    expect(step.imported).toHaveLength(14);
    expect(queue.map((m) => m.messageId)).toEqual(['bad']);
  });

  it('leaves records that are no event in the queue, counts them, and still finishes', async () => {
    const { ports, queue } = harness([message('m1', 'garbage'), message('m2', JSON.stringify(queued('a1', 'a')))]);
    const step = await importBackstopStep(ports);
    expect(step).toMatchObject({ unreadable: 1, isDone: true });
    expect(step.imported.map((l) => l.event_id)).toEqual(['a1']);
    expect(queue.map((m) => m.messageId)).toEqual(['m1']);
  });

  it('keeps one dead letter, in its place, when a crash fell before the message’s removal', async () => {
    const { ports, queue, deadLetters } = harness([message('m1', JSON.stringify(queued('a1', 'a')))], new Map([['a', { eventId: 'a1', sequence: 3, attempts: 1 }]]));
    await expect(importBackstopStep({ ...ports, remove: async () => Promise.reject(new Error('crash')) })).rejects.toThrow('crash');
    // Its visibility timeout ends: the message is handed out again.
    await ports.release([...queue]);
    await importBackstopStep(ports);
    expect(queue).toEqual([]);
    expect(deadLetters.all('a').map((l) => [l.position.endsWith('000000000003'), l.sequence])).toEqual([[true, 3]]);
  });
});

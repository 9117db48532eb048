/**
 * The design's own verification: 20 keys × 25 interleaved events, 8 concurrent consumer
 * invocations; every key's events arrive in the order they were accepted, numbered 1..25, signed.
 */
import { describe, expect, it } from 'vitest';
import { makeEvent, postEvents, subscribe, uniquePrefix, type TestEvent } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const KEYS = 20;
const EVENTS_PER_KEY = 25;
/** Request sizes a producer cycles through, so requests hold 1 to 4 events of its key. */
const REQUEST_SIZES = [1, 2, 3, 4];

describe('local stack ordering', { timeout: 90_000 }, () => {
  const { stack, receiver } = useStackAndReceiver({ CONSUMER_CONCURRENCY: '8' });

  it('delivers each key in accepted order, numbered 1..25 and signed, when 20 keys are sent concurrently', async () => {
    const prefix = uniquePrefix('order');
    const keys = Array.from({ length: KEYS }, (_, k) => `${prefix}-key-${k}`);
    for (const key of keys) receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));

    // One producer per key, all at once: each waits for 202 before sending its key's next events.
    const accepted = new Map<string, string[]>();
    const groups = new Map<string, Set<string>>();
    await Promise.all(
      keys.map(async (key) => {
        const events: TestEvent[] = Array.from({ length: EVENTS_PER_KEY }, (_, n) => makeEvent(key, `${key}-evt-${n}`));
        const order: string[] = [];
        for (let start = 0, request = 0; start < events.length; request += 1) {
          const size = REQUEST_SIZES[request % REQUEST_SIZES.length] ?? 1;
          const results = await postEvents(stack().url, events.slice(start, start + size));
          for (const result of results) {
            expect(result.status).toBe('accepted');
            order.push(result.event_id);
            groups.set(key, (groups.get(key) ?? new Set()).add(result.message_group_id));
          }
          start += size;
        }
        accepted.set(key, order);
      }),
    );

    await waitFor('every event delivered', () => receiver().delivered().length >= KEYS * EVENTS_PER_KEY, 60_000);

    for (const key of keys) {
      expect(groups.get(key)?.size, `one message group for ${key}`).toBe(1);
      const deliveries = receiver().deliveredTo(key);
      expect(deliveries.map((d) => d.webhookId), `order of ${key}`).toEqual(accepted.get(key));
      expect(deliveries.map((d) => d.sequence)).toEqual(Array.from({ length: EVENTS_PER_KEY }, (_, n) => n + 1));
      expect(deliveries.every((d) => d.signature === SignatureCheck.verified), `signatures of ${key}`).toBe(true);
    }
    // Healthy receivers, no faults: every event exactly once.
    expect(receiver().attempts()).toHaveLength(KEYS * EVENTS_PER_KEY);
    expect(stack().logs.filter((line) => / (WARN|ERROR) /.test(line))).toEqual([]);
  });
});

describe('local stack ordering in partition mode', { timeout: 60_000 }, () => {
  const PARTITIONS = 3;
  const PARTITIONED_KEYS = 6;
  const EVENTS = 5;
  const { stack, receiver } = useStackAndReceiver({ PARTITION_COUNT: String(PARTITIONS), CONSUMER_CONCURRENCY: '4' });

  it('routes keys to partition-<p> groups and still numbers and orders each key on its own', async () => {
    const prefix = uniquePrefix('partitioned');
    const keys = Array.from({ length: PARTITIONED_KEYS }, (_, k) => `${prefix}-key-${k}`);
    for (const key of keys) receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    // Interleaved in one request per round: several keys share a partition, each keeps its order.
    const groups = new Set<string>();
    for (let n = 0; n < EVENTS; n += 1) {
      for (const result of await postEvents(stack().url, keys.map((key) => makeEvent(key, `${key}-evt-${n}`)))) groups.add(result.message_group_id);
    }
    expect([...groups].every((group) => /^partition-[0-2]$/.test(group))).toBe(true);

    await waitFor('every event delivered', () => receiver().delivered().length >= PARTITIONED_KEYS * EVENTS, 30_000);
    for (const key of keys) {
      const deliveries = receiver().deliveredTo(key);
      expect(deliveries.map((d) => d.webhookId)).toEqual(Array.from({ length: EVENTS }, (_, n) => `${key}-evt-${n}`));
      expect(deliveries.map((d) => d.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(deliveries.every((d) => d.signature === SignatureCheck.verified)).toBe(true);
    }
  });
});

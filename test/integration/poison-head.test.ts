/**
 * A poison head: an event its receiver always refuses gets exactly MAX_DELIVERY_ATTEMPTS real
 * attempts, is dead-lettered with its reason, and its key moves on; other keys never wait for it.
 */
import { namedEventId } from '../../lambda/core/fan-out-id.js';
import { describe, expect, it } from 'vitest';
import { makeEvent, postEvents, queuedFieldsOf, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const MAX_ATTEMPTS = 3;

describe('local stack poison head', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('poison');
  const poisonId = `${prefix}-p-2`;
  // A fixed 2 s between attempts, so the poison head is retried for about 4 s while the other key flows.
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: String(MAX_ATTEMPTS), RETRY_BASE_SECONDS: '2', RETRY_MAX_SECONDS: '2' },
    { respond: (webhook) => (webhook.webhookId === poisonId ? { statusCode: 500 } : undefined) },
  );

  it('dead-letters the head after exactly MAX_DELIVERY_ATTEMPTS attempts and delivers the rest of its key after it', async () => {
    const poisoned = `${prefix}-poisoned`;
    const healthy = `${prefix}-healthy`;
    receiver().setSecret(poisoned, await subscribe(stack().url, poisoned, receiver().endpointFor(poisoned)));
    receiver().setSecret(healthy, await subscribe(stack().url, healthy, receiver().endpointFor(healthy)));
    const poisonedEvents = [1, 2, 3, 4].map((n) => makeEvent(poisoned, `${prefix}-p-${n}`));
    const healthyEvents = [1, 2, 3, 4, 5].map((n) => makeEvent(healthy, `${prefix}-h-${n}`));

    const [group] = (await postEvents(stack().url, poisonedEvents)).map((result) => result.message_group_id);
    await waitFor('the first attempt at the poison head', () => receiver().attemptsOf(poisonId).length >= 1);
    await postEvents(stack().url, healthyEvents);

    await waitFor('the rest of the poisoned key delivered', () => receiver().deliveredTo(poisoned).length === 3);
    await waitFor('the healthy key delivered', () => receiver().deliveredTo(healthy).length === 5);

    const poisonAttempts = receiver().attemptsOf(poisonId);
    expect(poisonAttempts.map((attempt) => attempt.statusCode)).toEqual([500, 500, 500]);
    // Every attempt carries the number the event got on its first attempt.
    expect(poisonAttempts.map((attempt) => attempt.sequence)).toEqual([2, 2, 2]);
    expect(poisonAttempts.every((attempt) => attempt.signature === SignatureCheck.verified)).toBe(true);

    // The key moved on after the give-up, in order, and the receiver sees the gap at 2.
    const poisonedDeliveries = receiver().deliveredTo(poisoned);
    expect(poisonedDeliveries.map((d) => d.webhookId)).toEqual([`${prefix}-p-1`, `${prefix}-p-3`, `${prefix}-p-4`]);
    expect(poisonedDeliveries.map((d) => d.sequence)).toEqual([1, 3, 4]);
    // Under the signature, the body says the same, and that 2 was given up, not lost: 3 follows 1.
    const placeOf = (body: string): unknown => {
      const { sequence, ordering_key, previous_sequence } = JSON.parse(body) as Record<string, unknown>;
      return { sequence, ordering_key, previous_sequence };
    };
    expect(poisonedDeliveries.map((d) => placeOf(d.body))).toEqual([
      { sequence: 1, ordering_key: poisoned, previous_sequence: 0 },
      { sequence: 3, ordering_key: poisoned, previous_sequence: 1 },
      { sequence: 4, ordering_key: poisoned, previous_sequence: 3 },
    ]);
    expect(poisonAttempts.map((attempt) => placeOf(attempt.body))).toEqual([1, 2, 3].map(() => ({ sequence: 2, ordering_key: poisoned, previous_sequence: 1 })));
    const lastPoisonAttempt = poisonAttempts.at(-1)?.receivedAt.getTime() ?? Infinity;
    const afterPoison = poisonedDeliveries.filter((d) => (d.sequence ?? 0) > 2);
    expect(afterPoison.every((d) => d.receivedAt.getTime() >= lastPoisonAttempt)).toBe(true);

    // The other key flowed while the head was being retried.
    const healthyDeliveries = receiver().deliveredTo(healthy);
    expect(healthyDeliveries.map((d) => d.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(healthyDeliveries.every((d) => d.receivedAt.getTime() < lastPoisonAttempt)).toBe(true);

    // The dead letter is in the store, whole, and says why; nothing went to the backstop queue.
    const [deadLetter] = await waitFor('the dead letter', async () => {
      const letters = await stack().deadLetterItems(poisoned);
      return letters.length > 0 ? letters : undefined;
    });
    expect(JSON.parse(String(deadLetter?.queued_event))).toMatchObject({ event: { ...queuedFieldsOf(makeEvent(poisoned, poisonId)), event_id: namedEventId(poisonId, 'tenant-it', poisoned) }, named: { event_id: poisonId }, message_group_id: group });
    expect(deadLetter).toMatchObject({
      event_id: poisonId,
      message_group_id: group,
      sequence: 2,
      attempts: MAX_ATTEMPTS,
      reason: `${MAX_ATTEMPTS} of ${MAX_ATTEMPTS} attempts failed; last: HTTP 500`,
    });
    expect(await stack().receiveDeadLetters()).toEqual([]);

    expect(await stack().eventItem(poisonId)).toMatchObject({ status: 'dead_lettered', sequence: 2, attempts: MAX_ATTEMPTS });
    expect(stack().logs.some((line) => line.includes('event dead-lettered'))).toBe(true);
  });
});

/**
 * Packs on the local stack: a request's events of one key travel in one SQS message, so a hot key
 * costs SQS one request per request, not one per event; the consumer delivers them one by one, in
 * order, each numbered and signed as before; a poison event inside a pack is dead-lettered alone
 * after its own attempts, and the events behind it in the same message go on in order.
 */
import { describe, expect, it } from 'vitest';
import { maxEventsPerMessage } from '../../lambda/config.js';
import type { OutgoingMessage } from '../../lambda/core/enqueue-plan.js';
import { publicEventIdOf, readQueuedMessage } from '../../lambda/core/event.js';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { deadLettersOf } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack packs', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('packs');
  const poisonId = `${prefix}-p-5`;
  /** Every message ingest sent, as SendMessageBatch got it. */
  const sent: OutgoingMessage[] = [];
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '3', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '1' },
    {
      respond: (webhook) => (webhook.webhookId === poisonId ? { statusCode: 500 } : undefined),
      wrapIngestPorts: (ports) => ({
        ...ports,
        sendBatch: async (entries) => {
          sent.push(...entries);
          return ports.sendBatch(entries);
        },
      }),
    },
  );

  it('sends a request’s events of one key as one message, and delivers them in order, numbered and signed', async () => {
    const key = uniquePrefix(`${prefix}-ok`);
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = Array.from({ length: 30 }, (_, index) => makeEvent(key, `${key}-${index + 1}`));
    await postEvents(stack().url, events);

    // As few messages as the pack size allows (see `maxEventsPerMessage`), in order.
    const perMessage = maxEventsPerMessage(stack().config);
    const messages = sent.filter((message) => message.orderingKey === key);
    expect(messages).toHaveLength(Math.ceil(events.length / perMessage));
    const carried = messages.flatMap((message) => {
      const read = readQueuedMessage(message.body);
      return 'items' in read ? read.items.map((item) => ('queued' in item ? publicEventIdOf(item.queued) : item.reason)) : [read.reason];
    });
    expect(carried).toEqual(events.map((event) => event.event_id));

    await waitFor('all thirty delivered', () => receiver().deliveredTo(key).length === 30);
    const deliveries = receiver().deliveredTo(key);
    expect(deliveries.map((delivery) => [delivery.webhookId, delivery.sequence])).toEqual(events.map((event, index) => [event.event_id, index + 1]));
    expect(deliveries.every((delivery) => delivery.signature === SignatureCheck.verified)).toBe(true);
  });

  it('dead-letters a poison event of a pack alone, after its own attempts, and delivers the events behind it in order', async () => {
    const key = `${prefix}-p`;
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = Array.from({ length: 8 }, (_, index) => makeEvent(key, `${key}-${index + 1}`));
    await postEvents(stack().url, events);

    await waitFor('the others delivered', () => receiver().deliveredTo(key).length === 7);
    expect(receiver().deliveredTo(key).map((delivery) => [delivery.webhookId, delivery.sequence])).toEqual(
      events.flatMap((event, index) => (event.event_id === poisonId ? [] : [[event.event_id, index + 1]])),
    );
    // Each attempt at the poison event, and no other, was made MAX_DELIVERY_ATTEMPTS times.
    expect(receiver().attemptsOf(poisonId).map((attempt) => [attempt.statusCode, attempt.sequence])).toEqual([
      [500, 5],
      [500, 5],
      [500, 5],
    ]);
    expect(events.filter((event) => event.event_id !== poisonId).every((event) => receiver().attemptsOf(event.event_id).length === 1)).toBe(true);
    const letters = await waitFor('the dead letter listed', async () => {
      const rows = await deadLettersOf(stack(), key);
      return rows.length > 0 ? rows : undefined;
    });
    expect(letters.map((letter) => [letter.event_id, letter.sequence, letter.attempts])).toEqual([[poisonId, 5, 3]]);
  });
});

/**
 * Idempotency: an event_id sent again, before or after its delivery, is answered "duplicate" and
 * delivered once (the resend's copy in the queue is skipped). The only way to a second delivery is
 * a crash between the receiver's 2xx and its record, and that second delivery carries the same
 * webhook-id and webhook-sequence; none comes once the delivery is recorded, on its event or on
 * its key, even when its message comes back.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ReceiverReply } from '../../local/webhook-receiver.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { failDeliveryRecordOnce } from './support/faults.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack idempotency', { timeout: 60_000 }, () => {
  const crash = failDeliveryRecordOnce();
  /** Attempts at these event ids wait until the test releases them. */
  const held = new Map<string, (reply: ReceiverReply) => void>();
  const holding = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    // A long delivery timeout: a held attempt must not time out while the test resends.
    { DELIVERY_TIMEOUT_MS: '20000' },
    {
      respond: (webhook) => {
        const id = webhook.webhookId ?? '';
        if (!holding.has(id)) return undefined;
        return new Promise<ReceiverReply>((resolve) => held.set(id, resolve));
      },
      wrapDeliveryPorts: crash.wrap,
    },
  );

  // Registered after the stack's hooks, so it runs before they stop the stack and the receiver.
  afterAll(() => {
    for (const release of held.values()) release({ statusCode: 204 });
  });

  it('answers duplicate and delivers once when an event_id is resent before and after its delivery', async () => {
    const key = uniquePrefix('resend');
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const first = makeEvent(key, `${key}-evt-1`);
    holding.add(first.event_id);

    expect((await postEvents(stack().url, [first]))[0]?.status).toBe('accepted');
    await waitFor('the first attempt, held by the receiver', () => held.get(first.event_id));
    // Resent while its only attempt is in flight: not delivered yet.
    expect((await postEvents(stack().url, [first]))[0]?.status).toBe('duplicate');
    held.get(first.event_id)?.({ statusCode: 204 });
    await waitFor('the delivery recorded', async () => (await stack().eventItem(first.event_id))?.status === 'delivered');

    // Resent after delivery, alone and in a batch beside a new event of the same key.
    const second = makeEvent(key, `${key}-evt-2`);
    expect((await postEvents(stack().url, [first]))[0]?.status).toBe('duplicate');
    expect((await postEvents(stack().url, [first, second])).map((result) => result.status)).toEqual(['duplicate', 'accepted']);

    // Each resend was enqueued again, a copy behind the recorded message, which the consumer
    // skipped: the key is ordered, so a copy delivered would have arrived before the second event.
    await waitFor('the second event delivered', () => receiver().deliveredTo(key).length >= 2);
    const deliveries = receiver().deliveredTo(key);
    expect(deliveries.map((d) => [d.webhookId, d.sequence])).toEqual([
      [first.event_id, 1],
      [second.event_id, 2],
    ]);
    expect(receiver().attemptsOf(first.event_id)).toHaveLength(1);
    // Ingest recorded where its first message is, which the copies are not.
    expect((await stack().eventItem(first.event_id))?.queue_position).toMatch(/^[0-9a-f]+\/\d{40}$/);
  });

  it('delivers again with the same webhook-id and webhook-sequence only after a crash between the 2xx and its record', async () => {
    const key = uniquePrefix('crash');
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = [1, 2, 3].map((n) => makeEvent(key, `${key}-evt-${n}`));
    // The key's last event: nothing after it was sent before its record failed.
    const crashed = events[2]?.event_id ?? '';
    crash.eventIds.add(crashed);
    // One request, so one message: the three go as a run (numbered together, sent one POST each,
    // recorded together on their key).
    await postEvents(stack().url, events);
    await waitFor('the third event delivered twice', () => receiver().attemptsOf(crashed).length >= 2);

    // The run's record failed: its events come back and go again, one at a time, each with its number.
    const deliveries = receiver().deliveredTo(key);
    expect(deliveries.map((d) => [d.webhookId, d.sequence])).toEqual([...events, ...events].map((event, index) => [event.event_id, (index % 3) + 1]));
    expect(deliveries.every((d) => d.signature === SignatureCheck.verified)).toBe(true);
    // Each attempt is signed anew (its own timestamp); the body is the same bytes.
    const [before, after] = receiver().attemptsOf(crashed);
    expect(after?.body).toBe(before?.body);
    expect(crash.eventIds.has(crashed)).toBe(false);
    await waitFor('the second delivery recorded', async () => (await stack().eventItem(crashed))?.status === 'delivered');
    // A run counts an attempt when it fails, not when it succeeds: the 2xx that could not be
    // recorded counted none, and the second POST, alone, counted its attempt before it was made.
    expect(await stack().eventItem(crashed)).toMatchObject({ status: 'delivered', sequence: 3, attempts: 1 });
    expect(stack().logs.some((line) => line.includes('InjectedFaultError'))).toBe(true);
  });

  it('sends a run once when its messages come back after its deliveries were recorded on its key', async () => {
    const key = uniquePrefix('recorded');
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = [1, 2, 3].map((n) => makeEvent(key, `${key}-evt-${n}`));
    // The record lands, its answer is lost: the run's messages are not deleted, and come back.
    crash.answerLostEventIds.add(events[2]?.event_id ?? '');
    await postEvents(stack().url, events);

    await waitFor('the run recorded, its answer lost', () => crash.answerLostEventIds.size === 0);
    // Its message comes back after the fault's backoff, is skipped whole and deleted: nothing is queued any more.
    await waitFor('the queue empty', async () => {
      const pending = ((await call(stack().url, 'GET', '/v1/routing')).body as { pending: Record<string, number> }).pending;
      return pending.queued === 0 && pending.in_flight === 0 && pending.delayed === 0;
    });
    expect(receiver().deliveredTo(key).map((d) => [d.webhookId, d.sequence])).toEqual(events.map((event, index) => [event.event_id, index + 1]));
    expect(crash.answerLostEventIds.size).toBe(0);
    // Recorded on the key alone: each event's record is ingest's, with its place in the queue.
    for (const event of events) expect((await stack().eventItem(event.event_id))?.status).toBe('accepted');
  });
});

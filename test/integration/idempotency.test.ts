/**
 * Idempotency: an event_id sent again, before or after its delivery, is answered "duplicate" and
 * delivered once (the resend's copy in the queue is skipped). The only way to a second delivery is a crash between the receiver's 2xx and its
 * record, and that second delivery carries the same webhook-id and webhook-sequence; none comes
 * when the key's next event was sent meanwhile (the key has moved past it).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ReceiverReply } from '../../local/webhook-receiver.js';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { failMarkDeliveredOnce } from './support/faults.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack idempotency', { timeout: 60_000 }, () => {
  const crash = failMarkDeliveredOnce();
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
    // The first attempt waits until all three are queued, so that the second and third come in one
    // batch and go as a run (numbered together, sent one POST each).
    holding.add(events[0]?.event_id ?? '');

    await postEvents(stack().url, events);
    (await waitFor('the first attempt, held by the receiver', () => held.get(events[0]?.event_id ?? '')))({ statusCode: 204 });
    await waitFor('the third event delivered twice', () => receiver().attemptsOf(crashed).length >= 2);

    const deliveries = receiver().deliveredTo(key);
    expect(deliveries.map((d) => [d.webhookId, d.sequence])).toEqual([
      [events[0]?.event_id, 1],
      [events[1]?.event_id, 2],
      [crashed, 3],
      [crashed, 3],
    ]);
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

  it('records a delivery whose record failed when it comes back behind the next event of its key, without sending it again', async () => {
    const key = uniquePrefix('overtaken');
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = [1, 2, 3].map((n) => makeEvent(key, `${key}-evt-${n}`));
    const crashed = events[1]?.event_id ?? '';
    crash.eventIds.add(crashed);
    // The first attempt waits until the other two are queued, behind it in one message, so that
    // they go as a run of two: the third is sent while the second's record is written, and fails.
    holding.add(events[0]?.event_id ?? '');
    await postEvents(stack().url, events.slice(0, 1));
    const release = await waitFor('the first attempt, held by the receiver', () => held.get(events[0]?.event_id ?? ''));
    await postEvents(stack().url, events.slice(1));
    release({ statusCode: 204 });

    await waitFor('the second event recorded delivered', async () => (await stack().eventItem(crashed))?.status === 'delivered');
    await waitFor('the third event recorded delivered', async () => (await stack().eventItem(events[2]?.event_id ?? ''))?.status === 'delivered');
    expect(receiver().deliveredTo(key).map((d) => [d.webhookId, d.sequence])).toEqual([
      [events[0]?.event_id, 1],
      [crashed, 2],
      [events[2]?.event_id, 3],
    ]);
    // Recorded when its message came back, older than the key's head, with the number the key kept.
    expect(await stack().eventItem(crashed)).toMatchObject({ status: 'delivered', sequence: 2 });
    expect(crash.eventIds.has(crashed)).toBe(false);
  });
});

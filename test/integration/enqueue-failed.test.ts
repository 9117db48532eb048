/**
 * The partial-failure rule at the API (docs/api.md#events): when SQS refuses an event, the answer is
 * 503 enqueue_failed with a status per event, no later event of that key is enqueued, other keys
 * are, and retrying the whole request delivers everything once and in order. A request's events
 * of one key travel in one message (a pack) unless they do not fit one: SQS takes or refuses the
 * message whole, and a later message of the key is not sent after a refused one.
 */
import { describe, expect, it } from 'vitest';
import { SendFailureKind, type SendFailure } from '../../lambda/core/enqueue-plan.js';
import { call, makeEvent, subscribe, uniquePrefix, type TestEvent } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/**
 * An event whose SQS body is about 360 KB: its payload's emoji are 4 bytes each in the request and
 * 12 in the queue (escaped, see `encodeQueuedEvent`), so three of them, 360 KB of request, need two
 * messages of at most 1 MiB.
 */
function bulkyEvent(subscriptionId: string, eventId: string): TestEvent {
  return { ...makeEvent(subscriptionId, eventId), payload: { event: eventId, text: '\u{1F600}'.repeat(30_000) } };
}

describe('local stack partial enqueue failure', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('partial');
  /** Event ids whose message SQS refuses. */
  const refused = new Set<string>();
  const holdsRefused = (body: string): boolean => [...refused].some((eventId) => body.includes(`"event_id":"${eventId}"`));
  const { stack, receiver } = useStackAndReceiver(
    {},
    {
      // SQS refuses the messages that hold an event named in `refused`, as it may refuse single entries of a batch.
      wrapIngestPorts: (ports) => ({
        ...ports,
        sendBatch: async (entries) => {
          const taken = entries.filter((entry) => !holdsRefused(entry.body));
          const failed = entries.filter((entry) => holdsRefused(entry.body)).map((entry) => [entry.index, { kind: SendFailureKind.transient, code: 'ServiceUnavailable' }] as const);
          const answer = taken.length === 0 ? { refused: new Map<number, SendFailure>(), sequenceNumbers: new Map<number, string>() } : await ports.sendBatch(taken);
          return { refused: new Map([...failed, ...answer.refused]), sequenceNumbers: answer.sequenceNumbers };
        },
      }),
    },
  );

  it('answers 503 with per-event statuses, enqueues nothing after the failed event of its key, and a retry finishes in order', async () => {
    const a = `${prefix}-a`;
    const b = `${prefix}-b`;
    await subscribe(stack().url, a, receiver().endpointFor(a));
    await subscribe(stack().url, b, receiver().endpointFor(b));
    // Key a: `${a}-0` alone in a first request; then three bulky events, two messages: 1 and 2, then 3.
    await call(stack().url, 'POST', '/v1/events', makeEvent(a, `${a}-0`));
    const events = [bulkyEvent(a, `${a}-1`), makeEvent(b, `${b}-1`), bulkyEvent(a, `${a}-2`), bulkyEvent(a, `${a}-3`), makeEvent(b, `${b}-2`)];
    refused.add(`${a}-2`);

    const first = await call(stack().url, 'POST', '/v1/events', { events });
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({
      error: { code: 'enqueue_failed' },
      results: [
        // Refused with the event it travels with.
        { event_id: `${a}-1`, status: 'failed' },
        { event_id: `${b}-1`, status: 'accepted' },
        { event_id: `${a}-2`, status: 'failed' },
        { event_id: `${a}-3`, status: 'not_enqueued' },
        { event_id: `${b}-2`, status: 'accepted' },
      ],
    });
    await waitFor('what was enqueued delivered', () => receiver().deliveredTo(a).length === 1 && receiver().deliveredTo(b).length === 2);
    expect(await stack().eventItem(`${a}-1`)).toBeUndefined();
    expect(await stack().eventItem(`${a}-2`)).toBeUndefined();
    expect(await stack().eventItem(`${a}-3`)).toBeUndefined();
    await waitFor('the queue empty: nothing of the key waits behind the failed event', async () => (await stack().queueDepth()) === 0);

    refused.clear();
    const retry = await call(stack().url, 'POST', '/v1/events', { events });
    expect(retry.status).toBe(202);
    expect((retry.body as { results: { status: string }[] }).results.map((r) => r.status)).toEqual(['accepted', 'duplicate', 'accepted', 'accepted', 'duplicate']);
    await waitFor('the key finished', () => receiver().deliveredTo(a).length === 4);
    expect(receiver().deliveredTo(a).map((d) => [d.webhookId, d.sequence])).toEqual([
      [`${a}-0`, 1],
      [`${a}-1`, 2],
      [`${a}-2`, 3],
      [`${a}-3`, 4],
    ]);
    expect(receiver().deliveredTo(b).map((d) => d.webhookId)).toEqual([`${b}-1`, `${b}-2`]);
  });
});

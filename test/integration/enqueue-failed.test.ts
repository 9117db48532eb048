/**
 * The partial-failure rule at the API (CONTRACT §2): when SQS refuses an event, the answer is
 * 503 enqueue_failed with a status per event, no later event of that key is enqueued, other keys
 * are, and retrying the whole request delivers everything once and in order.
 */
import { describe, expect, it } from 'vitest';
import { SendFailureKind, type SendFailure } from '../../lambda/core/enqueue-plan.js';
import { call, makeEvent, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack partial enqueue failure', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('partial');
  const refused = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    {},
    {
      // SQS refuses the entries named in `refused`, as it may refuse single entries of a batch.
      wrapIngestPorts: (ports) => ({
        ...ports,
        sendBatch: async (entries) => {
          const taken = entries.filter((entry) => !refused.has(entry.deduplicationId));
          const failed = entries.filter((entry) => refused.has(entry.deduplicationId)).map((entry) => [entry.index, { kind: SendFailureKind.transient, code: 'ServiceUnavailable' }] as const);
          const takenFailures = taken.length === 0 ? new Map<number, SendFailure>() : await ports.sendBatch(taken);
          return new Map([...failed, ...takenFailures]);
        },
      }),
    },
  );

  it('answers 503 with per-event statuses, enqueues nothing after the failed event of its key, and a retry finishes in order', async () => {
    const a = `${prefix}-a`;
    const b = `${prefix}-b`;
    await subscribe(stack().url, a, receiver().endpointFor(a));
    await subscribe(stack().url, b, receiver().endpointFor(b));
    const events = [makeEvent(a, `${a}-1`), makeEvent(b, `${b}-1`), makeEvent(a, `${a}-2`), makeEvent(a, `${a}-3`), makeEvent(b, `${b}-2`)];
    refused.add(`${a}-2`);

    const first = await call(stack().url, 'POST', '/v1/events', { events });
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({
      error: { code: 'enqueue_failed' },
      results: [
        { event_id: `${a}-1`, status: 'accepted' },
        { event_id: `${b}-1`, status: 'accepted' },
        { event_id: `${a}-2`, status: 'failed' },
        { event_id: `${a}-3`, status: 'not_enqueued' },
        { event_id: `${b}-2`, status: 'accepted' },
      ],
    });
    await waitFor('what was enqueued delivered', () => receiver().deliveredTo(a).length === 1 && receiver().deliveredTo(b).length === 2);
    expect(await stack().eventItem(`${a}-2`)).toBeUndefined();
    expect(await stack().eventItem(`${a}-3`)).toBeUndefined();
    await waitFor('the queue empty: nothing of the key waits behind the failed event', async () => (await stack().queueDepth()) === 0);

    refused.clear();
    const retry = await call(stack().url, 'POST', '/v1/events', { events });
    expect(retry.status).toBe(202);
    expect((retry.body as { results: { status: string }[] }).results.map((r) => r.status)).toEqual(['duplicate', 'duplicate', 'accepted', 'accepted', 'duplicate']);
    await waitFor('the key finished', () => receiver().deliveredTo(a).length === 3);
    expect(receiver().deliveredTo(a).map((d) => [d.webhookId, d.sequence])).toEqual([
      [`${a}-1`, 1],
      [`${a}-2`, 2],
      [`${a}-3`, 3],
    ]);
    expect(receiver().deliveredTo(b).map((d) => d.webhookId)).toEqual([`${b}-1`, `${b}-2`]);
  });
});

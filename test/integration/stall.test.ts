/**
 * ON_EXHAUSTED=stall: an exhausted head is not dead-lettered but retried at the maximum backoff,
 * shown in the lag view with its growing attempts, and its key resumes in order, without a gap,
 * once the receiver recovers.
 */
import { describe, expect, it } from 'vitest';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { lagRowOf } from './support/operator-api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack with ON_EXHAUSTED=stall', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('stall');
  let isRefusing = true;
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2', ON_EXHAUSTED: 'stall', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    { respond: () => (isRefusing ? { statusCode: 500 } : undefined) },
  );

  it('keeps retrying the exhausted head instead of dead-lettering it, then resumes in order', async () => {
    const key = `${prefix}-key`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    const [group] = (await postEvents(stack().url, [1, 2, 3].map((n) => makeEvent(key, `${key}-${n}`)))).map((r) => r.message_group_id);

    await waitFor('attempts beyond MAX_DELIVERY_ATTEMPTS', () => receiver().attemptsOf(`${key}-1`).length >= 4);
    const row = await lagRowOf(stack(), group ?? '');
    expect(row).toMatchObject({ depth: 3, last_error: 'HTTP 500', dead_lettered: 0 });
    expect(row?.head_attempts).toBeGreaterThanOrEqual(3);
    expect(await stack().receiveDeadLetters()).toEqual([]);
    expect(receiver().attemptsOf(`${key}-2`)).toEqual([]);

    isRefusing = false;
    await waitFor('the key delivered', () => receiver().deliveredTo(key).length === 3);
    expect(receiver().deliveredTo(key).map((d) => [d.webhookId, d.sequence])).toEqual([
      [`${key}-1`, 1],
      [`${key}-2`, 2],
      [`${key}-3`, 3],
    ]);
    expect(await stack().receiveDeadLetters()).toEqual([]);
  });
});

/**
 * ON_EXHAUSTED=stall: an exhausted head is not dead-lettered but retried at the maximum backoff,
 * shown in the lag view with its growing attempts, and its key resumes in order, without a gap,
 * once the receiver recovers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LagRow } from '../../lambda/core/lag.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { startRecordingReceiver, type RecordingReceiver } from './support/receiver.js';
import { startTestStack, type TestStack } from './support/stack.js';

describe('local stack with ON_EXHAUSTED=stall', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('stall');
  let stack: TestStack;
  let receiver: RecordingReceiver;
  let isRefusing = true;

  beforeAll(async () => {
    receiver = await startRecordingReceiver(() => (isRefusing ? { statusCode: 500 } : undefined));
    stack = await startTestStack({ MAX_DELIVERY_ATTEMPTS: '2', ON_EXHAUSTED: 'stall', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it('keeps retrying the exhausted head instead of dead-lettering it, then resumes in order', async () => {
    const key = `${prefix}-key`;
    await subscribe(stack.url, key, receiver.endpointFor(key));
    const [group] = (await postEvents(stack.url, [1, 2, 3].map((n) => makeEvent(key, `${key}-${n}`)))).map((r) => r.message_group_id);

    await waitFor('attempts beyond MAX_DELIVERY_ATTEMPTS', () => receiver.attemptsOf(`${key}-1`).length >= 4);
    const rows = ((await call(stack.url, 'GET', '/v1/lag')).body as { groups: LagRow[] }).groups;
    expect(rows.find((row) => row.message_group_id === group)).toMatchObject({ depth: 3, last_error: 'HTTP 500', dead_lettered: 0 });
    expect(rows.find((row) => row.message_group_id === group)?.head_attempts).toBeGreaterThanOrEqual(3);
    expect(await stack.receiveDeadLetters()).toEqual([]);
    expect(receiver.attemptsOf(`${key}-2`)).toEqual([]);

    isRefusing = false;
    await waitFor('the key delivered', () => receiver.deliveredTo(key).length === 3);
    expect(receiver.deliveredTo(key).map((d) => [d.webhookId, d.sequence])).toEqual([
      [`${key}-1`, 1],
      [`${key}-2`, 2],
      [`${key}-3`, 3],
    ]);
    expect(await stack.receiveDeadLetters()).toEqual([]);
  });
});

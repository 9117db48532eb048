/**
 * The receiver's failing mode as the README's walkthrough uses it: every webhook refused, fast
 * retries, two attempts: the events become dead letters within seconds, and the lag view counts
 * them.
 */
import { describe, expect, it } from 'vitest';
import { createReceiverResponder } from '../../local/receiver-settings.js';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { deadLettersOf, lagRows } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('npm run receiver in its failing mode', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver(
    { RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '1', MAX_DELIVERY_ATTEMPTS: '2' },
    // RECEIVER_FAIL_RATE=1 RECEIVER_STATUS=503: deterministic, every webhook refused.
    { respond: createReceiverResponder({ failRate: 1, failureStatus: 503, delayMs: 0 }) },
  );

  it('leads to dead letters after MAX_DELIVERY_ATTEMPTS refused attempts each, counted in the lag view', async () => {
    const subscriptionId = uniquePrefix('failing');
    await subscribe(stack().url, subscriptionId, receiver().endpointFor(subscriptionId));
    const [first] = await postEvents(stack().url, [makeEvent(subscriptionId, `${subscriptionId}-1`), makeEvent(subscriptionId, `${subscriptionId}-2`)]);

    const letters = await waitFor('both events dead-lettered', async () => {
      const items = await deadLettersOf(stack(), subscriptionId);
      return items.length === 2 ? items : undefined;
    });

    expect(letters.map((letter) => [letter.event_id, letter.sequence, letter.attempts])).toEqual([
      [`${subscriptionId}-1`, 1, 2],
      [`${subscriptionId}-2`, 2, 2],
    ]);
    expect(receiver().attemptsOf(`${subscriptionId}-1`).map((attempt) => attempt.statusCode)).toEqual([503, 503]);
    // The dead-letter count and the depth are written by separate updates (the count with the dead
    // letter's place in the store, the depth with the consumer's group write): poll for both.
    const row = await waitFor('the group in the lag view with its dead letters and nothing pending', async () =>
      (await lagRows(stack())).find(
        (candidate) => candidate.message_group_id === first?.message_group_id && candidate.dead_lettered === 2 && candidate.depth === 0,
      ),
    );
    expect(row).toMatchObject({ dead_lettered: 2, depth: 0, ordering_key: subscriptionId });
  });
});

/**
 * Transient failures: an endpoint that fails once, one that times out once, and one that answers
 * 429 with Retry-After. Each failed event is retried with the same id and sequence number, and
 * nothing of its key overtakes it.
 */
import { describe, expect, it } from 'vitest';
import type { ReceiverReply } from '../../local/webhook-receiver.js';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const DELIVERY_TIMEOUT_MS = 300;
const EVENTS_PER_KEY = 4;

describe('local stack retries', { timeout: 60_000 }, () => {
  /** The first attempt at each of these event ids gets the scripted answer; later ones 204. */
  const firstAnswers = new Map<string, () => ReceiverReply | Promise<ReceiverReply>>();
  const answered = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS), RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '5' },
    {
      respond: (webhook) => {
        const id = webhook.webhookId ?? '';
        const answer = firstAnswers.get(id);
        if (answer === undefined || answered.has(id)) return undefined;
        answered.add(id);
        return answer();
      },
    },
  );

  /** Sends EVENTS_PER_KEY events of a new key whose second event meets `firstAnswer` once. */
  async function runKey(label: string, firstAnswer: () => ReceiverReply | Promise<ReceiverReply>) {
    const key = uniquePrefix(label);
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = Array.from({ length: EVENTS_PER_KEY }, (_, n) => makeEvent(key, `${key}-evt-${n + 1}`));
    const faulted = `${key}-evt-2`;
    firstAnswers.set(faulted, firstAnswer);
    await postEvents(stack().url, events);
    await waitFor(`${label}: all delivered`, () => receiver().deliveredTo(key).length === EVENTS_PER_KEY);

    const deliveries = receiver().deliveredTo(key);
    expect(deliveries.map((d) => d.webhookId)).toEqual(events.map((event) => event.event_id));
    expect(deliveries.map((d) => d.sequence)).toEqual([1, 2, 3, 4]);
    expect(deliveries.every((d) => d.signature === SignatureCheck.verified)).toBe(true);
    const attempts = receiver().attemptsOf(faulted);
    expect(attempts).toHaveLength(2);
    expect(attempts.map((attempt) => attempt.sequence)).toEqual([2, 2]);
    // Nothing after the faulted event was attempted before its successful retry.
    const retriedAt = attempts[1]?.receivedAt.getTime() ?? Infinity;
    const later = receiver().attempts().filter((attempt) => attempt.path === `/${key}` && (attempt.sequence ?? 0) > 2);
    expect(later.every((attempt) => attempt.receivedAt.getTime() >= retriedAt)).toBe(true);
    return attempts;
  }

  it('retries an event whose endpoint failed once, keeping its order', async () => {
    const attempts = await runKey('fail-once', () => ({ statusCode: 500 }));
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([500, 204]);
  });

  it('retries an event whose endpoint did not answer within DELIVERY_TIMEOUT_MS, keeping its order', async () => {
    // The first answer comes long after the sender gave up; the receiver has seen the attempt.
    const attempts = await runKey('timeout-once', () => new Promise<ReceiverReply>((resolve) => setTimeout(() => resolve({ statusCode: 204 }), DELIVERY_TIMEOUT_MS * 4)));
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([undefined, 204]);
    expect(await stack().eventItem(attempts[0]?.webhookId ?? '')).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('waits for Retry-After before retrying an event answered 429, keeping its order', async () => {
    const attempts = await runKey('rate-limited', () => ({ statusCode: 429, headers: { 'retry-after': '1' } }));
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([429, 204]);
    const waitedMs = (attempts[1]?.receivedAt.getTime() ?? 0) - (attempts[0]?.receivedAt.getTime() ?? 0);
    expect(waitedMs).toBeGreaterThanOrEqual(950);
  });
});

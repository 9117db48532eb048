/**
 * Strings SQS's character rules (or the local emulator's stricter ones) would refuse raw, through
 * the local stack's HTTP API to the receiver and through a redrive: an emoji (fauxqs 2.4.1 refuses
 * every character above U+FFFF), U+FFFE and U+FFFF (refused by SQS too) and a lone surrogate
 * (valid in JSON as an escape). Each is accepted (202), never `503 enqueue_failed`, and reaches
 * the receiver as the same JSON value that was posted.
 */
import { describe, expect, it } from 'vitest';
import { call, makeEvent, subscribe, uniquePrefix, type TestEvent } from './support/api.js';
import { deadLettersOf, redriveUntilDone } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** The strings, each in the payload, as a key, in `type` and in `tenant_id` (every string the body carries). */
const TEXTS = {
  emoji: 'party 😀🎉 time',
  nonCharacters: 'a\uFFFEb\uFFFFc',
  loneSurrogate: 'x\uD800y\uDC00z',
} as const;

/** An event carrying `text` in every string field a producer chooses. */
function eventWith(subscriptionId: string, eventId: string, text: string): TestEvent {
  return { ...makeEvent(subscriptionId, eventId, `tenant ${text}`), type: `order ${text}`, payload: { text, [text]: [text, { nested: text }] } };
}

describe('local stack characters SQS refuses raw', { timeout: 60_000 }, () => {
  const refusing = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '1', RETRY_BASE_SECONDS: '0' },
    { respond: (webhook) => (refusing.has(decodeURIComponent(webhook.path.slice(1))) ? { statusCode: 500 } : undefined) },
  );

  async function subscribed(label: string, tenantId: string): Promise<string> {
    const key = uniquePrefix(label);
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key), tenantId));
    return key;
  }

  /** The parsed body of the delivery of `eventId` whose redelivery mark is `isRedelivery`, signature checked. */
  async function deliveredBody(eventId: string, isRedelivery: boolean): Promise<unknown> {
    const attempt = await waitFor(`the ${isRedelivery ? 'redelivery' : 'delivery'} of ${eventId}`, () =>
      receiver()
        .delivered()
        .find((a) => a.webhookId === eventId && (a.headers['webhook-redelivery'] === 'true') === isRedelivery),
    );
    expect(attempt.signature).toBe(SignatureCheck.verified);
    return JSON.parse(attempt.body);
  }

  it.each(Object.entries(TEXTS))('accepts (202) and delivers the same JSON value when a string holds %s', async (label, text) => {
    const key = await subscribed(`chars-${label}`, `tenant ${text}`);
    const posted = eventWith(key, `${key}-1`, text);
    // Sent as JSON text: a lone surrogate travels as its escape, which JSON allows.
    const answer = await call(stack().url, 'POST', '/v1/events', JSON.stringify(posted));
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(answer.body).toMatchObject({ results: [{ event_id: posted.event_id, status: 'accepted' }] });

    const body = await deliveredBody(posted.event_id, false);
    expect(body).toStrictEqual({ type: posted.type, timestamp: expect.any(String), data: posted.payload, sequence: 1, ordering_key: key, previous_sequence: 0, subscription_id: key });
  });

  it.each(Object.entries(TEXTS))('redrives a dead letter holding %s with the same JSON value', async (label, text) => {
    const key = await subscribed(`chars-redrive-${label}`, `tenant ${text}`);
    refusing.add(key);
    const posted = eventWith(key, `${key}-1`, text);
    const answer = await call(stack().url, 'POST', '/v1/events', JSON.stringify(posted));
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    await waitFor(`the dead letter of ${posted.event_id}`, async () => (await deadLettersOf(stack(), key)).some((row) => row.event_id === posted.event_id));

    refusing.delete(key);
    expect(await redriveUntilDone(stack(), key)).toEqual([{ event_id: posted.event_id, sequence: 1 }]);
    const body = await deliveredBody(posted.event_id, true);
    // The key's only number was given up: nothing was delivered before its redelivery.
    expect(body).toStrictEqual({ type: posted.type, timestamp: expect.any(String), data: posted.payload, sequence: 1, ordering_key: key, previous_sequence: 0, subscription_id: key, redelivery: true });
  });
});

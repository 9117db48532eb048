/**
 * Payloads at the edges of what JSON allows, through the local stack's HTTP API to the receiver:
 * nesting beyond MAX_PAYLOAD_DEPTH is the producer's error (400), never ours (500); own keys named
 * "__proto__", "constructor" and "prototype" reach the receiver as they were accepted.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PAYLOAD_DEPTH } from '../../lambda/core/limits.js';
import { call, makeEvent, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** The JSON text of an object nested `depth` levels deep (`{}` is 1). */
const nestedJson = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

/** An event's JSON text with its payload given as JSON text, so that nothing on our side rewrites it. */
function eventJson(subscriptionId: string, eventId: string, payloadJson: string): string {
  const { payload: _payload, ...envelope } = makeEvent(subscriptionId, eventId);
  return `${JSON.stringify(envelope).slice(0, -1)},"payload":${payloadJson}}`;
}

describe('local stack payload shapes', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver();

  async function subscribed(label: string): Promise<string> {
    const key = uniquePrefix(label);
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    return key;
  }

  async function deliveredBody(eventId: string): Promise<string> {
    const attempt = await waitFor(`the delivery of ${eventId}`, () => receiver().delivered().find((a) => a.webhookId === eventId));
    expect(attempt.signature).toBe(SignatureCheck.verified);
    return attempt.body;
  }

  it('refuses a payload nested 10,000 levels deep as 400 invalid_request naming the limit, and enqueues nothing', async () => {
    const key = await subscribed('deep');
    for (const [eventId, payloadJson] of [
      [`${key}-objects`, nestedJson(10_000)],
      [`${key}-arrays`, `{"a":${'['.repeat(9_999)}${']'.repeat(9_999)}}`],
    ] as const) {
      const answer = await call(stack().url, 'POST', '/v1/events', eventJson(key, eventId, payloadJson));
      expect(answer.status).toBe(400);
      const { error } = answer.body as { error: { code: string; details: { path: string; message: string }[] } };
      expect(error.code).toBe('invalid_request');
      expect(error.details).toEqual([{ path: 'payload', message: expect.stringContaining(`at most ${MAX_PAYLOAD_DEPTH} levels deep`) }]);
      expect(await stack().eventItem(eventId)).toBeUndefined();
    }
  });

  it(`accepts and delivers a payload exactly ${MAX_PAYLOAD_DEPTH} levels deep, refusing one level more`, async () => {
    const key = await subscribed('at-limit');
    const tooDeep = await call(stack().url, 'POST', '/v1/events', eventJson(key, `${key}-over`, nestedJson(MAX_PAYLOAD_DEPTH + 1)));
    expect(tooDeep.status).toBe(400);

    const payloadJson = nestedJson(MAX_PAYLOAD_DEPTH);
    const accepted = await call(stack().url, 'POST', '/v1/events', eventJson(key, `${key}-at`, payloadJson));
    expect(accepted.status).toBe(202);
    expect(await deliveredBody(`${key}-at`)).toContain(`"data":${payloadJson},`);
  });

  it('delivers own "__proto__", "constructor" and "prototype" keys as accepted, alone and in a batch', async () => {
    const key = await subscribed('own-keys');
    const payloadJson = '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}},"prototype":[1],"id":7}';
    const single = await call(stack().url, 'POST', '/v1/events', eventJson(key, `${key}-single`, payloadJson));
    expect(single.status).toBe(202);
    const batch = await call(stack().url, 'POST', '/v1/events', `{"events":[${eventJson(key, `${key}-batched`, payloadJson)}]}`);
    expect(batch.status).toBe(202);

    for (const eventId of [`${key}-single`, `${key}-batched`]) {
      const body = await deliveredBody(eventId);
      expect(body).toContain(`"data":${payloadJson}`);
      const data = (JSON.parse(body) as { data: object }).data;
      expect(Object.keys(data)).toEqual(['__proto__', 'constructor', 'prototype', 'id']);
      expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    }
  });
});

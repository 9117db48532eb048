import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { readQueuedEvent, type QueuedEvent } from '../../../lambda/core/event.js';
import { MAX_PAYLOAD_DEPTH } from '../../../lambda/core/limits.js';
import { DEFAULT_ROTATION_GRACE_SECONDS, generateSecret, isValidSecret, previousSecretExpiry, signingSecrets } from '../../../lambda/core/secret.js';
import { Ordering, partitionKey } from '../../../lambda/core/routing.js';
import { fanOutEventId } from '../../../lambda/core/fan-out-id.js';
import { batchBodyBytes, encodeHeaderText, signBatch, signWebhook, webhookBody } from '../../../lambda/core/webhook.js';

const queued: QueuedEvent = {
  version: 1,
  event: {
    event_id: 'evt_1',
    tenant_id: 'tenant_1',
    subscription_id: 'sub_1',
    type: 'order.updated',
    payload_json: JSON.stringify({ order: 42, note: 'ünïcode ✓' }),
  },
  ordering_key: 'sub_1',
  message_group_id: 'group',
  accepted_at: '2026-12-02T12:00:00.000Z',
};
const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');

describe('encodeHeaderText', () => {
  it.each([
    ['visible ASCII as it is', 'sub_1:order/7?x=[1]', 'sub_1:order/7?x=[1]'],
    ['% itself', '100%', '100%25'],
    ['a space, inside or at either end', ' a b ', '%20a%20b%20'],
    ['controls and DEL', 'a\tb\r\nc\u007f', 'a%09b%0D%0Ac%7F'],
    ['Latin-1 and beyond as UTF-8', 'café ключ', 'caf%C3%A9%20%D0%BA%D0%BB%D1%8E%D1%87'],
    ['a character outside the BMP as its four bytes', '🦄', '%F0%9F%A6%84'],
    ['a lone surrogate as U+FFFD', 'a\ud800', 'a%EF%BF%BD'],
  ])('writes %s', (_what, text, encoded) => {
    expect(encodeHeaderText(text)).toBe(encoded);
  });

  it.each(['sub_1', '100% ', ' x ', 'café ключ 🦄', '%41', 'a\u0000b'])('is read back by decodeURIComponent for %j', (text) => {
    const encoded = encodeHeaderText(text);
    expect(encoded).toMatch(/^[\x21-\x7e]+$/);
    expect(decodeURIComponent(encoded)).toBe(text);
  });
});

describe('signWebhook ordering key', () => {
  const byResource = (resourceId: string): QueuedEvent => {
    const event = { ...queued.event, resource_id: resourceId };
    return { ...queued, event, ordering_key: partitionKey(event, Ordering.resource) };
  };

  it('names the subscription when the key is the subscription, even if the event has a resource_id', () => {
    const request = signWebhook({ queued: { ...queued, event: { ...queued.event, resource_id: 'order-7' } }, sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
    expect(request.headers['webhook-ordering-key']).toBe('sub_1');
  });

  it('names the resource, escaped, when the key is the resource', () => {
    const request = signWebhook({ queued: byResource('заказ 7'), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
    expect(request.headers['webhook-ordering-key']).toBe('%D0%B7%D0%B0%D0%BA%D0%B0%D0%B7%207');
  });

  it('names the resource even when it equals the subscription id', () => {
    const request = signWebhook({ queued: byResource('sub_1'), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
    expect(request.headers['webhook-ordering-key']).toBe('sub_1');
  });
});

describe('signWebhook', () => {
  it('is verified by the standardwebhooks library', () => {
    const attemptedAt = new Date();
    const request = signWebhook({ queued, sequence: 3, previousSequence: 2, secrets: [secret], attemptedAt });
    const verified = new Webhook(secret).verify(request.body, request.headers);
    expect(verified).toEqual({ type: 'order.updated', timestamp: '2026-12-02T12:00:00.000Z', data: JSON.parse(queued.event.payload_json), sequence: 3, ordering_key: 'sub_1', previous_sequence: 2, subscription_id: 'sub_1' });
  });

  it('carries the contract headers', () => {
    const attemptedAt = new Date('2026-12-02T12:00:05.900Z');
    const request = signWebhook({ queued, sequence: 3, previousSequence: 2, secrets: [secret], attemptedAt });
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
      'webhook-sequence': '3',
      'webhook-ordering-key': 'sub_1',
    });
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('signs exactly "<id>.<timestamp>.<body>" with the decoded secret', () => {
    const attemptedAt = new Date('2026-12-02T12:00:05Z');
    const request = signWebhook({ queued, sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt });
    const expected = new Webhook(secret).sign('evt_1', attemptedAt, request.body);
    expect(request.headers['webhook-signature']).toBe(expected);
  });

  it('is refused by a verifier holding another secret', () => {
    const request = signWebhook({ queued, sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
    const other = new Webhook('whsec_' + Buffer.alloc(32, 8).toString('base64'));
    expect(() => other.verify(request.body, request.headers)).toThrow(WebhookVerificationError);
  });

  it('sends the same body on every attempt and keeps the sequence', () => {
    const first = signWebhook({ queued, sequence: 9, previousSequence: 8, secrets: [secret], attemptedAt: new Date('2026-12-02T12:00:00Z') });
    const retry = signWebhook({ queued, sequence: 9, previousSequence: 8, secrets: [secret], attemptedAt: new Date('2026-12-02T12:15:00Z') });
    expect(retry.body).toBe(first.body);
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(retry.headers['webhook-sequence']).toBe('9');
    expect(retry.headers['webhook-timestamp']).not.toBe(first.headers['webhook-timestamp']);
  });

  it('gives one v1 signature per secret, space-separated, each verified by its own secret alone', () => {
    const previous = 'whsec_' + Buffer.alloc(32, 9).toString('base64');
    const request = signWebhook({ queued, sequence: 1, previousSequence: 0, secrets: [secret, previous], attemptedAt: new Date() });
    const [current, old] = (request.headers['webhook-signature'] ?? '').split(' ');
    expect(current).toBe(new Webhook(secret).sign('evt_1', new Date(Number(request.headers['webhook-timestamp']) * 1000), request.body));
    expect(old).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(old).not.toBe(current);
    for (const key of [secret, previous]) expect(new Webhook(key).verify(request.body, request.headers)).toMatchObject({ type: 'order.updated' });
    const other = new Webhook('whsec_' + Buffer.alloc(32, 8).toString('base64'));
    expect(() => other.verify(request.body, request.headers)).toThrow(WebhookVerificationError);
  });

  it('puts the type, the acceptance time, the payload and the event\'s place in its key in the body', () => {
    expect(JSON.parse(webhookBody({ queued, sequence: 7, previousSequence: 5 }))).toEqual({
      type: 'order.updated',
      timestamp: queued.accepted_at,
      data: JSON.parse(queued.event.payload_json),
      sequence: 7,
      ordering_key: 'sub_1',
      previous_sequence: 5,
      subscription_id: 'sub_1',
    });
  });

  it('says under the signature what the headers say outside it: the key unescaped, the number, and a redelivery', () => {
    const event = { ...queued.event, resource_id: 'заказ 7' };
    const redelivered: QueuedEvent = { ...queued, event, ordering_key: partitionKey(event, Ordering.resource), redrive: { sequence: 2, redriven_at: '2026-12-02T13:00:00.000Z' } };
    const request = signWebhook({ queued: redelivered, sequence: 2, previousSequence: 9, secrets: [secret], attemptedAt: new Date() });
    const verified = new Webhook(secret).verify(request.body, request.headers);
    expect(verified).toMatchObject({ sequence: 2, ordering_key: 'заказ 7', previous_sequence: 9, redelivery: true });
    expect(request.headers).toMatchObject({ 'webhook-sequence': '2', 'webhook-ordering-key': encodeHeaderText('заказ 7'), 'webhook-redelivery': 'true' });
  });

  it('marks no redelivery in the body of a first delivery', () => {
    expect(JSON.parse(webhookBody({ queued, sequence: 1, previousSequence: 0 }))).not.toHaveProperty('redelivery');
  });

  it('names, under the signature, the subscription a fan-out’s copy was sent for, alone and in each batch item (their webhook-id is the event’s)', () => {
    const copyFor = (subscriptionId: string): QueuedEvent => ({ ...queued, event: { ...queued.event, event_id: fanOutEventId('evt_1', subscriptionId), subscription_id: subscriptionId }, ordering_key: subscriptionId, fan_out: { event_id: 'evt_1' } });
    for (const subscriptionId of ['sub_a', 'sub_b']) {
      const alone = signWebhook({ queued: copyFor(subscriptionId), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
      expect(alone.headers['webhook-id']).toBe('evt_1');
      expect(new Webhook(secret).verify(alone.body, alone.headers)).toMatchObject({ subscription_id: subscriptionId });
      const batch = signBatch({ items: [{ queued: copyFor(subscriptionId), sequence: 1, previousSequence: 0 }], secrets: [secret], attemptedAt: new Date() });
      expect(new Webhook(secret).verify(batch.body, batch.headers)).toMatchObject({ events: [{ id: 'evt_1', subscription_id: subscriptionId }] });
    }
  });
});

describe('secrets', () => {
  it('generates whsec_ secrets of 32 random bytes that the library accepts', () => {
    const generated = generateSecret(randomBytes);
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(isValidSecret(generated)).toBe(true);
    expect(() => new Webhook(generated)).not.toThrow();
    expect(generateSecret(randomBytes)).not.toBe(generated);
  });

  it.each([
    { secret: 'whsec_' + Buffer.alloc(24).toString('base64'), valid: true },
    { secret: 'whsec_' + Buffer.alloc(64).toString('base64'), valid: true },
    { secret: 'whsec_' + Buffer.alloc(23).toString('base64'), valid: false },
    { secret: 'whsec_' + Buffer.alloc(65).toString('base64'), valid: false },
    { secret: Buffer.alloc(32).toString('base64'), valid: false },
    { secret: 'whsec_not base64!', valid: false },
    { secret: 'whsec_' + Buffer.alloc(32).toString('base64url'), valid: false },
    { secret: 'whsec_', valid: false },
  ])('judges $secret valid: $valid', ({ secret: candidate, valid }) => {
    expect(isValidSecret(candidate)).toBe(valid);
  });
});

describe('signingSecrets', () => {
  const rotatedAt = new Date('2026-12-02T12:00:00.000Z');
  const expiresAt = previousSecretExpiry(rotatedAt, DEFAULT_ROTATION_GRACE_SECONDS).toISOString();
  const keys = { secret: 'whsec_new', previous_secret: 'whsec_old', previous_secret_expires_at: expiresAt };

  it('ends the default grace 24 hours after the rotation', () => {
    expect(expiresAt).toBe('2026-12-03T12:00:00.000Z');
    expect(previousSecretExpiry(rotatedAt, 0)).toEqual(rotatedAt);
  });

  it.each([
    { when: 'at the rotation', at: '2026-12-02T12:00:00.000Z', expected: ['whsec_new', 'whsec_old'] },
    { when: 'a millisecond before the grace ends', at: '2026-12-03T11:59:59.999Z', expected: ['whsec_new', 'whsec_old'] },
    { when: 'the grace ends', at: '2026-12-03T12:00:00.000Z', expected: ['whsec_new'] },
    { when: 'after the grace', at: '2026-12-04T00:00:00.000Z', expected: ['whsec_new'] },
  ])('signs with $expected when $when', ({ at, expected }) => {
    expect(signingSecrets(keys, new Date(at))).toEqual(expected);
  });

  it('signs with the secret alone when there was no rotation', () => {
    expect(signingSecrets({ secret: 'whsec_only' }, rotatedAt)).toEqual(['whsec_only']);
    expect(signingSecrets({ secret: 'whsec_only', previous_secret: 'whsec_old' }, rotatedAt)).toEqual(['whsec_only']);
  });
});

describe('webhookBody of unusual payloads', () => {
  const queuedWith = (payloadJson: string): QueuedEvent => {
    const read = readQueuedEvent(
      `{"version":1,"event":{"event_id":"e","tenant_id":"t","subscription_id":"s","type":"x","payload":${payloadJson}},"ordering_key":"s","message_group_id":"g","accepted_at":"2026-12-02T12:00:00.000Z"}`,
    );
    if (!('queued' in read)) throw new Error(read.reason);
    return read.queued;
  };

  it('sends own "__proto__", "constructor" and "prototype" keys as they were accepted', () => {
    const payloadJson = '{"__proto__":{"polluted":true},"constructor":{"name":"x"},"prototype":1,"id":2}';
    const request = signWebhook({ queued: queuedWith(payloadJson), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
    expect(request.body).toBe(`{"type":"x","timestamp":"2026-12-02T12:00:00.000Z","data":${payloadJson},"sequence":1,"ordering_key":"s","previous_sequence":0,"subscription_id":"s"}`);
    const verified = new Webhook(secret).verify(request.body, request.headers) as { data: object };
    expect(Object.keys(verified.data)).toEqual(['__proto__', 'constructor', 'prototype', 'id']);
  });

  it(`signs a payload ${MAX_PAYLOAD_DEPTH} levels deep`, () => {
    const payloadJson = '{"a":'.repeat(MAX_PAYLOAD_DEPTH - 1) + '{}' + '}'.repeat(MAX_PAYLOAD_DEPTH - 1);
    expect(webhookBody({ queued: queuedWith(payloadJson), sequence: 1, previousSequence: 0 })).toContain(payloadJson);
  });
});

describe('webhook bodies of a payload text', () => {
  /** Every rewrite JSON.parse and JSON.stringify would make: digits, -0, key order, escapes, spaces. */
  const posted = '{"n":9007199254740993,"f":1e400,"neg":-0,"small":1e-400,"one":1.0,"b":1,"2":2,"\\u00e9":"\\u00e9\\/","ws" : [ 1 ,\n 2 ]}';
  const queuedOf = (eventId: string, payloadJson: string): QueuedEvent => ({ ...queued, event: { ...queued.event, event_id: eventId, payload_json: payloadJson } });

  it('splices the text into a single event\'s body byte for byte, under the signature', () => {
    const request = signWebhook({ queued: queuedOf('evt_1', posted), sequence: 1, previousSequence: 0, secrets: [secret], attemptedAt: new Date() });
    expect(request.body).toBe(`{"type":"order.updated","timestamp":"2026-12-02T12:00:00.000Z","data":${posted},"sequence":1,"ordering_key":"sub_1","previous_sequence":0,"subscription_id":"sub_1"}`);
    expect(() => new Webhook(secret).verify(request.body, request.headers)).not.toThrow();
  });

  it('splices each item\'s text into a batch body, under the signature', () => {
    const items = [
      { queued: queuedOf('evt_1', posted), sequence: 1, previousSequence: 0 },
      { queued: queuedOf('evt_2', '{ }'), sequence: 2, previousSequence: 0 },
    ] as const;
    const request = signBatch({ items, secrets: [secret], attemptedAt: new Date() });
    expect(request.body).toBe(
      `{"events":[{"id":"evt_1","sequence":1,"ordering_key":"sub_1","previous_sequence":0,"subscription_id":"sub_1","type":"order.updated","timestamp":"2026-12-02T12:00:00.000Z","data":${posted}},` +
        `{"id":"evt_2","sequence":2,"ordering_key":"sub_1","previous_sequence":0,"subscription_id":"sub_1","type":"order.updated","timestamp":"2026-12-02T12:00:00.000Z","data":{ }}]}`,
    );
    expect(batchBodyBytes(items)).toBe(Buffer.byteLength(request.body));
    expect(() => new Webhook(secret).verify(request.body, request.headers)).not.toThrow();
  });
});

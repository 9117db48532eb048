import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { readQueuedEvent, type QueuedEvent } from '../../../lambda/core/event.js';
import { MAX_PAYLOAD_DEPTH } from '../../../lambda/core/limits.js';
import { generateSecret, isValidSecret } from '../../../lambda/core/secret.js';
import { signWebhook, webhookBody } from '../../../lambda/core/webhook.js';

const queued: QueuedEvent = {
  version: 1,
  event: {
    event_id: 'evt_1',
    tenant_id: 'tenant_1',
    subscription_id: 'sub_1',
    type: 'order.updated',
    payload: { order: 42, note: 'ünïcode ✓' },
  },
  ordering_key: 'sub_1',
  message_group_id: 'group',
  accepted_at: '2026-12-02T12:00:00.000Z',
};
const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');

describe('signWebhook', () => {
  it('is verified by the standardwebhooks library', () => {
    const attemptedAt = new Date();
    const request = signWebhook({ queued, sequence: 3, secret, attemptedAt });
    const verified = new Webhook(secret).verify(request.body, request.headers);
    expect(verified).toEqual({ type: 'order.updated', timestamp: '2026-12-02T12:00:00.000Z', data: queued.event.payload });
  });

  it('carries the contract headers', () => {
    const attemptedAt = new Date('2026-12-02T12:00:05.900Z');
    const request = signWebhook({ queued, sequence: 3, secret, attemptedAt });
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
      'webhook-sequence': '3',
    });
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('signs exactly "<id>.<timestamp>.<body>" with the decoded secret', () => {
    const attemptedAt = new Date('2026-12-02T12:00:05Z');
    const request = signWebhook({ queued, sequence: 1, secret, attemptedAt });
    const expected = new Webhook(secret).sign('evt_1', attemptedAt, request.body);
    expect(request.headers['webhook-signature']).toBe(expected);
  });

  it('is refused by a verifier holding another secret', () => {
    const request = signWebhook({ queued, sequence: 1, secret, attemptedAt: new Date() });
    const other = new Webhook('whsec_' + Buffer.alloc(32, 8).toString('base64'));
    expect(() => other.verify(request.body, request.headers)).toThrow(WebhookVerificationError);
  });

  it('sends the same body on every attempt and keeps the sequence', () => {
    const first = signWebhook({ queued, sequence: 9, secret, attemptedAt: new Date('2026-12-02T12:00:00Z') });
    const retry = signWebhook({ queued, sequence: 9, secret, attemptedAt: new Date('2026-12-02T12:15:00Z') });
    expect(retry.body).toBe(first.body);
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(retry.headers['webhook-sequence']).toBe('9');
    expect(retry.headers['webhook-timestamp']).not.toBe(first.headers['webhook-timestamp']);
  });

  it('puts the type, the acceptance time and the payload in the body', () => {
    expect(JSON.parse(webhookBody(queued))).toEqual({ type: 'order.updated', timestamp: queued.accepted_at, data: queued.event.payload });
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
    const request = signWebhook({ queued: queuedWith(payloadJson), sequence: 1, secret, attemptedAt: new Date() });
    expect(request.body).toBe(`{"type":"x","timestamp":"2026-12-02T12:00:00.000Z","data":${payloadJson}}`);
    const verified = new Webhook(secret).verify(request.body, request.headers) as { data: object };
    expect(Object.keys(verified.data)).toEqual(['__proto__', 'constructor', 'prototype', 'id']);
  });

  it(`signs a payload ${MAX_PAYLOAD_DEPTH} levels deep`, () => {
    const payloadJson = '{"a":'.repeat(MAX_PAYLOAD_DEPTH - 1) + '{}' + '}'.repeat(MAX_PAYLOAD_DEPTH - 1);
    expect(webhookBody(queuedWith(payloadJson))).toContain(payloadJson);
  });
});

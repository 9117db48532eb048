/**
 * Secret rotation: after `POST /v1/subscriptions/{id}/secret/rotate` every webhook
 * carries a signature by the new secret and, during the grace, one by the old secret too, so a
 * receiver verifying with either keeps working; after the grace only the new one signs.
 */
import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_ROTATION_GRACE_SECONDS, generateSecret } from '../../lambda/core/secret.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import type { Attempt } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** How far the consumer's clock runs ahead of the wall clock: the tests move it past a grace. */
let consumerClockOffsetMs = 0;

/**
 * Whether `secret` verifies the webhook with the Standard Webhooks library, as a receiver does.
 * The library checks the timestamp against `Date.now()`: the receiver's clock is made to read what
 * the consumer's read when it signed, so that a shifted consumer clock is judged by its signatures.
 */
function verifies(secret: string, attempt: Attempt): boolean {
  const signedAtMs = Number(attempt.headers['webhook-timestamp']) * 1000;
  const clock = vi.spyOn(Date, 'now').mockReturnValue(signedAtMs);
  try {
    new Webhook(secret).verify(attempt.body, attempt.headers);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  } finally {
    clock.mockRestore();
  }
}

function signaturesOf(attempt: Attempt): string[] {
  return (attempt.headers['webhook-signature'] ?? '').split(' ');
}

describe('local stack secret rotation', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver(
    {},
    { wrapDeliveryPorts: (ports) => ({ ...ports, now: () => new Date(ports.now().getTime() + consumerClockOffsetMs) }) },
  );
  const path = (id: string) => `/v1/subscriptions/${encodeURIComponent(id)}`;
  const rotate = (id: string, body?: unknown) => call(stack().url, 'POST', `${path(id)}/secret/rotate`, body);
  const outsider = generateSecret(randomBytes);

  afterEach(() => {
    consumerClockOffsetMs = 0;
  });

  /** Posts one event and answers its delivery as the receiver got it. */
  async function deliver(key: string, eventId: string): Promise<Attempt> {
    await postEvents(stack().url, [makeEvent(key, eventId)]);
    return waitFor(`${eventId} delivered`, () => receiver().deliveredTo(key).find((attempt) => attempt.webhookId === eventId));
  }

  it('signs with the old and the new secret during the grace, and GET never shows a secret', async () => {
    const key = uniquePrefix('rotate');
    const oldSecret = await subscribe(stack().url, key, receiver().endpointFor(key));
    const before = await deliver(key, `${key}-evt-1`);
    expect(signaturesOf(before)).toHaveLength(1);
    expect(verifies(oldSecret, before)).toBe(true);

    const requestedAt = Date.now();
    const rotated = await rotate(key);
    expect(rotated.status).toBe(200);
    const body = rotated.body as { subscription_id: string; secret: string; previous_secret_expires_at: string };
    expect(Object.keys(body).sort()).toEqual(['previous_secret_expires_at', 'secret', 'subscription_id']);
    expect(body.subscription_id).toBe(key);
    expect(body.secret).toMatch(/^whsec_/);
    expect(body.secret).not.toBe(oldSecret);
    expect(JSON.stringify(body)).not.toContain(oldSecret);
    const expiresAtMs = Date.parse(body.previous_secret_expires_at);
    expect(expiresAtMs).toBeGreaterThanOrEqual(requestedAt + DEFAULT_ROTATION_GRACE_SECONDS * 1000 - 1000);
    expect(expiresAtMs).toBeLessThanOrEqual(Date.now() + DEFAULT_ROTATION_GRACE_SECONDS * 1000);

    const after = await deliver(key, `${key}-evt-2`);
    expect(signaturesOf(after)).toHaveLength(2);
    expect(signaturesOf(after).every((signature) => /^v1,[A-Za-z0-9+/]+=*$/.test(signature))).toBe(true);
    expect(verifies(body.secret, after)).toBe(true);
    expect(verifies(oldSecret, after)).toBe(true);
    expect(verifies(outsider, after)).toBe(false);

    const read = await call(stack().url, 'GET', path(key));
    expect(read.status).toBe(200);
    expect(Object.keys(read.body as object).sort()).toEqual(['batch_size', 'created_at', 'event_types', 'is_paused', 'last_delivered_at', 'last_replay', 'ordering', 'ordering_change', 'parked_groups', 'pause_reason', 'paused_at', 'replay', 'subscription_id', 'tenant_id', 'url']);
    expect(JSON.stringify(read.body)).not.toContain('whsec_');
  });

  it('signs with the new secret alone once the default grace of 24 hours is over', async () => {
    const key = uniquePrefix('expire');
    const oldSecret = await subscribe(stack().url, key, receiver().endpointFor(key));
    const rotated = await rotate(key, {});
    expect(rotated.status).toBe(200);
    const { secret: newSecret } = rotated.body as { secret: string };

    consumerClockOffsetMs = DEFAULT_ROTATION_GRACE_SECONDS * 1000 + 60_000;
    const after = await deliver(key, `${key}-evt-1`);
    expect(signaturesOf(after)).toHaveLength(1);
    expect(verifies(newSecret, after)).toBe(true);
    expect(verifies(oldSecret, after)).toBe(false);
  });

  it('drops the first secret at once when a second rotation comes within the grace, and grace_seconds 0 ends the old one at once', async () => {
    const key = uniquePrefix('twice');
    const first = await subscribe(stack().url, key, receiver().endpointFor(key));
    const second = ((await rotate(key)).body as { secret: string }).secret;
    const third = ((await rotate(key)).body as { secret: string }).secret;

    const during = await deliver(key, `${key}-evt-1`);
    expect(signaturesOf(during)).toHaveLength(2);
    expect([verifies(third, during), verifies(second, during), verifies(first, during)]).toEqual([true, true, false]);

    const given = generateSecret(randomBytes);
    const rotated = await rotate(key, { secret: given, grace_seconds: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ subscription_id: key });
    expect(rotated.body).not.toHaveProperty('secret');
    const ended = await deliver(key, `${key}-evt-2`);
    expect(signaturesOf(ended)).toHaveLength(1);
    expect([verifies(given, ended), verifies(third, ended)]).toEqual([true, false]);
  });

  it('answers 404 for an unknown subscription and 400 for a bad body, through the HTTP API', async () => {
    const key = uniquePrefix('refused');
    const missing = await rotate(key, {});
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'not_found' } });

    const secret = await subscribe(stack().url, key, receiver().endpointFor(key));
    const bad = await rotate(key, { grace_seconds: -5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: 'invalid_request', details: [{ path: 'grace_seconds' }] } });
    const notJson = await rotate(key, '{');
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ error: { code: 'invalid_json' } });
    // Nothing changed: deliveries carry the one secret still.
    const delivered = await deliver(key, `${key}-evt-1`);
    expect(signaturesOf(delivered)).toHaveLength(1);
    expect(verifies(secret, delivered)).toBe(true);
  });
});

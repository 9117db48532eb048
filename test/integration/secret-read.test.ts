/**
 * Reading a secret is its own act (docs/api.md#subscriptions): `PUT` and `POST …/secret/rotate` answer
 * `secret` only when the call itself generated it, and `GET /v1/subscriptions/{id}/secret` is the
 * one route that answers the secrets in force, the previous one only during a rotation's grace.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSecret } from '../../lambda/core/secret.js';
import { call, uniquePrefix } from './support/api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack secret reading', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver();
  const path = (id: string) => `/v1/subscriptions/${encodeURIComponent(id)}`;
  const put = (id: string, body: Record<string, unknown>) => call(stack().url, 'PUT', path(id), { tenant_id: 'tenant-it', url: receiver().endpointFor(id), ...body });
  const readSecret = (id: string) => call(stack().url, 'GET', `${path(id)}/secret`);

  it('answers the secret a creation generated, and none on a replacement that kept it', async () => {
    const key = uniquePrefix('secret-kept');
    const created = await put(key, {});
    expect(created.status).toBe(201);
    const { secret } = created.body as { secret: string };
    expect(secret).toMatch(/^whsec_/);

    // Re-sending what GET answered: the secret stays, and is not answered again.
    const replaced = await put(key, {});
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ subscription_id: key, tenant_id: 'tenant-it' });
    expect(replaced.body).not.toHaveProperty('secret');
    expect(JSON.stringify(replaced.body)).not.toContain(secret);

    const read = await readSecret(key);
    expect(read).toMatchObject({ status: 200, body: { secret } });
    expect(Object.keys(read.body as object)).toEqual(['secret']);
  });

  it('answers no secret to a PUT that gave one, on creation and on replacement', async () => {
    const key = uniquePrefix('secret-given');
    const first = generateSecret(randomBytes);
    const created = await put(key, { secret: first });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('secret');
    expect(JSON.stringify(created.body)).not.toContain(first);

    const second = generateSecret(randomBytes);
    const replaced = await put(key, { secret: second });
    expect(replaced.status).toBe(200);
    expect(replaced.body).not.toHaveProperty('secret');
    expect(JSON.stringify(replaced.body)).not.toContain(second);

    expect(await readSecret(key)).toMatchObject({ status: 200, body: { secret: second } });
  });

  it('answers the secret a rotation generated, none it was given, and the previous one only during the grace', async () => {
    const key = uniquePrefix('secret-rotated');
    const original = ((await put(key, {})).body as { secret: string }).secret;

    const generated = await call(stack().url, 'POST', `${path(key)}/secret/rotate`, { grace_seconds: 3600 });
    expect(generated.status).toBe(200);
    const { secret: rotated, previous_secret_expires_at: expiresAt } = generated.body as { secret: string; previous_secret_expires_at: string };
    expect(rotated).toMatch(/^whsec_/);
    expect(await readSecret(key)).toEqual(
      expect.objectContaining({ status: 200, body: { secret: rotated, previous_secret: original, previous_secret_expires_at: expiresAt } }),
    );

    // A rotation to a given secret with no grace: the answer holds no secret, and the previous one no longer signs.
    const given = generateSecret(randomBytes);
    const chosen = await call(stack().url, 'POST', `${path(key)}/secret/rotate`, { secret: given, grace_seconds: 0 });
    expect(chosen.status).toBe(200);
    expect(chosen.body).toMatchObject({ subscription_id: key });
    expect(chosen.body).not.toHaveProperty('secret');
    expect(JSON.stringify(chosen.body)).not.toContain(given);
    expect(JSON.stringify(chosen.body)).not.toContain(rotated);
    expect(await readSecret(key)).toEqual(expect.objectContaining({ status: 200, body: { secret: given } }));
  });

  it('answers 404 not_found for the secret of an unknown subscription', async () => {
    const read = await readSecret(uniquePrefix('secret-nobody'));
    expect(read.status).toBe(404);
    expect(read.body).toEqual({ error: { code: 'not_found', message: 'No such subscription.' } });
  });
});

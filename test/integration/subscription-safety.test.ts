/**
 * Subscription safety: re-applying a PUT without a secret keeps the secret the receiver
 * verifies, and another tenant cannot take over a subscription id.
 */
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack subscription safety', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver();
  const path = (id: string) => `/v1/subscriptions/${encodeURIComponent(id)}`;

  it('keeps the secret when the same PUT without a secret is applied again, and deliveries still verify', async () => {
    const key = uniquePrefix('reapply');
    const secret = await subscribe(stack().url, key, receiver().endpointFor(key));
    receiver().setSecret(key, secret);

    const again = await call(stack().url, 'PUT', path(key), { tenant_id: 'tenant-it', url: receiver().endpointFor(key) });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ subscription_id: key });
    expect(again.body).not.toHaveProperty('secret');
    expect((await call(stack().url, 'GET', `${path(key)}/secret`)).body).toEqual({ secret });

    await postEvents(stack().url, [makeEvent(key, `${key}-evt-1`)]);
    await waitFor('the event delivered', () => receiver().deliveredTo(key).length >= 1);
    expect(receiver().deliveredTo(key).map((d) => d.signature)).toEqual([SignatureCheck.verified]);
  });

  it('refuses a PUT of another tenant with 409 tenant_mismatch and changes nothing', async () => {
    const key = uniquePrefix('takeover');
    const url = receiver().endpointFor(key);
    const secret = await subscribe(stack().url, key, url, 'tenant-a');

    const takeover = await call(stack().url, 'PUT', path(key), { tenant_id: 'tenant-b', url: 'http://127.0.0.1:9/elsewhere' });
    expect(takeover.status).toBe(409);
    expect(takeover.body).toMatchObject({ error: { code: 'tenant_mismatch' } });
    expect(JSON.stringify(takeover.body)).not.toContain(secret);

    const read = await call(stack().url, 'GET', path(key));
    expect(read.body).toMatchObject({ subscription_id: key, tenant_id: 'tenant-a', url });
    // The owner still replaces it, and keeps its secret.
    const owner = await call(stack().url, 'PUT', path(key), { tenant_id: 'tenant-a', url });
    expect(owner.status).toBe(200);
    expect(owner.body).not.toHaveProperty('secret');
    expect((await call(stack().url, 'GET', `${path(key)}/secret`)).body).toEqual({ secret });
  });
});

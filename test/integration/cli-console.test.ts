/**
 * `ordered-webhooks console` in front of the local stack: the console's files from the command,
 * the API's answers through it, writes from the console's own page going through and those of
 * other pages refused, and nothing left listening after Ctrl-C.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { startConsole, sendRaw, type RunningConsole } from '../cli/support/console.js';
import { call, uniquePrefix } from './support/api.js';
import { useTestStack } from './support/stack-and-receiver.js';

describe('CLI console on the local stack', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('cli-console');
  const stack = useTestStack({}, { isConsumerEnabled: false });
  let running: RunningConsole | undefined;

  const proxy = (): RunningConsole => {
    if (running === undefined) throw new Error('the console runs only between beforeAll and afterAll');
    return running;
  };

  beforeAll(async () => {
    running = await startConsole(['--url', stack().url]);
  });

  afterAll(async () => {
    // Stopped here when a test failed before the Ctrl-C test; stopping twice resolves the same run.
    await running?.stop();
  });

  it('serves the console page with its content security policy, and its script', async () => {
    const [page, script] = await Promise.all([fetch(proxy().url), fetch(new URL('console.js', proxy().url))]);

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('<title>ordered-webhooks console</title>');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  });

  it("answers GET /v1/lag with the API's answer, unsigned", async () => {
    const [direct, proxied] = await Promise.all([call(stack().url, 'GET', '/v1/lag'), fetch(`${proxy().origin}/v1/lag`)]);

    expect(proxy().signed).toBe(false);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get('content-type')).toContain('application/json');
    expect(await proxied.json()).toEqual(direct.body);
  });

  it("creates a subscription with a PUT from the console's own page", async () => {
    const subscriptionId = `${prefix}-sub`;
    const answer = await fetch(`${proxy().origin}/v1/subscriptions/${subscriptionId}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', origin: proxy().origin },
      body: JSON.stringify({ tenant_id: 'tenant-it', url: 'http://127.0.0.1:9/webhooks' }),
    });

    expect(answer.status, await answer.clone().text()).toBe(201);
    expect(((await answer.json()) as { subscription_id: string }).subscription_id).toBe(subscriptionId);
    const stored = await call(stack().url, 'GET', `/v1/subscriptions/${subscriptionId}`);
    expect(stored.status).toBe(200);
  });

  it('answers 404 in the error shape for a path that is neither the console nor the API', async () => {
    const answer = await fetch(`${proxy().origin}/admin`);

    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({ error: { code: 'not_found', message: expect.stringContaining('/admin') } });
  });

  it('refuses with 403 a request with Host: evil.example', async () => {
    const answer = await sendRaw(proxy(), { path: '/v1/lag', headers: { host: 'evil.example' } });

    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.text)).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
  });

  it('refuses with 403 a PUT or POST with Origin: http://evil.example, which creates nothing', async () => {
    const subscriptionId = `${prefix}-evil`;
    const answer = await sendRaw(proxy(), {
      method: 'PUT',
      path: `/v1/subscriptions/${subscriptionId}`,
      headers: { origin: 'http://evil.example', 'content-type': 'text/plain' },
      body: JSON.stringify({ tenant_id: 'tenant-it', url: 'http://127.0.0.1:9/webhooks' }),
    });
    const post = await sendRaw(proxy(), { method: 'POST', path: '/v1/events', headers: { origin: 'http://evil.example', 'content-type': 'application/json' }, body: '{"events":[]}' });

    expect(answer.status).toBe(403);
    expect(post.status).toBe(403);
    expect(JSON.parse(post.text)).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
    expect((await call(stack().url, 'GET', `/v1/subscriptions/${subscriptionId}`)).status).toBe(404);
  });

  it('exits 0 on Ctrl-C and stops listening', async () => {
    const run = await proxy().stop();

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    await expect(sendRaw(proxy(), { path: '/health' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

/**
 * The local stack's HTTP port answers only its own clients (docs/api.md#the-local-stack): a `Host` other
 * than its loopback name and port is refused on every path (DNS rebinding), and a write from another
 * origin or site is refused with nothing changed; curl-like clients (no `Origin`, no
 * `Sec-Fetch-Site`) and the console's own page keep working.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { call, subscribe, uniquePrefix } from './support/api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** One request to the stack's port with exactly these headers (`host` included), as a browser or an attacker's page sends it. */
function sendRaw(port: number, method: string, path: string, headers: Readonly<Record<string, string>>, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function errorCodeOf(answer: RawAnswer): unknown {
  return (JSON.parse(answer.text) as { error?: { code?: unknown } }).error?.code;
}

describe('local stack HTTP port trust', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver();
  const port = () => Number(new URL(stack().url).port);
  const own = () => `127.0.0.1:${port()}`;
  const isPaused = async (id: string) => ((await call(stack().url, 'GET', `/v1/subscriptions/${id}`)).body as { is_paused: boolean }).is_paused;

  it.each([
    ['a page of another origin', { origin: 'https://evil.example' }],
    ['a page that sends Origin: null', { origin: 'null' }],
    ['another site, without Origin', { 'sec-fetch-site': 'cross-site' }],
    ['a sibling site, without Origin', { 'sec-fetch-site': 'same-site' }],
  ])('refuses with 403 a simple POST from %s, and pauses nothing', async (_from, headers) => {
    const id = uniquePrefix('cross-site');
    await subscribe(stack().url, id, receiver().endpointFor(id));

    const answer = await sendRaw(port(), 'POST', `/v1/subscriptions/${id}/pause`, { host: own(), 'content-type': 'text/plain', ...headers }, '{}');

    expect(answer.status).toBe(403);
    expect(errorCodeOf(answer)).toBe('forbidden');
    expect(await isPaused(id)).toBe(false);
  });

  it('refuses with 403 every path asked under another Host (DNS rebinding): a PUT, the health check and the console', async () => {
    const id = uniquePrefix('rebound');
    const rebound = `evil.example:${port()}`;
    const put = await sendRaw(port(), 'PUT', `/v1/subscriptions/${id}`, { host: rebound, 'content-type': 'application/json' }, JSON.stringify({ tenant_id: 'tenant-it', url: receiver().endpointFor(id) }));
    const health = await sendRaw(port(), 'GET', '/health', { host: rebound });
    const consolePage = await sendRaw(port(), 'GET', '/console/', { host: rebound });
    const wrongPort = await sendRaw(port(), 'GET', '/health', { host: `127.0.0.1:${port() + 1}` });

    for (const answer of [put, health, consolePage, wrongPort]) {
      expect(answer.status).toBe(403);
      expect(errorCodeOf(answer)).toBe('forbidden');
      expect(answer.text).not.toContain('whsec_');
    }
    expect((await call(stack().url, 'GET', `/v1/subscriptions/${id}`)).status).toBe(404);
  });

  it('answers clients with no Origin (curl, the CLI) under 127.0.0.1 and localhost, and the console page’s own same-origin writes', async () => {
    const id = uniquePrefix('own');
    await subscribe(stack().url, id, receiver().endpointFor(id));

    const curl = await sendRaw(port(), 'GET', '/health', { host: own() });
    const byName = await sendRaw(port(), 'GET', '/health', { host: `localhost:${port()}` });
    const consolePage = await sendRaw(port(), 'GET', '/console/', { host: own(), 'sec-fetch-site': 'none' });
    // A read another site's page sends is answered: the browser keeps the answer from that page.
    const crossSiteRead = await sendRaw(port(), 'GET', `/v1/subscriptions/${id}`, { host: own(), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    const pause = await sendRaw(port(), 'POST', `/v1/subscriptions/${id}/pause`, { host: own(), origin: `http://${own()}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' }, '{}');

    expect([curl.status, byName.status, consolePage.status, crossSiteRead.status, pause.status]).toEqual([200, 200, 200, 200, 200]);
    expect(await isPaused(id)).toBe(true);
    const resume = await sendRaw(port(), 'POST', `/v1/subscriptions/${id}/resume`, { host: `localhost:${port()}`, origin: `http://localhost:${port()}`, 'content-type': 'application/json' });
    expect(resume.status).toBe(200);
    expect(await isPaused(id)).toBe(false);
  });
});

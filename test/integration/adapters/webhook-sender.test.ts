import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEndpoint } from '../../../lambda/adapters/endpoint-check.js';
import { createWebhookSender } from '../../../lambda/adapters/webhook-sender.js';
import { AttemptResultKind, RESPONSE_BODY_CAP_BYTES } from '../../../lambda/core/delivery.js';
import { waitFor } from '../support/poll.js';

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

let server: Server;
let base: string;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (request.url === '/ok') return response.writeHead(204).end();
      if (request.url === '/busy') return response.writeHead(429, { 'retry-after': '30' }).end('slow down');
      if (request.url === '/broken') return response.writeHead(500).end('a body that is never logged');
      if (request.url === '/redirect') return response.writeHead(302, { location: '/ok' }).end();
      // '/slow' never answers within the test's timeout.
      return undefined;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request = { headers: { 'content-type': 'application/json', 'webhook-id': 'evt_1' }, body: '{"type":"x"}' };

describe('createWebhookSender', () => {
  const send = createWebhookSender({ timeoutMs: 300, allowPrivateEndpoints: true });

  it('POSTs the body with the webhook headers and reads a 2xx', async () => {
    expect(await send(`${base}/ok`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 204 });
    const last = received.at(-1);
    expect(last).toMatchObject({ path: '/ok', body: '{"type":"x"}' });
    expect(last?.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'evt_1', 'content-length': '12' });
  });

  it('reads Retry-After from a 429', async () => {
    expect(await send(`${base}/busy`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 429, retryAfter: '30' });
  });

  it('reports a 500 and a redirect as responses, following nothing', async () => {
    expect(await send(`${base}/broken`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 500 });
    const before = received.length;
    expect(await send(`${base}/redirect`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 302 });
    expect(received.length).toBe(before + 1);
  });

  it('gives up after the delivery timeout', async () => {
    const started = Date.now();
    expect(await send(`${base}/slow`, request)).toEqual({ kind: AttemptResultKind.timeout, afterMs: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a refused connection as unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await send(`http://127.0.0.1:${port}/`, request)).toEqual({ kind: AttemptResultKind.unreachable, message: 'ECONNREFUSED' });
  });
});

describe('createWebhookSender on a keep-alive connection the server resets', () => {
  /** How long `/reset-late` holds a reused connection before resetting it. */
  const RESET_AFTER_MS = 500;
  /** One request as the server saw it: which path, and whether its socket had served one before. */
  interface Arrival {
    readonly path: string;
    readonly isReusedSocket: boolean;
  }
  let resetting: Server;
  let resettingBase: string;
  const arrivals: Arrival[] = [];
  const servedBySocket = new WeakMap<Socket, number>();

  beforeAll(async () => {
    // `/ok` answers 204 with keep-alive; `/reset-on-reuse` resets a kept-alive socket without
    // answering and answers on a fresh one; `/reset` resets every socket; `/reset-late` resets
    // a kept-alive socket after RESET_AFTER_MS and never answers on a fresh one; `/status-line-only`
    // sends a status line and closes the connection before the headers end.
    resetting = createServer((request: IncomingMessage, response: ServerResponse) => {
      const served = (servedBySocket.get(request.socket) ?? 0) + 1;
      servedBySocket.set(request.socket, served);
      request.resume();
      request.on('end', () => {
        const isReusedSocket = served > 1;
        arrivals.push({ path: request.url ?? '', isReusedSocket });
        if (request.url === '/ok' || (request.url === '/reset-on-reuse' && !isReusedSocket)) return response.writeHead(204).end();
        if (request.url === '/reset-on-reuse' || request.url === '/reset') return request.socket.destroy();
        if (request.url === '/reset-late' && isReusedSocket) return setTimeout(() => request.socket.destroy(), RESET_AFTER_MS);
        if (request.url === '/status-line-only') return request.socket.end('HTTP/1.1 204 No Content\r\n');
        return undefined;
      });
    });
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    resettingBase = `http://127.0.0.1:${(resetting.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    resetting.closeAllConnections();
    await new Promise((resolve) => resetting.close(resolve));
  });

  /** A sender of its own (its own pool), with one keep-alive connection opened by a delivered request. */
  async function senderWithIdleConnection(timeoutMs: number) {
    const send = createWebhookSender({ timeoutMs, allowPrivateEndpoints: true });
    expect(await send(`${resettingBase}/ok`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 204 });
    return send;
  }

  it('sends the request once more on a fresh socket when a reused one is reset before any answer', async () => {
    const send = await senderWithIdleConnection(5000);
    const before = arrivals.length;

    expect(await send(`${resettingBase}/reset-on-reuse`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 204 });

    expect(arrivals.slice(before)).toEqual([
      { path: '/reset-on-reuse', isReusedSocket: true },
      { path: '/reset-on-reuse', isReusedSocket: false },
    ]);
  });

  it('reports a reset on a fresh socket as unreachable, without sending it again', async () => {
    const send = createWebhookSender({ timeoutMs: 5000, allowPrivateEndpoints: true });
    const before = arrivals.length;

    expect(await send(`${resettingBase}/reset`, request)).toEqual({ kind: AttemptResultKind.unreachable, message: 'ECONNRESET' });

    expect(arrivals.slice(before)).toEqual([{ path: '/reset', isReusedSocket: false }]);
  });

  it('sends again only once: a reset of the fresh socket too is unreachable', async () => {
    const send = await senderWithIdleConnection(5000);
    const before = arrivals.length;

    expect(await send(`${resettingBase}/reset`, request)).toEqual({ kind: AttemptResultKind.unreachable, message: 'ECONNRESET' });

    expect(arrivals.slice(before)).toEqual([
      { path: '/reset', isReusedSocket: true },
      { path: '/reset', isReusedSocket: false },
    ]);
  });

  it('does not send again when the connection closed after the answer had begun', async () => {
    const send = await senderWithIdleConnection(5000);
    const before = arrivals.length;

    expect((await send(`${resettingBase}/status-line-only`, request)).kind).toBe(AttemptResultKind.unreachable);

    expect(arrivals.slice(before)).toEqual([{ path: '/status-line-only', isReusedSocket: true }]);
  });

  it('bounds the reset request and the one sent again together by the timeout', async () => {
    const timeoutMs = 800;
    const send = await senderWithIdleConnection(timeoutMs);
    const before = arrivals.length;
    const started = Date.now();

    expect(await send(`${resettingBase}/reset-late`, request)).toEqual({ kind: AttemptResultKind.timeout, afterMs: timeoutMs });

    // A timeout of its own for the request sent again would end at RESET_AFTER_MS + timeoutMs.
    expect(Date.now() - started).toBeLessThan(RESET_AFTER_MS + timeoutMs - 100);
    const [reset, sentAgain] = await waitFor('both requests to reach the server', () => (arrivals.length - before >= 2 ? arrivals.slice(before) : undefined));
    expect([reset, sentAgain]).toEqual([
      { path: '/reset-late', isReusedSocket: true },
      { path: '/reset-late', isReusedSocket: false },
    ]);
    expect(arrivals.length - before).toBe(2);
  });
});

describe('createWebhookSender against a receiver whose body does not end', () => {
  /** When the server saw each path's connection close, in ms after its request arrived. */
  const closedAfterMs = new Map<string, number>();
  /** How many body bytes `/stream` had handed to its socket when the connection closed. */
  let streamedBytes = 0;
  let holding: Server;
  let holdingBase: string;

  beforeAll(async () => {
    // `/hold` and `/hold-503` send a status and a few bytes and never end; `/cap` sends exactly
    // RESPONSE_BODY_CAP_BYTES and holds, `/cap-plus-one` one byte more; `/stream` writes as fast as
    // the client reads, for ever.
    holding = createServer((request: IncomingMessage, response: ServerResponse) => {
      const path = request.url ?? '';
      const arrivedAt = Date.now();
      response.on('close', () => closedAfterMs.set(path, Date.now() - arrivedAt));
      request.resume();
      request.on('end', () => {
        if (path === '/hold-503') return response.writeHead(503, { 'retry-after': '7' }).write('partial');
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        if (path === '/hold') return response.write('partial');
        if (path === '/cap') return response.write(Buffer.alloc(RESPONSE_BODY_CAP_BYTES, 'a'));
        if (path === '/cap-plus-one') return response.write(Buffer.alloc(RESPONSE_BODY_CAP_BYTES + 1, 'a'));
        const chunk = Buffer.alloc(64 * 1024, 'b');
        const pump = (): void => {
          while (!response.destroyed) {
            streamedBytes += chunk.byteLength;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
        };
        return pump();
      });
    });
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    holdingBase = `http://127.0.0.1:${(holding.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    holding.closeAllConnections();
    await new Promise((resolve) => holding.close(resolve));
  });

  const closeOf = (path: string): Promise<number> => waitFor(`the connection of ${path} to close`, () => closedAfterMs.get(path), 5_000);

  it('decides a 200 whose body never ends by its status, and closes the connection at the deadline', async () => {
    const timeoutMs = 400;
    const send = createWebhookSender({ timeoutMs, allowPrivateEndpoints: true });

    expect(await send(`${holdingBase}/hold`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 200 });

    const closedAfter = await closeOf('/hold');
    expect(closedAfter).toBeGreaterThanOrEqual(timeoutMs - 50);
    expect(closedAfter).toBeLessThan(timeoutMs + 1_000);
  });

  it('decides a refusal whose body never ends by its status and Retry-After', async () => {
    const send = createWebhookSender({ timeoutMs: 400, allowPrivateEndpoints: true });

    expect(await send(`${holdingBase}/hold-503`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 503, retryAfter: '7' });

    expect(await closeOf('/hold-503')).toBeLessThan(1_400);
  });

  it('reads RESPONSE_BODY_CAP_BYTES of a body and waits for its end, but cuts it one byte further at once', async () => {
    const timeoutMs = 1_500;
    const send = createWebhookSender({ timeoutMs, allowPrivateEndpoints: true });

    const [atCap, pastCap] = await Promise.all([send(`${holdingBase}/cap`, request), send(`${holdingBase}/cap-plus-one`, request)]);

    expect(atCap).toEqual({ kind: AttemptResultKind.response, statusCode: 200 });
    expect(pastCap).toEqual({ kind: AttemptResultKind.response, statusCode: 200 });
    expect(await closeOf('/cap-plus-one')).toBeLessThan(timeoutMs / 2);
    expect(await closeOf('/cap')).toBeGreaterThanOrEqual(timeoutMs - 50);
  });

  it('stops reading a body streamed without end once past the cap, long before the deadline', async () => {
    const timeoutMs = 10_000;
    const send = createWebhookSender({ timeoutMs, allowPrivateEndpoints: true });
    const started = Date.now();

    expect(await send(`${holdingBase}/stream`, request)).toEqual({ kind: AttemptResultKind.response, statusCode: 200 });

    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await closeOf('/stream')).toBeLessThan(2_000);
    // What the kernel's socket buffers hold besides the cap: megabytes at most, never an endless read.
    expect(streamedBytes).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('createWebhookSender without private endpoints', () => {
  const send = createWebhookSender({ timeoutMs: 300, allowPrivateEndpoints: false });

  it('refuses a private address literal without connecting', async () => {
    const before = received.length;
    expect(await send(`${base}/ok`, request)).toEqual({ kind: AttemptResultKind.endpointNotAllowed, address: '127.0.0.1' });
    expect(received.length).toBe(before);
  });

  it('refuses the IPv4-compatible form of the metadata address without connecting, as the subscription check does', async () => {
    expect(await send('http://[::a9fe:a9fe]/latest', request)).toEqual({ kind: AttemptResultKind.endpointNotAllowed, address: '::a9fe:a9fe' });
  });

  it('refuses a name that resolves to loopback at connection time (DNS rebinding)', async () => {
    const before = received.length;
    const port = new URL(base).port;
    const result = await send(`http://localhost:${port}/ok`, request);
    expect(result.kind).toBe(AttemptResultKind.endpointNotAllowed);
    expect(received.length).toBe(before);
  });
});

describe('checkEndpoint', () => {
  it.each(['http://127.0.0.1/', 'http://localhost/', 'http://[::1]/', 'http://169.254.169.254/', 'http://[::ffff:10.0.0.1]/', 'http://[::a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::1]/'])('refuses %s when private endpoints are not allowed', async (url) => {
    expect((await checkEndpoint(url, false)).isAllowed).toBe(false);
  });

  it('allows anything when private endpoints are allowed, without resolving', async () => {
    expect(await checkEndpoint('http://does-not-resolve.invalid/', true)).toEqual({ isAllowed: true });
  });

  it('refuses a name that does not resolve', async () => {
    const check = await checkEndpoint('http://does-not-resolve.invalid/', false);
    expect(check).toMatchObject({ isAllowed: false });
    if (!check.isAllowed) expect(check.reason).toMatch(/could not be resolved/);
  });
});

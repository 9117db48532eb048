/**
 * `console`: a loopback server for the operator console that proxies its API requests to
 * `--url`, signed with SigV4 when asked, and refuses what other pages of the browser could send
 * it (another `Host`: DNS rebinding; a write from another `Origin`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { isApiPath, parseLoopbackHost } from '../../cli/proxy/console-proxy.js';
import { lagPage } from './support/answers.js';
import { startConsole, sendRaw, type RawAnswer, type RunningConsole } from './support/console.js';
import { useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';
import { expectedAuthorization } from './support/sigv4.js';

const CREDENTIALS = { accessKeyId: 'AKIDCONSOLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=AKIDCONSOLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/;


function errorOf(answer: RawAnswer): { code: string; message: string } {
  return (JSON.parse(answer.text) as { error: { code: string; message: string } }).error;
}

/** A port nothing listens on: one the OS handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('parseLoopbackHost', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['127.1.2.3', '127.1.2.3'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['localhost', 'localhost'],
    ['LocalHost', 'localhost'],
  ])('accepts %s as %s', (value, host) => {
    expect(parseLoopbackHost(value)).toBe(host);
  });

  it.each(['0.0.0.0', '192.168.1.5', '10.0.0.1', '::', '::ffff:192.168.1.5', '127.0.0.256', '127.0.0', 'example.com', 'localhost.example.com', ''])('refuses %s', (value) => {
    expect(() => parseLoopbackHost(value)).toThrow(/--host must be a loopback address/);
  });
});

describe('isApiPath', () => {
  it.each([
    ['/v1/lag', true],
    ['/v1/subscriptions/a', true],
    ['/health', true],
    ['/openapi.json', true],
    ['/v1', false],
    ['/', false],
    ['/admin', false],
    ['/healthz', false],
  ])('says %s is the API: %s', (path, isApi) => {
    expect(isApiPath(path)).toBe(isApi);
  });
});

describe('ordered-webhooks console: options', () => {
  it.each(['0.0.0.0', '192.168.1.5'])('exits 2 without listening for --host %s', async (host) => {
    const run = await runCommand(['console', '--host', host, '--port', '0']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`--host must be a loopback address`);
    expect(run.stderr).toContain(`(got "${host}")`);
  });

  it('exits 2 for a port out of range', async () => {
    const run = await runCommand(['console', '--port', '70000']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('--port must be at most 65535');
  });

  it('prints where it listens and what it proxies, unsigned for a local URL, and exits 0 on Ctrl-C', async () => {
    const interrupt = new AbortController();
    const lines: string[] = [];
    const finished = runCommand(['console', '--url', 'http://127.0.0.1:3000', '--host', 'localhost', '--port', '0'], { signal: interrupt.signal, onStdoutWrite: (text) => lines.push(text) });
    const deadline = Date.now() + 10_000;
    while (lines.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    interrupt.abort();
    const run = await finished;

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    expect(run.stdout).toMatch(/^Console: http:\/\/localhost:\d+\/console\/ \(proxying http:\/\/127\.0\.0\.1:3000\/, unsigned\)\. Ctrl-C stops it\.\n$/);
  });
});

describe('ordered-webhooks console: proxying', () => {
  const api = useFakeApi();
  let running: RunningConsole | undefined;

  afterEach(async () => {
    await running?.stop();
    running = undefined;
    vi.unstubAllEnvs();
  });

  const apiPort = (): number => Number(new URL(api.url).port);

  describe('signed', () => {
    beforeEach(() => {
      // The default credential chain reads the environment first.
      vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
      vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey);
      vi.stubEnv('AWS_SESSION_TOKEN', undefined);
    });

    it('signs a GET for execute-api in the region, keeps the stage path and the query, and forwards none of the browser’s credentials', async () => {
      api.on('GET /prod/v1/lag', lagPage([], null));
      running = await startConsole(['--url', `${api.url}/prod`, '--sigv4', '--region', 'eu-west-1']);

      const answer = await sendRaw(running, { path: '/v1/lag?limit=5&cursor=a%20b', headers: { authorization: 'Bearer the-browsers', cookie: 'session=secret', accept: 'application/json' } });

      expect(running.signed).toBe(true);
      expect(answer.status, answer.text).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ groups: [], next_cursor: null });
      expect(answer.headers['content-type']).toBe('application/json');
      const [request] = api.requests;
      if (request === undefined) throw new Error('the API got no request');
      expect(request.path).toBe('/prod/v1/lag');
      expect(Object.fromEntries(request.query)).toEqual({ limit: '5', cursor: 'a b' });
      expect(request.headers.authorization).toMatch(AUTHORIZATION);
      expect(request.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
      expect(request.headers.cookie).toBeUndefined();
      expect(request.headers.accept).toBe('application/json');
      expect(request.headers.host).toBe(`127.0.0.1:${apiPort()}`);
      expect(await expectedAuthorization(request, apiPort(), CREDENTIALS)).toBe(request.headers.authorization);
    });

    it('signs a PUT over its body and passes the answer back with its status', async () => {
      api.on('PUT /prod/v1/subscriptions/sub a', { status: 201, body: { subscription_id: 'sub a' } });
      running = await startConsole(['--url', `${api.url}/prod/`, '--sigv4', '--region', 'eu-west-1']);
      const body = JSON.stringify({ tenant_id: 't', url: 'https://example.com/hook' });

      const answer = await sendRaw(running, { method: 'PUT', path: '/v1/subscriptions/sub%20a', headers: { 'content-type': 'application/json', origin: running.origin }, body });

      expect(answer.status, answer.text).toBe(201);
      const [request] = api.requests;
      if (request === undefined) throw new Error('the API got no request');
      expect(request.rawBody).toBe(body);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers.origin).toBeUndefined();
      expect(await expectedAuthorization(request, apiPort(), CREDENTIALS)).toBe(request.headers.authorization);
    });

    it('answers 500 signing_failed saying what to do when there are no AWS credentials', async () => {
      vi.stubEnv('AWS_ACCESS_KEY_ID', undefined);
      vi.stubEnv('AWS_SECRET_ACCESS_KEY', undefined);
      vi.stubEnv('AWS_PROFILE', 'ordered-webhooks-console-test-nobody');
      vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/aws-config');
      vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/aws-credentials');
      vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
      running = await startConsole(['--url', api.url, '--sigv4', '--region', 'eu-west-1']);

      const answer = await sendRaw(running, { path: '/v1/lag' });

      expect(answer.status).toBe(500);
      expect(errorOf(answer).code).toBe('signing_failed');
      expect(errorOf(answer).message).toMatch(/no usable AWS credentials.*set AWS_PROFILE or run `aws sso login`/i);
      expect(api.requests).toEqual([]);
    });
  });

  it('forwards unsigned to a local URL, without the browser’s authorization, and passes back retry-after and allow', async () => {
    api.on('POST /v1/events', { status: 503, body: { error: { code: 'ingest_paused', message: 'paused' } }, headers: { 'retry-after': '7', 'x-internal': 'no' } });
    running = await startConsole(['--url', api.url]);

    const answer = await sendRaw(running, { method: 'POST', path: '/v1/events', headers: { authorization: 'Basic eDp5', 'content-type': 'application/json' }, body: '{"events":[]}' });

    expect(running.signed).toBe(false);
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.headers['x-internal']).toBeUndefined();
    expect(errorOf(answer).code).toBe('ingest_paused');
    expect(api.requests[0]?.headers.authorization).toBeUndefined();
    expect(api.requests[0]?.rawBody).toBe('{"events":[]}');
  });

  it('refuses with 403 a request whose Host is not its own (DNS rebinding), sending nothing on', async () => {
    running = await startConsole(['--url', api.url]);

    const answer = await sendRaw(running, { path: '/v1/lag', headers: { host: `evil.example:${running.port}` } });

    expect(answer.status).toBe(403);
    expect(errorOf(answer).code).toBe('forbidden');
    expect(api.requests).toEqual([]);
  });

  it('answers a request to localhost:<port> as its own', async () => {
    api.on('GET /health', { status: 200, body: { status: 'ok' } });
    running = await startConsole(['--url', api.url]);

    const answer = await sendRaw(running, { path: '/health', headers: { host: `localhost:${running.port}` } });

    expect(answer.status).toBe(200);
  });

  it('refuses with 403 a write from another origin, and lets a read from one through', async () => {
    api.on('GET /v1/lag', lagPage([], null));
    running = await startConsole(['--url', api.url]);

    const write = await sendRaw(running, { method: 'POST', path: '/v1/groups/g/skip', headers: { origin: 'http://evil.example', 'content-type': 'text/plain' }, body: '{}' });
    const read = await sendRaw(running, { path: '/v1/lag', headers: { origin: 'http://evil.example' } });

    expect(write.status).toBe(403);
    expect(errorOf(write).code).toBe('forbidden');
    expect(read.status).toBe(200);
    expect(api.calls()).toEqual(['GET /v1/lag']);
  });

  it('refuses with 403 a write another site sends without Origin, as Sec-Fetch-Site says, and marks the API’s answers as data only', async () => {
    api.on('GET /v1/lag', lagPage([], null));
    running = await startConsole(['--url', api.url]);

    const crossSite = await sendRaw(running, { method: 'POST', path: '/v1/groups/g/skip', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' }, body: '{}' });
    const sameSite = await sendRaw(running, { method: 'POST', path: '/v1/groups/g/skip', headers: { 'sec-fetch-site': 'same-site' }, body: '{}' });
    const read = await sendRaw(running, { path: '/v1/lag', headers: { 'sec-fetch-site': 'cross-site' } });

    expect([crossSite.status, sameSite.status]).toEqual([403, 403]);
    expect(read.status).toBe(200);
    expect(read.headers['x-content-type-options']).toBe('nosniff');
    expect(read.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(api.calls()).toEqual(['GET /v1/lag']);
  });

  it('answers 404 in the error shape for a path that is neither the console nor the API', async () => {
    running = await startConsole(['--url', api.url]);

    const answer = await sendRaw(running, { path: '/admin' });

    expect(answer.status).toBe(404);
    expect(errorOf(answer).code).toBe('not_found');
    expect(api.requests).toEqual([]);
  });

  it('answers 502 bad_gateway naming the API when it cannot be reached', async () => {
    const port = await closedPort();
    running = await startConsole(['--url', `http://127.0.0.1:${port}`]);

    const answer = await sendRaw(running, { path: '/v1/lag' });

    expect(answer.status).toBe(502);
    expect(errorOf(answer)).toEqual({ code: 'bad_gateway', message: expect.stringContaining(`http://127.0.0.1:${port}`) });
  });
});

/**
 * The `console` command's server: the operator console's files and, beside them, a proxy to the
 * HTTP API that signs each request with the operator's AWS credentials, so that the page (which
 * talks only to its own origin) works against a deployed API behind IAM authorization.
 *
 * A loopback server holding the operator's credentials is reachable by every web page the
 * operator's browser opens, so it answers only what the console's own page may ask: the loopback
 * guard the local stack's HTTP API uses too (local/loopback-guard.ts) refuses, with 403, a request
 * to another `Host` (DNS rebinding) and a write from another origin or site, which would otherwise
 * be done signed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode } from '../../lambda/core/api-error.js';
import { MAX_REQUEST_BYTES } from '../../lambda/core/limits.js';
import { isConsolePath } from '../../console/path.js';
import type { ConsoleAssets } from '../../console/serve.js';
import { readCappedBody } from '../../local/capped-body.js';
import { createLoopbackGuard, hostInUrl, LOOPBACK_REFUSAL_CODE, type LoopbackGuard } from '../../local/loopback-guard.js';
import { pathSegment, REQUEST_TIMEOUT_MS, type OutgoingRequest, type RequestSigner } from '../api/client.js';
import { SigningError, UsageError } from '../errors.js';

/** One byte over the contract's 1 MiB, as the local stack keeps: enough for the API to answer 413. */
export const PROXY_BODY_CAP_BYTES = MAX_REQUEST_BYTES + 1;

/** The codes of the proxy's own refusals and failures, in the contract's error shape. */
export const ProxyErrorCode = {
  notFound: ErrorCode.notFound,
  forbidden: LOOPBACK_REFUSAL_CODE,
  badGateway: 'bad_gateway',
  signingFailed: 'signing_failed',
  internalError: ErrorCode.internalError,
} as const;
export type ProxyErrorCode = (typeof ProxyErrorCode)[keyof typeof ProxyErrorCode];

/** Request headers passed on to the API: nothing of the browser's own (cookies, authorization, host). */
const FORWARDED_REQUEST_HEADERS: readonly string[] = ['content-type', 'accept'];
/** Answer headers passed back to the page. */
const FORWARDED_ANSWER_HEADERS: readonly string[] = ['content-type', 'retry-after', 'allow'];
/** What every proxied answer carries besides the API's own headers (see `proxy`). */
const API_ANSWER_HEADERS: Readonly<Record<string, string>> = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" };

/** Whether a path is the API's: its routes, its health check and its OpenAPI document. */
export function isApiPath(pathname: string): boolean {
  return pathname.startsWith('/v1/') || pathname === '/health' || pathname === '/openapi.json';
}

/**
 * The `--host` the proxy may listen on: a loopback address (127.0.0.0/8, ::1) or `localhost`.
 * Anything else would publish the operator's credentials on the network.
 */
export function parseLoopbackHost(value: string): string {
  const host = value.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const octets = host.split('.');
  const isLoopbackV4 = octets.length === 4 && octets[0] === '127' && octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255);
  if (host === 'localhost' || host === '::1' || isLoopbackV4) return host;
  throw new UsageError(`--host must be a loopback address (127.0.0.1, another 127.x.y.z, ::1 or localhost): the proxy signs with your AWS credentials and must not be reachable from the network (got "${value}").`);
}

export interface ConsoleProxyOptions {
  /** A loopback address or `localhost` (see {@link parseLoopbackHost}). */
  readonly host: string;
  /** 0 lets the OS choose. */
  readonly port: number;
  /** The API's base URL; a stage path (`https://…/prod`) is kept in front of every path. */
  readonly apiBaseUrl: URL;
  /** Absent: requests go unsigned (the local stack). */
  readonly signer?: RequestSigner;
  readonly assets: ConsoleAssets;
  /** Aborts requests to the API in flight when the server stops. */
  readonly signal?: AbortSignal;
  /** Default {@link REQUEST_TIMEOUT_MS}. */
  readonly requestTimeoutMs?: number;
  /** One line per failed or refused request: method, path, status and reason; never a body, a credential or a signature. */
  readonly log?: (line: string) => void;
}

export interface ConsoleProxy {
  /** `http://127.0.0.1:<port>`: the console's origin. */
  readonly origin: string;
  readonly port: number;
  /** Stops accepting connections, closes open ones, then resolves. */
  readonly stop: () => Promise<void>;
}

interface Answer {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | string;
}

function errorAnswer(statusCode: number, code: ProxyErrorCode, message: string, headers: Record<string, string> = {}): Answer {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ error: { code, message } }) };
}

/** `ECONNREFUSED`, `ENOTFOUND`, … from undici's `fetch failed` and its cause. */
function describeNetworkError(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Starts the console's server on `host:port`; resolves once it listens. */
export async function startConsoleProxy(options: ConsoleProxyOptions): Promise<ConsoleProxy> {
  const log = options.log ?? (() => undefined);
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const basePath = options.apiBaseUrl.pathname.replace(/\/+$/, '');
  const apiOrigin = options.apiBaseUrl.origin;
  // Set once listening: the guard needs the port the OS chose.
  let guard: LoopbackGuard | undefined;

  const proxy = async (method: string, url: URL, request: IncomingMessage, body: Buffer): Promise<Answer> => {
    // The query is sent as it is signed: decoded, then encoded again the way SigV4 canonicalises it.
    // A repeated parameter keeps its last value (no route of the API repeats one).
    const query = Object.fromEntries(url.searchParams);
    const target = new URL(options.apiBaseUrl);
    target.pathname = `${basePath}${url.pathname}`;
    target.search = Object.entries(query)
      .map(([name, value]) => `${pathSegment(name)}=${pathSegment(value)}`)
      .join('&');
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const text = body.byteLength === 0 ? undefined : body.toString('utf8');
    const outgoing: OutgoingRequest = { method, url: target, query, headers, body: text };
    let signedHeaders: Record<string, string>;
    try {
      signedHeaders = options.signer === undefined ? headers : await options.signer(outgoing);
    } catch (error) {
      if (!(error instanceof SigningError)) throw error;
      log(`${method} ${url.pathname}: 500 signing_failed`);
      return errorAnswer(
        500,
        ProxyErrorCode.signingFailed,
        `The console could not sign the request for ${apiOrigin}: no usable AWS credentials (${error.message}). Set AWS_PROFILE or run \`aws sso login\`, then reload.`,
      );
    }

    const timeout = AbortSignal.timeout(requestTimeoutMs);
    try {
      const response = await fetch(target, {
        method,
        // fetch sets `host` itself, to the same value that was signed.
        headers: Object.fromEntries(Object.entries(signedHeaders).filter(([name]) => name.toLowerCase() !== 'host')),
        ...(text === undefined ? {} : { body: text }),
        redirect: 'manual',
        signal: options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]),
      });
      const answerBody = Buffer.from(await response.arrayBuffer());
      const answerHeaders: Record<string, string> = {};
      for (const name of FORWARDED_ANSWER_HEADERS) {
        const value = response.headers.get(name);
        if (value !== null) answerHeaders[name] = value;
      }
      // The API's JSON, never a page: no browser may sniff it into one, nor run anything from it.
      return { statusCode: response.status, headers: { ...answerHeaders, ...API_ANSWER_HEADERS }, body: answerBody };
    } catch (error) {
      const reason = timeout.aborted ? `no answer within ${requestTimeoutMs} ms` : `cannot reach it: ${describeNetworkError(error)}`;
      log(`${method} ${url.pathname}: 502 bad_gateway (${reason})`);
      return errorAnswer(502, ProxyErrorCode.badGateway, `The console's proxy got no answer from the API at ${apiOrigin} (${reason}).`);
    }
  };

  const serve = async (request: IncomingMessage): Promise<Answer> => {
    const method = request.method ?? 'GET';
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    // Read before any refusal, so that the connection stays usable.
    const body = await readCappedBody(request, PROXY_BODY_CAP_BYTES);
    // node:http emits no request before `listening`, when the guard is set.
    if (guard === undefined) throw new Error('a request arrived before the console listened');
    const refusal = guard.check(method, request.headers);
    if (refusal !== undefined) {
      log(`${method} ${url.pathname}: 403 (${refusal.reason})`);
      return errorAnswer(refusal.statusCode, ProxyErrorCode.forbidden, refusal.message);
    }
    if (isConsolePath(url.pathname)) return options.assets.serve(method, url.pathname);
    if (isApiPath(url.pathname)) return proxy(method, url, request, body);
    return errorAnswer(404, ProxyErrorCode.notFound, `No route for ${method} ${url.pathname}: the console is at /console/, the API under /v1/.`);
  };

  let isStopping = false;
  const server = createServer((request, response: ServerResponse) => {
    const answer = ({ statusCode, headers, body }: Answer): void => {
      if (response.destroyed) return;
      // Once stopping, every answer closes its connection, so that close() does not wait on keep-alive.
      if (isStopping) response.setHeader('connection', 'close');
      for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
      response.setHeader('content-length', String(Buffer.byteLength(body)));
      response.statusCode = statusCode;
      response.end(body);
    };
    serve(request).then(answer, (error: unknown) => {
      // The command's boundary for its own faults (a console file that failed to load or bundle).
      log(`${request.method ?? 'GET'} ${(request.url ?? '/').split('?')[0]}: 500 (${error instanceof Error ? error.message : String(error)})`);
      answer(errorAnswer(500, ProxyErrorCode.internalError, 'The console could not answer this request; retrying it is safe.'));
    });
  });

  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException): void => {
      if (error.code === 'EADDRINUSE') reject(new UsageError(`Port ${options.port} on ${options.host} is in use: give another --port, or --port 0 for any free one.`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new UsageError(`Cannot listen on ${options.host}: this machine has no such address.`));
      else reject(error);
    };
    server.once('error', refuse);
    server.listen(options.port, options.host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  guard = createLoopbackGuard([options.host, address.address, 'localhost'], address.port, 'This console');

  return {
    origin: `http://${hostInUrl(options.host)}:${address.port}`,
    port: address.port,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        isStopping = true;
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * A scripted stand-in for the HTTP API on 127.0.0.1: records every request as it arrived
 * (method, path, query, headers, body) and answers as each test's routes say, so that commands
 * can be tested against routes that are not built yet, errors included.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach } from 'vitest';

export interface RecordedRequest {
  readonly method: string;
  /** Without the query, as sent (still percent-encoded). */
  readonly path: string;
  readonly query: URLSearchParams;
  /** The query string as sent, without `?`. */
  readonly rawQuery: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  /** The body parsed as JSON; undefined when empty. */
  readonly body: unknown;
}

export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  /** A body sent as is, not as JSON. */
  readonly text?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Answers one request; `call` counts this route's requests from 1. */
export type Responder = (request: RecordedRequest, call: number) => Reply | Promise<Reply>;

export interface FakeApi {
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: RecordedRequest[];
  /** `METHOD /path` of every request so far: the sequence a command followed. */
  readonly calls: () => string[];
  /** Sets the answers of `METHOD /path`: one reply, replies in turn (the last one repeated), or a function. */
  readonly on: (route: string, answer: Reply | readonly Reply[] | Responder) => void;
  /** Closes the server; stopping it again does nothing. */
  readonly stop: () => Promise<void>;
}

/** The contract's error body. */
export function apiError(status: number, code: string, message: string): Reply {
  return { status, body: { error: { code, message } } };
}

export async function startFakeApi(): Promise<FakeApi> {
  const requests: RecordedRequest[] = [];
  const routes = new Map<string, Responder>();
  const counts = new Map<string, number>();

  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void (async () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const [path = '', rawQuery = ''] = (incoming.url ?? '').split('?', 2);
        const request: RecordedRequest = {
          method: incoming.method ?? '',
          path,
          query: new URLSearchParams(rawQuery),
          rawQuery,
          headers: incoming.headers,
          rawBody,
          body: rawBody === '' ? undefined : JSON.parse(rawBody),
        };
        requests.push(request);
        const route = `${request.method} ${decodeURIComponent(path)}`;
        const call = (counts.get(route) ?? 0) + 1;
        counts.set(route, call);
        const respond = routes.get(route);
        const reply = respond === undefined ? apiError(404, 'not_found', `No route ${route}.`) : await respond(request, call);
        const text = reply.text ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
        outgoing.writeHead(reply.status, { 'content-type': reply.text === undefined ? 'application/json' : 'text/plain', ...reply.headers });
        outgoing.end(text);
      })();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    calls: () => requests.map((request) => `${request.method} ${decodeURIComponent(request.path)}`),
    on: (route, answer) => {
      if (typeof answer === 'function') routes.set(route, answer);
      else if (Array.isArray(answer)) routes.set(route, (_request, call) => answer[Math.min(call, answer.length) - 1] ?? { status: 500 });
      else routes.set(route, () => answer as Reply);
    },
    stop: async () => {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Starts a fresh fake API before each test of the enclosing `describe` and stops it after.
 * The object returned stands for the current test's API, so tests use it as they would the
 * result of `startFakeApi`, and no request or route leaks from one test into the next.
 */
export function useFakeApi(): FakeApi {
  let current: FakeApi | undefined;
  beforeEach(async () => {
    current = await startFakeApi();
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  const started = (): FakeApi => {
    if (current === undefined) throw new Error('The fake API runs only while a test runs.');
    return current;
  };
  return {
    get url() {
      return started().url;
    },
    get requests() {
      return started().requests;
    },
    calls: () => started().calls(),
    on: (route, answer) => started().on(route, answer),
    stop: () => started().stop(),
  };
}

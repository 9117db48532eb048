/**
 * An SDK request handler that hands each request straight to an emulator's node:http request
 * listener in this process, instead of over a loopback socket.
 *
 * Why: the local stack runs its emulators, its handlers and their SDK clients on one event loop,
 * and with the receiver's latency at 20 ms that loop is busy all the time (the bench of `npm run bench`: event
 * loop utilisation 0.99 at CONSUMER_CONCURRENCY 4). Every DynamoDB call paid for an HTTP request
 * and response on both sides of a socket: node's HTTP client, agent and parser, then dynalite's
 * server parsing it again. In process, a GetItem costs about 30 % less CPU, and the delivery
 * of one event makes about eight DynamoDB calls.
 *
 * What stays as on AWS: the SDK builds, sends and parses every request as before (the whole
 * middleware stack, retries included, signing by the local clients' signer, unsigned-requests.ts);
 * only the transport below `requestHandler` is gone.
 * The emulator keeps listening on its port for other processes (the CLI, tests).
 */
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';

/** What the handler gets of an SDK request (smithy's `HttpRequest`). */
export interface InProcessRequest {
  readonly method: string;
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | null>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

/** What the SDK's deserializers read of a response (smithy's `HttpResponse`). */
export interface InProcessResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: Readable;
}

/**
 * The request an emulator's listener reads: dynalite 4 reads `method`, `url`, `headers` and the
 * `data` and `end` events, and calls `removeAllListeners` once it has answered.
 */
class EmulatorRequest extends EventEmitter {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super();
  }
}

/** The response an emulator's listener writes: dynalite 4 sets `statusCode` and headers, then calls `end` once. */
class EmulatorResponse {
  statusCode = 200;
  /** dynalite keeps the content type it answers with here. */
  contentType = '';
  shouldKeepAlive = true;
  readonly headers: Record<string, string> = {};

  constructor(private readonly onEnd: (response: InProcessResponse) => void) {}

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    return this;
  }

  end(body?: string | Uint8Array): this {
    const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
    this.onEnd({ statusCode: this.statusCode, headers: this.headers, body: Readable.from([bytes]) });
    return this;
  }
}

/** A request listener as node:http's `Server` calls it; typed by what this module passes. */
export type EmulatorListener = (request: EmulatorRequest, response: EmulatorResponse) => void;

/** The request body as bytes: the SDK's JSON protocols send a string. */
function bodyBytes(body: unknown): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('the in-process handler takes string or byte bodies only (the JSON protocols of DynamoDB)');
}

/** `path?query`, as a request line carries it. */
function urlOf(request: InProcessRequest): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value === null) query.append(name, '');
    else if (typeof value === 'string') query.append(name, value);
    else for (const item of value) query.append(name, item);
  }
  const search = query.toString();
  return search === '' ? request.path : `${request.path}?${search}`;
}

/** The part of smithy's `HttpHandler` the SDK clients call. */
export interface InProcessHandler {
  readonly handle: (request: InProcessRequest, options?: { readonly abortSignal?: { readonly aborted: boolean } }) => Promise<{ response: InProcessResponse }>;
  readonly updateHttpClientConfig: () => void;
  readonly httpHandlerConfigs: () => Record<string, never>;
  readonly destroy: () => void;
}

/**
 * A handler that passes requests to `listener`, until `isOpen` says the emulator has stopped:
 * then it fails as a refused connection would, so that a call after stop does not reach a closed
 * database.
 */
export function inProcessHandler(listener: EmulatorListener, isOpen: () => boolean): InProcessHandler {
  return {
    handle: (request, options) =>
      new Promise((resolve, reject) => {
        if (options?.abortSignal?.aborted === true) {
          reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
          return;
        }
        if (!isOpen()) {
          reject(Object.assign(new Error('connect ECONNREFUSED: the emulator has stopped'), { code: 'ECONNREFUSED' }));
          return;
        }
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
        const body = bodyBytes(request.body);
        if (body !== undefined) headers['content-length'] = String(body.byteLength);
        const emulatorRequest = new EmulatorRequest(request.method, urlOf(request), headers);
        const emulatorResponse = new EmulatorResponse((response) => {
          resolve({ response });
        });
        try {
          listener(emulatorRequest, emulatorResponse);
          if (body !== undefined && body.byteLength > 0) emulatorRequest.emit('data', body);
          emulatorRequest.emit('end');
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
}

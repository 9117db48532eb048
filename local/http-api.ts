/**
 * The HTTP API on 127.0.0.1: a thin node:http adapter in front of the same handlers API Gateway
 * invokes when deployed. It routes by ROUTES, builds the v2 event, and writes the handler's result
 * back. No logic of its own beyond what API Gateway does (404, 405, a body-size ceiling), and the
 * loopback guard API Gateway's IAM authorization stands for: only requests to its own `Host`, and
 * no write from another site's page (see loopback-guard.ts), are answered.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ErrorCode } from '../lambda/core/api-error.js';
import { MAX_REQUEST_BYTES } from '../lambda/core/limits.js';
import { toHttpResult, type HttpHandler } from '../lambda/handlers/http.js';
import { errorResponse } from '../lambda/handlers/responses.js';
import type { ApiFunction } from '../lambda/routes.js';
import { isConsolePath } from '../console/path.js';
import type { ConsoleAssets } from '../console/serve.js';
import { toApiGatewayEvent, type ReceivedRequest } from './api-gateway-event.js';
import { readCappedBody } from './capped-body.js';
import { createLoopbackGuard, refusalBody, type LoopbackGuard } from './loopback-guard.js';
import { matchRoute } from './route-match.js';

/**
 * Bytes of a body the adapter keeps. One byte over the contract's 1 MiB is enough for the handler
 * to answer 413; the rest of a larger body is read and dropped, never buffered.
 */
export const BODY_CAP_BYTES = MAX_REQUEST_BYTES + 1;

export interface HttpApiOptions {
  readonly host: string;
  /** 0 lets the OS choose. */
  readonly port: number;
  /** The function behind each route group of ROUTES. */
  readonly handlers: Readonly<Record<ApiFunction, HttpHandler>>;
  /** The operator console, served at `/console/` beside the API (not a route of the deployed API). */
  readonly console?: ConsoleAssets;
  readonly logger: Logger;
}

export interface HttpApi {
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, lets in-flight requests finish, then resolves. */
  readonly stop: () => Promise<void>;
}

function writeResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2, requestId: string): void {
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded === true ? 'base64' : 'utf8');
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  response.setHeader('apigw-requestid', requestId);
  response.setHeader('content-length', String(body.byteLength));
  response.statusCode = result.statusCode ?? 200;
  response.end(body);
}

/** Starts the HTTP API; resolves once it listens. */
export async function startHttpApi(options: HttpApiOptions): Promise<HttpApi> {
  let isStopping = false;
  const server = createServer();
  // Set once listening: the guard needs the port the OS chose.
  let guard: LoopbackGuard | undefined;

  const serve = async (request: IncomingMessage, requestId: string): Promise<APIGatewayProxyStructuredResultV2> => {
    const url = new URL(request.url ?? '/', 'http://local');
    const method = request.method ?? 'GET';
    const match = matchRoute(method, url.pathname);
    // The body is read even for a refused route, so that the connection stays usable.
    const body = await readCappedBody(request, BODY_CAP_BYTES);
    // Before any path, the console's included: a rebound name or another site's write reaches nothing.
    // node:http emits no request before `listening`, when the guard is set.
    if (guard === undefined) throw new Error('a request arrived before the HTTP API listened');
    const refusal = guard.check(method, request.headers);
    if (refusal !== undefined) {
      options.logger.warn('request refused', { requestId, method, path: url.pathname, reason: refusal.reason });
      return { statusCode: refusal.statusCode, headers: { 'content-type': 'application/json' }, body: refusalBody(refusal) };
    }
    if (options.console !== undefined && isConsolePath(url.pathname)) return options.console.serve(method, url.pathname);
    if (match.kind === 'not_found') {
      return toHttpResult(errorResponse({ code: ErrorCode.notFound, message: `No route for ${method} ${url.pathname}.` }));
    }
    if (match.kind === 'method_not_allowed') {
      const allowed = match.allowedMethods.join(', ');
      const refusal = errorResponse({ code: ErrorCode.methodNotAllowed, message: `${url.pathname} does not take ${method}; it takes ${allowed}.` });
      return toHttpResult({ ...refusal, headers: { allow: allowed } });
    }
    const received: ReceivedRequest = {
      method,
      rawPath: url.pathname,
      rawQueryString: url.search.replace(/^\?/, ''),
      headers: request.headers,
      body,
      sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
      domainName: request.headers.host ?? options.host,
      requestId,
      receivedAt: new Date(),
    };
    return options.handlers[match.target](toApiGatewayEvent(received, match));
  };

  server.on('request', (request, response) => {
    const requestId = randomUUID();
    const answer = (result: APIGatewayProxyStructuredResultV2): void => {
      // Once stopping, every answer closes its connection, so that close() does not wait on keep-alive.
      if (isStopping) response.setHeader('connection', 'close');
      writeResult(response, result, requestId);
    };
    serve(request, requestId).then(answer, (error: unknown) => {
      if (request.destroyed || response.destroyed) {
        // The client hung up mid-request: nobody is left to answer.
        options.logger.info('client closed the connection before the answer', { requestId });
        return;
      }
      // The handlers answer their own faults; this is the adapter's boundary for its own.
      options.logger.error('local HTTP adapter failed', { requestId, error });
      answer(toHttpResult(errorResponse({ code: ErrorCode.internalError, message: 'The request could not be completed; retrying it is safe.' })));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  guard = createLoopbackGuard([options.host, address, 'localhost'], port, 'The local stack');

  return {
    url: `http://${options.host}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        isStopping = true;
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

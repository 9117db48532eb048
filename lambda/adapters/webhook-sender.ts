/**
 * HTTP delivery of one webhook attempt.
 *
 * The endpoint check at delivery time runs inside the socket's DNS lookup
 * ({@link publicOnlyLookup}), so the address judged is the address connected to: a name that
 * resolved to a public address when the subscription was made and to 169.254.169.254 now (DNS
 * rebinding) is refused.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { AttemptResultKind, RESPONSE_BODY_CAP_BYTES, type AttemptResult } from '../core/delivery.js';
import { isPublicAddress } from '../core/endpoint-policy.js';
import type { WebhookRequest } from '../core/webhook.js';
import { EndpointNotAllowedError, publicOnlyLookup, unbracketed } from './endpoint-check.js';

const USER_AGENT = 'ordered-webhooks/0.1';

export interface WebhookSenderOptions {
  /** One deadline for the whole attempt: connect, status line and headers, and body together. */
  readonly timeoutMs: number;
  readonly allowPrivateEndpoints: boolean;
}

/**
 * Whether a request failed in the race of a keep-alive connection: it went out on a socket
 * reused from the pool, and the connection was reset or closed before a single byte of the
 * answer came back. The server closed what it thought was an idle connection; that says nothing
 * about the receiver, so the request may go again on a fresh socket.
 */
function isStaleConnectionReset(outgoing: http.ClientRequest, error: NodeJS.ErrnoException, bytesReadBefore: number): boolean {
  // Node reports both a reset and a close without an answer ("socket hang up") as ECONNRESET.
  return outgoing.reusedSocket && error.code === 'ECONNRESET' && (outgoing.socket?.bytesRead ?? bytesReadBefore) === bytesReadBefore;
}

/**
 * A sender with keep-alive connections. It reads the status line and `Retry-After` only; the
 * response body is read up to {@link RESPONSE_BODY_CAP_BYTES} and discarded, never logged.
 *
 * One deadline of `timeoutMs` covers the whole attempt: the lookup and connect, the status line
 * and headers, and the body. An attempt ends when the body has ended, passed the cap, or met the
 * deadline (then the connection is closed): a receiver that answers and never ends its body holds
 * an attempt no longer than one that never answers, and nothing of the attempt outlives it.
 *
 * A request lost to a reused connection the server had just closed (see
 * {@link isStaleConnectionReset}) is sent once more, the same signed request on a fresh socket,
 * inside the same attempt: the same deadline bounds both. Anything else that fails is the
 * attempt's result, never retried here.
 */
export function createWebhookSender(options: WebhookSenderOptions): (url: string, request: WebhookRequest) => Promise<AttemptResult> {
  const lookup = options.allowPrivateEndpoints ? undefined : publicOnlyLookup;
  const agents = {
    'http:': new http.Agent({ keepAlive: true, lookup }),
    'https:': new https.Agent({ keepAlive: true, lookup }),
  };
  return (url, request) =>
    new Promise<AttemptResult>((resolve) => {
      const target = new URL(url);
      const host = unbracketed(target.hostname);
      // Literal IP hosts skip DNS, so the lookup hook never sees them: judge them here.
      if (!options.allowPrivateEndpoints && isIP(host) !== 0 && !isPublicAddress(host)) {
        return resolve({ kind: AttemptResultKind.endpointNotAllowed, address: host });
      }
      const transport = target.protocol === 'https:' ? https : http;
      const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
      const body = Buffer.from(request.body, 'utf8');
      const headers = { ...request.headers, 'content-length': String(body.byteLength), 'user-agent': USER_AGENT };

      let isSettled = false;
      let current: http.ClientRequest | undefined;
      // Set once the status line has arrived: from then on the attempt's result is that answer,
      // however its body ends.
      let answer: AttemptResult | undefined;
      const settle = (result: AttemptResult): void => {
        if (isSettled) return;
        isSettled = true;
        clearTimeout(timer);
        resolve(result);
      };
      // Closes the connection (it never goes back to the pool) and ends the attempt.
      const cut = (result: AttemptResult): void => {
        settle(result);
        current?.destroy();
      };
      const timer = setTimeout(() => cut(answer ?? { kind: AttemptResultKind.timeout, afterMs: options.timeoutMs }), options.timeoutMs);

      const send = (isRetry: boolean): void => {
        // The retry takes a socket of its own (agent: false), never another pooled one that the
        // server may have closed as well; the lookup still judges the address it connects to.
        const outgoing = transport.request(target, { method: 'POST', headers, ...(isRetry ? { agent: false, lookup } : { agent }) });
        current = outgoing;
        let bytesReadBefore = 0;
        outgoing.on('socket', (socket) => {
          bytesReadBefore = socket.bytesRead;
        });
        outgoing.on('response', (response) => {
          const retryAfter = response.headers['retry-after'];
          const received: AttemptResult = {
            kind: AttemptResultKind.response,
            statusCode: response.statusCode ?? 0,
            ...(retryAfter === undefined ? {} : { retryAfter }),
          };
          answer = received;
          let bodyBytes = 0;
          response.on('data', (chunk: Buffer) => {
            bodyBytes += chunk.byteLength;
            if (bodyBytes > RESPONSE_BODY_CAP_BYTES) cut(received);
          });
          // A body that ends lets the connection serve the next attempt; one the server breaks
          // off, or that we cut, is cut: the status has decided the attempt either way.
          response.on('end', () => settle(received));
          response.on('error', () => cut(received));
          response.on('close', () => settle(received));
        });
        outgoing.on('error', (error: NodeJS.ErrnoException) => {
          // After the deadline or a cut the request was destroyed on purpose: its error is not news.
          if (isSettled) return;
          if (answer !== undefined) return cut(answer);
          if (!isRetry && isStaleConnectionReset(outgoing, error, bytesReadBefore)) return send(true);
          if (error instanceof EndpointNotAllowedError) settle({ kind: AttemptResultKind.endpointNotAllowed, address: error.address });
          else settle({ kind: AttemptResultKind.unreachable, message: error.code ?? error.message });
        });
        outgoing.end(body);
      };
      send(false);
      return undefined;
    });
}

/**
 * `createReceiver`: the request handler a receiver of ordered-webhooks mounts. It verifies the
 * Standard Webhooks signature (refusing a stale timestamp), drops a request whose `webhook-id` it
 * processed already for the same subscription, unpacks a batch into its events, and hands each
 * event to the application in order with its report (in order, duplicate, gap, redelivery; see
 * `judge`), judged in its subscription's ordering key.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { readEvents, type ReceivedEvent } from './body.js';
import { judge, type OrderReport } from './order.js';
import { createMemoryStore, type ReceiverStore } from './store.js';

export interface ReceiverOptions {
  /** The subscription's signing secret (`whsec_…`); several while the receiver changes its own. */
  readonly secret: string | readonly [string, ...string[]];
  /** Where the receiver keeps what it took; in this process's memory when absent. */
  readonly store?: ReceiverStore;
  /**
   * Called for each event, in the key's order, with its report. Throwing answers the request 500:
   * the service sends it again later, and this event and those after it in the request are judged
   * again then (the ones before it are taken, and then reported as duplicates). A request sent
   * again while the first is still here (the service timed out on it) is judged on the state the
   * first has not written yet: both may be reported in order. Keep `onEvent` idempotent, or well
   * inside the subscription's delivery timeout.
   */
  readonly onEvent: (event: ReceivedEvent, report: OrderReport) => void | Promise<void>;
  /**
   * Called for a request dropped because its `webhook-id` was processed already for its
   * subscription (undefined in a body of a stack from before the body named it).
   */
  readonly onDuplicate?: (webhookId: string, subscriptionId: string | undefined) => void | Promise<void>;
  /**
   * A prefix for the store's keys and webhook ids, to keep receivers that share a store apart (two
   * applications, or two stacks). Subscriptions need none: the kit keys what it keeps by the
   * body's `subscription_id` (see {@link storeKeyOf}). Bodies of a stack from before the body
   * named its subscription carry none, and are kept by ordering key and `webhook-id` alone, as
   * before: there, give each subscription its own namespace when several share a store.
   */
  readonly namespace?: string;
  /** The most bytes of a body read: 1 MiB by default, the largest the service sends. */
  readonly maxBodyBytes?: number;
  /**
   * Called when an event could not be taken (`onEvent` or the store threw), before the request is
   * answered 500: by default `console.error` with the event's id, subscription, ordering key and
   * sequence and the error, never its payload. The error's text never goes back over the wire.
   */
  readonly onError?: (error: unknown, event: ReceivedEvent) => void;
}

/** {@link ReceiverOptions.onError} by default: the event by its coordinates, and the error. */
function logNotTaken(error: unknown, event: ReceivedEvent): void {
  console.error(`ordered-webhooks receiver: event ${event.id} (subscription ${event.subscriptionId ?? '?'}, key ${event.orderingKey}, #${event.sequence}) was not taken; answering 500`, error);
}

/** What the receiver answers: a status, and a JSON body `{"error"}` when it refuses. */
export interface ReceiverAnswer {
  readonly status: number;
  readonly body: string;
}

/** A request as any framework has it: its headers and its raw body (the bytes the signature covers). */
export interface RawRequest {
  readonly headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body: string | Uint8Array;
}

export interface Receiver {
  /** Any framework: give it the headers and the raw body, answer with what it returns. */
  readonly handle: (request: RawRequest) => Promise<ReceiverAnswer>;
  /** Node's `http` server, and Express without a JSON body parser (or with `express.raw()`). */
  readonly node: (request: IncomingMessage & { readonly body?: unknown }, response: ServerResponse) => Promise<void>;
  /** A Web `Request` to a `Response`: Hono, Bun, Deno, Next.js route handlers, Cloudflare Workers. */
  readonly fetch: (request: Request) => Promise<Response>;
}

const ACCEPTED: ReceiverAnswer = { status: 204, body: '' };
// Web APIs, not Node's Buffer: the kit runs wherever `Request` does (Deno, Workers, Bun).
const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();
/** How often a key's write is tried again when another request of the same key wrote first. */
const MAX_KEY_WRITES = 20;

/**
 * The store's key for a subscription's ordering key, or for a `webhook-id` it was sent: the
 * namespace, then the pair as JSON text (`["sub_1","order_7"]`), which no two pairs share whatever
 * the ids hold. Numbers count per ordering key of one subscription, and a fan-out's copies to two
 * subscriptions carry one `webhook-id` (and, ordered by resource, one ordering key). Without a
 * subscription (a body of a stack from before the body named it), the name alone, as the kit kept it before.
 */
export function storeKeyOf(namespace: string, subscriptionId: string | undefined, name: string): string {
  return subscriptionId === undefined ? `${namespace}${name}` : `${namespace}${JSON.stringify([subscriptionId, name])}`;
}

function refusal(status: number, error: string): ReceiverAnswer {
  return { status, body: JSON.stringify({ error }) };
}

function headerRecord(headers: RawRequest['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => {
      record[name.toLowerCase()] = value;
    });
    return record;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) record[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  }
  return record;
}

/** The JSON body when one of the secrets signed it; the reason otherwise. */
function verify(secrets: readonly Webhook[], body: string, headers: Record<string, string>): { readonly body: unknown } | { readonly status: number; readonly reason: string } {
  let reason = 'no secret';
  for (const webhook of secrets) {
    try {
      return { body: webhook.verify(body, headers) };
    } catch (error) {
      if (error instanceof SyntaxError) return { status: 400, reason: 'the body is not JSON' };
      if (!(error instanceof WebhookVerificationError)) throw error;
      reason = error.message;
    }
  }
  return { status: 401, reason: `signature not verified: ${reason}` };
}

export function createReceiver(options: ReceiverOptions): Receiver {
  const secrets = (typeof options.secret === 'string' ? [options.secret] : options.secret).map((secret) => new Webhook(secret));
  const store = options.store ?? createMemoryStore();
  const namespace = options.namespace ?? '';
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;

  /** Judges one event against its key and hands it to the application, then keeps the key's new state. */
  const take = async (event: ReceivedEvent): Promise<void> => {
    const key = storeKeyOf(namespace, event.subscriptionId, event.orderingKey);
    const place = { sequence: event.sequence, previousSequence: event.previousSequence, isRedelivery: event.isRedelivery };
    const stored = await store.readKey(key);
    const { report, next } = judge(stored?.state, place);
    await options.onEvent(event, report);
    // Another request of the key wrote first: judge again on what it wrote, and keep that. The
    // application was told once, with the state as this request found it.
    let write = { next, version: stored?.version };
    for (let tries = 1; !(await store.writeKey(key, write.next, write.version)); tries += 1) {
      if (tries >= MAX_KEY_WRITES) throw new Error(`ordering key ${event.orderingKey} kept changing while event ${event.id} was being taken`);
      const again = await store.readKey(key);
      write = { next: judge(again?.state, place).next, version: again?.version };
    }
  };

  const handle = async (request: RawRequest): Promise<ReceiverAnswer> => {
    const body = typeof request.body === 'string' ? request.body : utf8Decoder.decode(request.body);
    if (utf8Encoder.encode(body).byteLength > maxBodyBytes) return refusal(413, `the body is over ${maxBodyBytes} bytes`);
    const headers = headerRecord(request.headers);
    const verified = verify(secrets, body, headers);
    if ('reason' in verified) return refusal(verified.status, verified.reason);
    const webhookId = headers['webhook-id'] ?? '';
    const read = readEvents(verified.body, webhookId, body);
    if ('reason' in read) return refusal(400, read.reason);
    // Kept per subscription, as the keys are: a fan-out's copies to two subscriptions share the
    // event's id. A batch's items are of one key, so of one subscription.
    const subscriptionId = read.events[0]?.subscriptionId;
    const seenId = storeKeyOf(namespace, subscriptionId, webhookId);
    if (await store.hasSeen(seenId)) {
      await options.onDuplicate?.(webhookId, subscriptionId);
      return ACCEPTED;
    }
    for (const event of read.events) {
      try {
        await take(event);
      } catch (error) {
        try {
          (options.onError ?? logNotTaken)(error, event);
        } catch {
          // A failing error handler does not change the answer.
        }
        // Not the application's error text: it may hold anything.
        return refusal(500, `event ${event.id} was not taken; send it again`);
      }
    }
    await store.remember(seenId);
    return ACCEPTED;
  };

  const readNodeBody = async (request: IncomingMessage & { readonly body?: unknown }): Promise<string | Uint8Array | undefined> => {
    if (typeof request.body === 'string' || request.body instanceof Uint8Array) return request.body;
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of request as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBodyBytes) return undefined;
      chunks.push(chunk);
    }
    const body = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return body;
  };

  return {
    handle,
    node: async (request, response) => {
      const body = await readNodeBody(request);
      const answer = body === undefined ? refusal(413, `the body is over ${maxBodyBytes} bytes`) : await handle({ headers: request.headers, body });
      response.writeHead(answer.status, answer.body === '' ? {} : { 'content-type': 'application/json' }).end(answer.body);
    },
    fetch: async (request) => {
      const answer = await handle({ headers: request.headers, body: new Uint8Array(await request.arrayBuffer()) });
      return new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.body === '' ? {} : { 'content-type': 'application/json' } });
    },
  };
}

/**
 * A webhook receiver on 127.0.0.1: reads each webhook, checks its Standard Webhooks signature
 * when it knows the secret, and answers (204 unless told otherwise). `npm run receiver` prints
 * what it gets; the integration tests script its answers.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import * as z from 'zod';
import { WebhookHeader } from '../lambda/core/webhook.js';

/** Webhook bodies are SQS messages: at most 1 MiB. A larger request is refused unread. */
const MAX_WEBHOOK_BYTES = 1_048_576;

export const SignatureCheck = { verified: 'verified', invalid: 'invalid', unchecked: 'unchecked' } as const;
export type SignatureCheck = (typeof SignatureCheck)[keyof typeof SignatureCheck];

/** One request as the receiver got it. */
export interface ReceivedWebhook {
  readonly receivedAt: Date;
  readonly method: string;
  readonly path: string;
  /** Lower-case names; repeated headers joined with commas. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly webhookId: string | undefined;
  readonly sequence: number | undefined;
  /** The `type` of the body, when it is the contract's JSON. */
  readonly type: string | undefined;
  /** The items of a batch body (docs/api.md#batches) with their numbers, in order; undefined for one event. */
  readonly items: readonly BatchItemSeen[] | undefined;
  readonly signature: SignatureCheck;
}

/** How to answer one webhook. */
export interface ReceiverReply {
  readonly statusCode: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface WebhookReceiverOptions {
  /** 0 lets the OS choose. */
  readonly port: number;
  /** The subscription's secret, or a lookup by request path; no secret leaves signatures unchecked. */
  readonly secret?: string | ((path: string) => string | undefined);
  /** The answer to a webhook, possibly late (a slow receiver); 204 when absent. */
  readonly respond?: (webhook: ReceivedWebhook) => ReceiverReply | Promise<ReceiverReply>;
  /**
   * Called with every webhook once answered; `wasSent` is false when the sender had hung up
   * first (it timed out), so the answer never reached it.
   */
  readonly onWebhook?: (webhook: ReceivedWebhook, reply: ReceiverReply, wasSent: boolean) => void;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly port: number;
  /** Closes the server and every connection, answered or not. */
  readonly stop: () => Promise<void>;
}

const ACCEPTED: ReceiverReply = { statusCode: 204 };

function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return flat;
}

/** Checks a signature with the Standard Webhooks library, as a receiver would. */
export function checkSignature(secret: string | undefined, body: string, headers: Readonly<Record<string, string>>): SignatureCheck {
  if (secret === undefined) return SignatureCheck.unchecked;
  try {
    new Webhook(secret).verify(body, headers);
    return SignatureCheck.verified;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return SignatureCheck.invalid;
    throw error;
  }
}

/** An item of a batch as the receiver read it. */
export interface BatchItemSeen {
  readonly id: string;
  readonly sequence: number;
  readonly type: string;
  readonly isRedelivery: boolean;
}

const batchBodySchema = z.object({
  events: z.array(z.object({ id: z.string(), sequence: z.number().int(), type: z.string(), redelivery: z.literal(true).optional() })),
});

/** The items of a batch body, or undefined when the body is not one. */
function readItems(body: string): BatchItemSeen[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const batch = batchBodySchema.safeParse(parsed);
  return batch.success ? batch.data.events.map((item) => ({ id: item.id, sequence: item.sequence, type: item.type, isRedelivery: item.redelivery === true })) : undefined;
}

function readType(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && 'type' in parsed && typeof parsed.type === 'string') return parsed.type;
  } catch {
    // Not the contract's body: shown without a type.
  }
  return undefined;
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > MAX_WEBHOOK_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const { secret } = options;
  const secretFor = typeof secret === 'function' ? secret : () => secret;
  const server = createServer((request, response) => {
    const handle = async (): Promise<{ webhook?: ReceivedWebhook; reply: ReceiverReply }> => {
      const body = await readBody(request);
      if (body === undefined) return { reply: { statusCode: 413 } };
      const path = new URL(request.url ?? '/', 'http://receiver').pathname;
      const headers = flattenHeaders(request.headers);
      const sequence = Number(headers[WebhookHeader.sequence]);
      const webhook: ReceivedWebhook = {
        receivedAt: new Date(),
        method: request.method ?? 'POST',
        path,
        headers,
        body,
        webhookId: headers[WebhookHeader.id],
        sequence: Number.isInteger(sequence) ? sequence : undefined,
        type: readType(body),
        items: readItems(body),
        signature: checkSignature(secretFor(path), body, headers),
      };
      const reply = options.respond === undefined ? ACCEPTED : await options.respond(webhook);
      return { webhook, reply };
    };
    handle().then(
      ({ webhook, reply }) => {
        const wasSent = !response.destroyed;
        if (wasSent) response.writeHead(reply.statusCode, reply.headers).end();
        if (webhook !== undefined) options.onWebhook?.(webhook, reply, wasSent);
      },
      (error: unknown) => {
        response.destroy(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
  server.listen(options.port, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

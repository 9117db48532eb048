/**
 * A scripted webhook receiver for the integration tests, on the receiver that ships with the
 * project: it records every attempt when it arrives (headers, body, signature check) and the
 * answer once given, and answers as the test's script says.
 */
import { expect } from 'vitest';
import { startWebhookReceiver, SignatureCheck, type ReceivedWebhook, type ReceiverReply } from '../../../local/webhook-receiver.js';

/** One attempt as the receiver saw it. */
export interface Attempt extends ReceivedWebhook {
  /** The answer the sender got; undefined while pending, or when the sender hung up first. */
  readonly statusCode: number | undefined;
}

export interface RecordingReceiver {
  readonly url: string;
  /** Every attempt so far, in arrival order. */
  readonly attempts: () => Attempt[];
  /** The attempts whose 2xx reached the sender: deliveries, in arrival order. */
  readonly delivered: () => Attempt[];
  /** The deliveries to one subscription (the path `/<subscription_id>`). */
  readonly deliveredTo: (subscriptionId: string) => Attempt[];
  readonly attemptsOf: (webhookId: string) => Attempt[];
  /** Registers the secret of a subscription, so that its signatures are checked. */
  readonly setSecret: (subscriptionId: string, secret: string) => void;
  readonly endpointFor: (subscriptionId: string) => string;
  readonly stop: () => Promise<void>;
}

/** Decides the answer to one attempt; 204 when it returns undefined. */
export type Respond = (webhook: ReceivedWebhook) => ReceiverReply | undefined | Promise<ReceiverReply | undefined>;

/** `respond` decides the answer to each attempt; 204 when it returns undefined. */
export async function startRecordingReceiver(respond: Respond = () => undefined): Promise<RecordingReceiver> {
  const attempts: { webhook: ReceivedWebhook; statusCode: number | undefined }[] = [];
  const secrets = new Map<string, string>();
  const receiver = await startWebhookReceiver({
    port: 0,
    secret: (path) => secrets.get(decodeURIComponent(path.slice(1))),
    respond: async (webhook) => {
      const attempt = { webhook, statusCode: undefined as number | undefined };
      attempts.push(attempt);
      const reply = (await respond(webhook)) ?? { statusCode: 204 };
      return reply;
    },
    onWebhook: (webhook, reply, wasSent) => {
      const attempt = attempts.find((entry) => entry.webhook === webhook);
      if (attempt !== undefined && wasSent) attempt.statusCode = reply.statusCode;
    },
  });
  const all = (): Attempt[] => attempts.map(({ webhook, statusCode }) => ({ ...webhook, statusCode }));
  const isDelivered = (attempt: Attempt): boolean => attempt.statusCode !== undefined && attempt.statusCode >= 200 && attempt.statusCode <= 299;
  return {
    url: receiver.url,
    attempts: all,
    delivered: () => all().filter(isDelivered),
    deliveredTo: (subscriptionId) => all().filter((attempt) => isDelivered(attempt) && attempt.path === `/${encodeURIComponent(subscriptionId)}`),
    attemptsOf: (webhookId) => all().filter((attempt) => attempt.webhookId === webhookId),
    setSecret: (subscriptionId, secret) => secrets.set(subscriptionId, secret),
    endpointFor: (subscriptionId) => `${receiver.url}/${encodeURIComponent(subscriptionId)}`,
    stop: receiver.stop,
  };
}

export { SignatureCheck };

/** The (webhook id, sequence) of each delivery to a subscription, in arrival order, every signature checked. */
export function verifiedDeliveries(receiver: RecordingReceiver, subscriptionId: string): [string | undefined, number | undefined][] {
  return receiver.deliveredTo(subscriptionId).map((attempt) => {
    expect(attempt.signature).toBe(SignatureCheck.verified);
    return [attempt.webhookId, attempt.sequence];
  });
}

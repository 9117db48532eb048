/**
 * The settings of `npm run receiver`, validated with a schema before it starts, and the failing
 * mode they describe: a receiver that refuses a share of the webhooks, so that a new user sees
 * retries, dead letters and the lag view within a minute. The receiver is a development tool
 * outside the product's configuration (`lambda/config.ts`): its variables are its own.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { isValidSecret } from '../lambda/core/secret.js';
import { EXAMPLE_RECEIVER_PORT } from './banner.js';
import type { ReceiverReply } from './webhook-receiver.js';

/** The status a failing answer has unless RECEIVER_STATUS says otherwise. */
export const DEFAULT_FAILURE_STATUS = 500;

/** The longest RECEIVER_DELAY_MS: a minute, past every DELIVERY_TIMEOUT_MS the stack accepts. */
export const MAX_RECEIVER_DELAY_MS = 60_000;

/** What `npm run receiver` does. */
export interface ReceiverSettings {
  readonly port: number;
  readonly secret: string | undefined;
  /** The share of webhooks refused, 0 to 1, drawn at random per webhook. */
  readonly failRate: number;
  /** The status of a refusal. */
  readonly failureStatus: number;
  /** How long every answer waits. */
  readonly delayMs: number;
}

const integer = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be an integer between ${min} and ${max}`).max(max, `must be an integer between ${min} and ${max}`));

const receiverEnvironmentSchema = z.object({
  RECEIVER_PORT: integer(0, 65_535).default(EXAMPLE_RECEIVER_PORT),
  WEBHOOK_SECRET: z.string().trim().refine(isValidSecret, 'must be "whsec_" followed by base64 of 24 to 64 bytes').optional(),
  RECEIVER_FAIL_RATE: z
    .string()
    .trim()
    .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a number from 0 to 1 (the share of webhooks refused)')
    .transform(Number)
    .default(0),
  RECEIVER_STATUS: integer(100, 599).default(DEFAULT_FAILURE_STATUS),
  RECEIVER_DELAY_MS: integer(0, MAX_RECEIVER_DELAY_MS).default(0),
});

/**
 * Reads the receiver's variables; an empty one counts as unset. Each refused variable is one
 * problem naming it and the value given.
 */
export function readReceiverSettings(env: Readonly<Record<string, string | undefined>>): ReceiverSettings | { readonly problems: readonly string[] } {
  const given = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== ''));
  const parsed = receiverEnvironmentSchema.safeParse(given);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? 'environment');
        // The secret is not echoed back.
        const value = variable === 'WEBHOOK_SECRET' ? undefined : given[variable];
        return `${variable}: ${issue.message}${value === undefined ? '' : ` (got "${value}")`}`;
      }),
    };
  }
  const v = parsed.data;
  return { port: v.RECEIVER_PORT, secret: v.WEBHOOK_SECRET, failRate: v.RECEIVER_FAIL_RATE, failureStatus: v.RECEIVER_STATUS, delayMs: v.RECEIVER_DELAY_MS };
}

/**
 * The answer to each webhook: after `delayMs`, the failure status with probability `failRate`,
 * else 204. `random` is Math.random unless a test gives its own; a rate of 0 or 1 draws nothing
 * that matters, so tests use those to be deterministic.
 */
export function createReceiverResponder(
  settings: Pick<ReceiverSettings, 'failRate' | 'failureStatus' | 'delayMs'>,
  random: () => number = Math.random,
): () => Promise<ReceiverReply> {
  return async () => {
    if (settings.delayMs > 0) await sleep(settings.delayMs);
    return random() < settings.failRate ? { statusCode: settings.failureStatus } : { statusCode: 204 };
  };
}

/** One line of what the receiver does, for its start-up message. */
export function describeReceiverMode(settings: ReceiverSettings): string {
  const failing =
    settings.failRate === 0 ? 'answers 204 to every webhook' : `refuses ${Math.round(settings.failRate * 100)}% of webhooks with ${settings.failureStatus} (RECEIVER_FAIL_RATE, RECEIVER_STATUS)`;
  return `${failing}${settings.delayMs === 0 ? '' : `, after ${settings.delayMs} ms (RECEIVER_DELAY_MS)`}`;
}

/**
 * `npm run receiver`: a webhook receiver for trying the local stack. Listens on 127.0.0.1 at
 * RECEIVER_PORT (default 4000), verifies signatures with WEBHOOK_SECRET when it is set, prints
 * each webhook with its sequence number, id, type and signature check, and answers 204.
 */
import { isValidSecret } from '../lambda/core/secret.js';
import { EXAMPLE_RECEIVER_PORT } from './banner.js';
import { stopOnSignals } from './shutdown.js';
import { formatClock } from './terminal-logger.js';
import { SignatureCheck, startWebhookReceiver, type ReceivedWebhook, type ReceiverReply, type WebhookReceiver } from './webhook-receiver.js';

/** Exit code for a refused setting (sysexits' EX_CONFIG), as `npm start` uses. */
const EXIT_CONFIG = 78;

interface ReceiverSettings {
  readonly port: number;
  readonly secret: string | undefined;
}

/** Reads the receiver's two variables; the message names the one refused. */
function readReceiverSettings(env: Readonly<Record<string, string | undefined>>): ReceiverSettings | { readonly problem: string } {
  const rawPort = env.RECEIVER_PORT?.trim() ?? '';
  const port = rawPort === '' ? EXAMPLE_RECEIVER_PORT : Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) return { problem: `RECEIVER_PORT: must be an integer between 0 and 65535 (got "${rawPort}")` };
  const secret = env.WEBHOOK_SECRET?.trim() || undefined;
  if (secret !== undefined && !isValidSecret(secret)) return { problem: 'WEBHOOK_SECRET: must be "whsec_" followed by base64 of 24 to 64 bytes' };
  return { port, secret };
}

const SIGNATURE_TEXT: Record<SignatureCheck, string> = {
  [SignatureCheck.verified]: 'signature verified',
  [SignatureCheck.invalid]: 'signature INVALID',
  [SignatureCheck.unchecked]: 'signature not checked (set WEBHOOK_SECRET)',
};

/** One printed line per webhook. */
function formatWebhookLine(webhook: ReceivedWebhook, reply: ReceiverReply): string {
  return [
    formatClock(webhook.receivedAt),
    `webhook-sequence=${webhook.sequence ?? '-'}`,
    `webhook-id=${webhook.webhookId ?? '-'}`,
    `type=${webhook.type ?? '-'}`,
    SIGNATURE_TEXT[webhook.signature],
    `-> ${reply.statusCode}`,
  ].join('  ');
}

async function main(): Promise<void> {
  const settings = readReceiverSettings(process.env);
  if ('problem' in settings) {
    process.stderr.write(`Invalid configuration:\n  - ${settings.problem}\n`);
    process.exit(EXIT_CONFIG);
  }
  let receiver: WebhookReceiver;
  try {
    receiver = await startWebhookReceiver({
      port: settings.port,
      ...(settings.secret === undefined ? {} : { secret: settings.secret }),
      onWebhook: (webhook, reply) => process.stdout.write(`${formatWebhookLine(webhook, reply)}\n`),
    });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? `port ${settings.port} is in use; set RECEIVER_PORT to another` : String(error);
    process.stderr.write(`The receiver could not start: ${reason}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `webhook receiver listening on ${receiver.url} (any path); ${settings.secret === undefined ? 'no WEBHOOK_SECRET: signatures are not checked' : 'verifying signatures with WEBHOOK_SECRET'}\n`,
  );
  stopOnSignals(receiver.stop, {
    stopping: () => undefined,
    stopped: () => process.stdout.write('receiver stopped\n'),
    failed: (error) => process.stderr.write(`receiver failed to stop: ${String(error)}\n`),
    forced: () => undefined,
  });
}

await main();

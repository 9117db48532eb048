/**
 * `npm run receiver`: a webhook receiver for trying the local stack. Listens on 127.0.0.1 at
 * RECEIVER_PORT (default 4000), verifies signatures with WEBHOOK_SECRET when it is set, prints
 * each webhook with its sequence number, id, type and signature check, and answers 204, or, in
 * its failing mode (RECEIVER_FAIL_RATE, RECEIVER_STATUS, RECEIVER_DELAY_MS), refuses some of them
 * so that retries and dead letters can be watched.
 */
import { createReceiverResponder, describeReceiverMode, readReceiverSettings } from './receiver-settings.js';
import { stopOnSignals } from './shutdown.js';
import { formatClock } from './terminal-logger.js';
import { SignatureCheck, startWebhookReceiver, type ReceivedWebhook, type ReceiverReply, type WebhookReceiver } from './webhook-receiver.js';

/** Exit code for a refused setting (sysexits' EX_CONFIG), as `npm start` uses. */
const EXIT_CONFIG = 78;

const SIGNATURE_TEXT: Record<SignatureCheck, string> = {
  [SignatureCheck.verified]: 'signature verified',
  [SignatureCheck.invalid]: 'signature INVALID',
  [SignatureCheck.unchecked]: 'signature not checked (set WEBHOOK_SECRET)',
};

/** One printed line per webhook. */
function formatWebhookLine(webhook: ReceivedWebhook, reply: ReceiverReply): string {
  if (webhook.items !== undefined) {
    // A batch (CONTRACT §5): each item's number and id, in order.
    return [
      formatClock(webhook.receivedAt),
      `batch of ${webhook.items.length}: ${webhook.items.map((item) => `${item.sequence}=${item.id}${item.isRedelivery ? ' (redelivery)' : ''}`).join(', ')}`,
      `webhook-id=${webhook.webhookId ?? '-'}`,
      SIGNATURE_TEXT[webhook.signature],
      `-> ${reply.statusCode}`,
    ].join('  ');
  }
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
  // The receiver is a development tool with variables of its own, read once here as before.
  const settings = readReceiverSettings(process.env);
  if ('problems' in settings) {
    process.stderr.write(`Invalid configuration:\n${settings.problems.map((problem) => `  - ${problem}`).join('\n')}\n`);
    process.exit(EXIT_CONFIG);
  }
  let receiver: WebhookReceiver;
  try {
    receiver = await startWebhookReceiver({
      port: settings.port,
      ...(settings.secret === undefined ? {} : { secret: settings.secret }),
      respond: createReceiverResponder(settings),
      onWebhook: (webhook, reply) => process.stdout.write(`${formatWebhookLine(webhook, reply)}\n`),
    });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? `port ${settings.port} is in use: set RECEIVER_PORT=<another>` : String(error);
    process.stderr.write(`The receiver could not start: ${reason}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `webhook receiver listening on ${receiver.url} (any path); ${settings.secret === undefined ? 'no WEBHOOK_SECRET: signatures are not checked' : 'verifying signatures with WEBHOOK_SECRET'}; ${describeReceiverMode(settings)}\n`,
  );
  stopOnSignals(receiver.stop, {
    stopping: () => undefined,
    stopped: () => process.stdout.write('receiver stopped\n'),
    failed: (error) => process.stderr.write(`receiver failed to stop: ${String(error)}\n`),
    forced: () => undefined,
  });
}

await main();

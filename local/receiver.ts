/**
 * `npm run receiver`: a webhook receiver for trying the local stack. Listens on 127.0.0.1 at
 * RECEIVER_PORT (default 4000), prints each webhook with its sequence number, id, type and
 * signature check, and answers 204, or, in its failing mode (RECEIVER_FAIL_RATE, RECEIVER_STATUS,
 * RECEIVER_DELAY_MS), refuses some of them so that retries and dead letters can be watched.
 *
 * With WEBHOOK_SECRET set, every webhook it does not refuse goes through the receiver kit
 * (`@ordered-webhooks/receiver`), as a user's receiver would: verified, duplicates dropped, and
 * each event judged in its key's order (in order, duplicate, gap, redelivery), which it prints.
 */
import { createMemoryStore, createReceiver, Verdict, type OrderReport } from '../receiver/src/index.js';
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

/** What the kit made of an event's place in its key, as printed. */
export function describeReport(report: OrderReport): string {
  const numbers = (list: readonly number[]): string => list.join(', ');
  switch (report.verdict) {
    case Verdict.inOrder:
      return 'in order';
    case Verdict.duplicate:
      return 'duplicate';
    case Verdict.redelivery:
      return 'redelivery: fills its gap';
    case Verdict.gap:
      return [
        'GAP',
        ...(report.missing.length === 0 ? [] : [`missing ${numbers(report.missing)} (dead-lettered: see npx ordered-webhooks dead-letters)`]),
        ...(report.lost.length === 0 ? [] : [`lost ${numbers(report.lost)} (delivered, not kept here)`]),
      ].join(' ');
  }
}

/** One printed line per webhook, with the kit's report of each event when it judged them. */
export function formatWebhookLine(webhook: ReceivedWebhook, reply: ReceiverReply, reports: readonly OrderReport[] = []): string {
  const judged = reports.length === 0 ? [] : [reports.map(describeReport).join('; ')];
  if (webhook.items !== undefined) {
    // A batch (docs/api.md#batches): each item's number and id, in order.
    return [
      formatClock(webhook.receivedAt),
      `batch of ${webhook.items.length}: ${webhook.items.map((item) => `${item.sequence}=${item.id}${item.isRedelivery ? ' (redelivery)' : ''}`).join(', ')}`,
      `webhook-id=${webhook.webhookId ?? '-'}`,
      SIGNATURE_TEXT[webhook.signature],
      ...judged,
      `-> ${reply.statusCode}`,
    ].join('  ');
  }
  return [
    formatClock(webhook.receivedAt),
    `webhook-sequence=${webhook.sequence ?? '-'}`,
    `webhook-id=${webhook.webhookId ?? '-'}`,
    `type=${webhook.type ?? '-'}`,
    SIGNATURE_TEXT[webhook.signature],
    ...judged,
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
  const failing = createReceiverResponder(settings);
  const { secret } = settings;
  // One store for every request: the kit keeps each subscription's keys and webhook ids apart by
  // the body's subscription_id, so the walkthrough's subscriptions share this receiver, a fan-out's
  // copies (one webhook-id) included.
  const store = createMemoryStore();
  // The kit's reports of each request's events, until its line is printed: by request, not by
  // webhook-id, which a fan-out's copies arriving together share.
  const reports = new WeakMap<ReceivedWebhook, OrderReport[]>();
  const respond = async (webhook: ReceivedWebhook): Promise<ReceiverReply> => {
    const reply = await failing();
    if (secret === undefined || reply.statusCode < 200 || reply.statusCode > 299) return reply;
    const judged: OrderReport[] = [];
    reports.set(webhook, judged);
    const kit = createReceiver({
      secret,
      store,
      onEvent: (_event, report) => void judged.push(report),
      onDuplicate: () => void judged.push({ verdict: Verdict.duplicate, missing: [], lost: [] }),
    });
    const answer = await kit.handle({ headers: webhook.headers, body: webhook.body });
    return { statusCode: answer.status };
  };
  let receiver: WebhookReceiver;
  try {
    receiver = await startWebhookReceiver({
      port: settings.port,
      ...(secret === undefined ? {} : { secret }),
      respond,
      onWebhook: (webhook, reply) => process.stdout.write(`${formatWebhookLine(webhook, reply, reports.get(webhook) ?? [])}\n`),
    });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? `port ${settings.port} is in use: set RECEIVER_PORT=<another>` : String(error);
    process.stderr.write(`The receiver could not start: ${reason}\n`);
    process.exit(1);
  }
  process.stdout.write(
    `webhook receiver listening on ${receiver.url} (any path); ${secret === undefined ? 'no WEBHOOK_SECRET: signatures are not checked' : 'verifying signatures with WEBHOOK_SECRET and checking each key\'s order with @ordered-webhooks/receiver'}; ${describeReceiverMode(settings)}\n`,
  );
  stopOnSignals(receiver.stop, {
    stopping: () => undefined,
    stopped: () => process.stdout.write('receiver stopped\n'),
    failed: (error) => process.stderr.write(`receiver failed to stop: ${String(error)}\n`),
    forced: () => undefined,
  });
}

await main();

/**
 * What `npm start` prints once the stack is ready: where it listens, where its state lives, and
 * commands to copy and paste against the receiver that ships with the project (`npm run receiver`).
 */
import type { Config } from '../lambda/config.js';

/**
 * A fixed example secret (`whsec_` + base64 of 24 bytes), so that the example subscription and
 * `WEBHOOK_SECRET=… npm run receiver` agree and the receiver can verify signatures. An example
 * only: real subscriptions get a generated secret when they give none.
 */
export const EXAMPLE_SECRET = 'whsec_bG9jYWwtZXhhbXBsZS1zZWNyZXQtMjQtYnl0ZQ==';

/** The receiver's default port, as the example subscription points at it. */
export const EXAMPLE_RECEIVER_PORT = 4000;

/** The start-up banner. */
export function formatBanner(url: string, config: Config): string {
  const state = config.dataDir === undefined ? 'in memory (set DATA_DIR to keep it across restarts)' : `kept in ${config.dataDir}`;
  const partitioning = config.partitionCount === undefined ? 'one message group per key' : `${config.partitionCount} partitions`;
  const subscription = JSON.stringify({ tenant_id: 'tenant-1', url: `http://127.0.0.1:${EXAMPLE_RECEIVER_PORT}/webhooks`, secret: EXAMPLE_SECRET });
  const event = JSON.stringify({ event_id: 'evt-1', tenant_id: 'tenant-1', subscription_id: 'sub-1', type: 'order.created', payload: { order_id: 'o-1' } });
  return [
    '',
    `ordered-webhooks local stack listening on ${url}`,
    `  state: ${state}`,
    `  delivery: ${config.maxDeliveryAttempts} attempts, backoff ${config.retryBaseSeconds}–${config.retryMaxSeconds} s, ${config.consumerConcurrency} concurrent consumers, ${partitioning}`,
    '',
    'Try it: start a receiver in another terminal',
    `  WEBHOOK_SECRET=${EXAMPLE_SECRET} npm run receiver`,
    'then subscribe it and send an event:',
    `  curl -sS -X PUT ${url}/v1/subscriptions/sub-1 -H 'content-type: application/json' -d '${subscription}'`,
    `  curl -sS -X POST ${url}/v1/events -H 'content-type: application/json' -d '${event}'`,
    '',
    'Ctrl-C stops it cleanly.',
    '',
  ].join('\n');
}

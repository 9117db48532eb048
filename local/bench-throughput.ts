/**
 * Throughput of the local stack: events per second delivered, end to end (HTTP API → ingest →
 * SQS FIFO → poller → consumer → receiver), with 20 ordering keys and a receiver that answers 204
 * at once. Run: `npx tsx local/bench-throughput.ts [events per key, default 100]`; the settings of
 * CONTRACT §4 apply (e.g. CONSUMER_CONCURRENCY=8).
 */
import { Deployment, LogLevel, loadProcessConfig } from '../lambda/config.js';
import { startLocalStack } from './stack.js';
import { startWebhookReceiver } from './webhook-receiver.js';

const KEYS = 20;
/** Events per request: the contract's maximum batch. */
const EVENTS_PER_REQUEST = 100;
/** Producers sending at once, each for its own keys, each waiting for 202 before its next request. */
const PRODUCERS = 4;

const eventsPerKey = Number(process.argv[2] ?? 100);
if (!Number.isInteger(eventsPerKey) || eventsPerKey < 1) throw new Error('events per key must be a positive integer');
const total = KEYS * eventsPerKey;

const config = { ...loadProcessConfig(Deployment.local), logLevel: LogLevel.WARN };
let delivered = 0;
let lastDeliveredAt = 0;
let isDone: () => void = () => undefined;
const allDelivered = new Promise<void>((resolve) => (isDone = resolve));
const receiver = await startWebhookReceiver({
  port: 0,
  onWebhook: () => {
    delivered += 1;
    lastDeliveredAt = performance.now();
    if (delivered === total) isDone();
  },
});
const stack = await startLocalStack({ config, port: 0 });

const post = async (path: string, method: string, body: unknown): Promise<void> => {
  const response = await fetch(`${stack.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
};

const run = `bench-${Date.now()}`;
const keys = Array.from({ length: KEYS }, (_, k) => `${run}-key-${k}`);
for (const key of keys) await post(`/v1/subscriptions/${key}`, 'PUT', { tenant_id: 'bench', url: `${receiver.url}/${key}` });

/** A producer's requests: its keys' events round-robin, so each request carries all its keys in their order. */
function requestsOf(producer: number): unknown[][] {
  const own = keys.filter((_, k) => k % PRODUCERS === producer);
  const events = Array.from({ length: own.length * eventsPerKey }, (_, n) => {
    const key = own[n % own.length] ?? '';
    return { event_id: `${key}-${Math.floor(n / own.length)}`, tenant_id: 'bench', subscription_id: key, type: 'bench.event', payload: { n } };
  });
  const requests: unknown[][] = [];
  for (let start = 0; start < events.length; start += EVENTS_PER_REQUEST) requests.push(events.slice(start, start + EVENTS_PER_REQUEST));
  return requests;
}

const startedAt = performance.now();
await Promise.all(
  Array.from({ length: PRODUCERS }, async (_, producer) => {
    for (const request of requestsOf(producer)) await post('/v1/events', 'POST', { events: request });
  }),
);
const acceptedAt = performance.now();
await allDelivered;

const seconds = (lastDeliveredAt - startedAt) / 1000;
process.stdout.write(
  [
    `keys: ${KEYS}, events: ${total}, consumer concurrency: ${config.consumerConcurrency}`,
    `accepted in ${((acceptedAt - startedAt) / 1000).toFixed(2)} s (${Math.round(total / ((acceptedAt - startedAt) / 1000))} events/s through the API)`,
    `delivered in ${seconds.toFixed(2)} s: ${Math.round(total / seconds)} events/s end to end`,
    '',
  ].join('\n'),
);
await stack.stop();
await receiver.stop();

/**
 * What `npm start` prints once the stack is ready: where the API and the emulators listen (with
 * an AWS CLI command to look at the local state), where its state lives, what it does with an
 * event whose attempts run out, and the README's walkthrough commands to copy and paste against
 * the receiver that ships with the project (`npm run receiver`). The README shows the same lines,
 * and a test holds them equal: one example in both places.
 */
import type { Config } from '../lambda/config.js';
import { OnExhausted } from '../lambda/core/retry-policy.js';
import { NOTICE_TOPIC } from '../lambda/resources.js';
import { CONSOLE_PATH } from '../console/path.js';
import { LOCAL_REGION } from './emulators.js';

/**
 * A fixed example secret (`whsec_` + base64 of 24 bytes), so that the example subscription and
 * `WEBHOOK_SECRET=… npm run receiver` agree and the receiver can verify signatures. An example
 * only: real subscriptions get a generated secret when they give none.
 */
export const EXAMPLE_SECRET = 'whsec_yxD5qt6cRIYguG/+FYJyhv8n/JGAFqS5';

/** The receiver's default port, as the example subscription points at it. */
export const EXAMPLE_RECEIVER_PORT = 4000;

/** The emulators accept any credentials; the AWS CLI needs some to sign with. */
export const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** Where the embedded emulators listen, as the stack reports them. */
export interface EmulatorEndpoints {
  readonly sqs: string;
  readonly dynamo: string;
}

/** The AWS CLI command that lists the local queues at `sqsEndpoint` (dynamodb list-tables works alike). */
export function formatAwsCliExample(sqsEndpoint: string): string {
  return `AWS_ACCESS_KEY_ID=${EMULATOR_CREDENTIALS.accessKeyId} AWS_SECRET_ACCESS_KEY=${EMULATOR_CREDENTIALS.secretAccessKey} aws --region ${LOCAL_REGION} --endpoint-url ${sqsEndpoint} sqs list-queues`;
}

/** The walkthrough: start the receiver, subscribe it, send an event, look at the lag view. */
export function formatWalkthrough(url: string): readonly [receiver: string, subscribe: string, send: string] {
  const subscription = JSON.stringify({ tenant_id: 'acme', url: `http://127.0.0.1:${EXAMPLE_RECEIVER_PORT}/webhooks`, secret: EXAMPLE_SECRET });
  const event = JSON.stringify({ event_id: 'evt_a1', tenant_id: 'acme', subscription_id: 'sub_alice', type: 'order.created', payload: { order: 1 } });
  return [
    `WEBHOOK_SECRET=${EXAMPLE_SECRET} npm run receiver`,
    `curl -s -X PUT ${url}/v1/subscriptions/sub_alice -H 'content-type: application/json' -d '${subscription}'`,
    `curl -s -X POST ${url}/v1/events -H 'content-type: application/json' -d '${event}'`,
  ];
}

/** How to watch retries and dead letters in a minute: fast retries, a receiver that refuses. */
export const FAILING_MODE_EXAMPLE: readonly string[] = [
  'RETRY_BASE_SECONDS=0 RETRY_MAX_SECONDS=2 MAX_DELIVERY_ATTEMPTS=2 npm start',
  `RECEIVER_FAIL_RATE=1 RECEIVER_STATUS=503 WEBHOOK_SECRET=${EXAMPLE_SECRET} npm run receiver`,
];

/** What happens to an event whose attempts run out, with the variables that say so. */
export function formatMode(config: Config): string {
  const exhausted =
    config.onExhausted === OnExhausted.stall
      ? `after MAX_DELIVERY_ATTEMPTS=${config.maxDeliveryAttempts} failed attempts an event is retried every ${config.retryMaxSeconds} s and its key waits`
      : `after MAX_DELIVERY_ATTEMPTS=${config.maxDeliveryAttempts} failed attempts an event is dead-lettered and its key moves on${
          config.autoPauseAfterSeconds === undefined
            ? ''
            : `, unless its key has failed for AUTO_PAUSE_AFTER_SECONDS=${config.autoPauseAfterSeconds}: then its subscription is paused (a notice goes to the SNS topic ${NOTICE_TOPIC.localName})`
        }`;
  return `ON_EXHAUSTED=${config.onExhausted}: ${exhausted}; retries back off ${config.retryBaseSeconds}–${config.retryMaxSeconds} s (RETRY_BASE_SECONDS, RETRY_MAX_SECONDS)`;
}

/** The start-up banner. */
export function formatBanner(url: string, endpoints: EmulatorEndpoints, config: Config): string {
  const [receiver, subscribe, send] = formatWalkthrough(url);
  const state = config.dataDir === undefined ? 'in memory (set DATA_DIR to keep it across restarts)' : `kept in ${config.dataDir}`;
  const partitioning = config.partitionCount === undefined ? 'one message group per key' : `${config.partitionCount} partitions`;
  return [
    '',
    `ordered-webhooks local stack listening on ${url}`,
    `  API:       ${url}`,
    `  console:   ${url}${CONSOLE_PATH}/   (lag, dead letters, subscriptions, in a browser)`,
    `  SQS:       ${endpoints.sqs}   (fauxqs; S3 for large payloads and SNS for notices too)`,
    `  DynamoDB:  ${endpoints.dynamo}   (dynalite)`,
    `  look at them with the AWS CLI (region ${LOCAL_REGION}, any credentials):`,
    `    ${formatAwsCliExample(endpoints.sqs)}`,
    `  state: ${state}`,
    `  mode: ${formatMode(config)}`,
    `  delivery: ${config.consumerConcurrency} concurrent consumers, ${partitioning}`,
    '',
    'Try it (the README walkthrough): start a receiver in another terminal',
    `  ${receiver}`,
    'then subscribe it and send an event:',
    `  ${subscribe}`,
    `  ${send}`,
    `and watch the lag view: npx ordered-webhooks lag --url ${url}`,
    'To see retries and dead letters, start the stack and a refusing receiver like this:',
    ...FAILING_MODE_EXAMPLE.map((line) => `  ${line}`),
    '',
    'Ctrl-C stops it cleanly.',
    '',
  ].join('\n');
}

/**
 * The message for a start-up failure that the user can fix, or undefined: the HTTP port is
 * taken (the emulators take ports the OS chooses, so it is the API's).
 */
export function describeStartFailure(error: unknown, config: Config): string | undefined {
  if (!(error instanceof Error) || !('code' in error) || error.code !== 'EADDRINUSE') return undefined;
  return `port ${config.port} is in use: set PORT=<another> (e.g. PORT=${config.port === 65_535 ? 3001 : config.port + 1} npm start)`;
}

/**
 * End to end as a user runs it: `npm start` and `npm run receiver` as child processes, driven only
 * over HTTP, stopped with SIGTERM.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, createSqsClient } from '../../lambda/adapters/aws-clients.js';
import { EMULATOR_CREDENTIALS, EXAMPLE_SECRET } from '../../local/banner.js';
import { LOCAL_REGION } from '../../local/emulators.js';
import { call, makeEvent, postEvents, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { findFreePort, spawnNpm, type NpmProcess } from './support/process.js';

/** `webhook-sequence=1  webhook-id=evt  type=t  signature verified  -> 204` as the receiver prints it. */
const WEBHOOK_LINE = /webhook-sequence=(\d+) {2}webhook-id=(\S+) {2}type=\S+ {2}(signature \S+)(?: {2}(.+?))? {2}-> (\d+)/g;

function printedWebhooks(output: string): { sequence: number; id: string; signature: string; report: string; status: number }[] {
  return [...output.matchAll(WEBHOOK_LINE)].map((match) => ({
    sequence: Number(match[1]),
    id: match[2] ?? '',
    signature: match[3] ?? '',
    report: match[4] ?? '',
    status: Number(match[5]),
  }));
}

describe('npm start', { timeout: 90_000 }, () => {
  const started: NpmProcess[] = [];
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ordered-webhooks-e2e-'));
  });

  afterAll(async () => {
    for (const process of started) process.killAll();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves the API, delivers to `npm run receiver` in order, and exits 0 on SIGTERM', async () => {
    const [port, receiverPort] = [await findFreePort(), await findFreePort()];
    const url = `http://127.0.0.1:${port}`;
    const stack = spawnNpm(['start'], { PORT: String(port), RETRY_BASE_SECONDS: '0', LOG_LEVEL: 'INFO', DATA_DIR: dataDir });
    const receiver = spawnNpm(['run', 'receiver'], { RECEIVER_PORT: String(receiverPort), WEBHOOK_SECRET: EXAMPLE_SECRET });
    started.push(stack, receiver);

    await waitFor('GET /health answering 200', async () => (await call(url, 'GET', '/health').catch(() => undefined))?.status === 200, 30_000);
    // The banner is written once the stack has started, just after the API listens: under load
    // the first answer can come before it.
    await waitFor('the banner printed', () => stack.stdout().includes('curl -s -X POST'), 10_000);
    expect(stack.stdout()).toContain(`listening on ${url}`);
    expect(stack.stdout()).toContain(`state: kept in ${dataDir}`);
    expect(stack.stdout()).toContain(`curl -s -X POST ${url}/v1/events`);
    expect(stack.stdout()).toContain('mode: ON_EXHAUSTED=dead_letter: after MAX_DELIVERY_ATTEMPTS=5 failed attempts');
    // The emulators' endpoints, as printed, reach the local state with the printed region and credentials.
    const sqsEndpoint = /^ {2}SQS: +(http:\/\/127\.0\.0\.1:\d+)/m.exec(stack.stdout())?.[1];
    const dynamoEndpoint = /^ {2}DynamoDB: +(http:\/\/127\.0\.0\.1:\d+)/m.exec(stack.stdout())?.[1];
    if (sqsEndpoint === undefined || dynamoEndpoint === undefined) throw new Error(`no emulator endpoints in the banner:\n${stack.stdout()}`);
    expect(stack.stdout()).toContain(`aws --region ${LOCAL_REGION} --endpoint-url ${sqsEndpoint} sqs list-queues`);
    const sqs = createSqsClient({ endpoint: sqsEndpoint, region: LOCAL_REGION, credentials: EMULATOR_CREDENTIALS });
    const dynamo = createDocumentClient({ endpoint: dynamoEndpoint, region: LOCAL_REGION, credentials: EMULATOR_CREDENTIALS });
    expect((await sqs.send(new ListQueuesCommand({}))).QueueUrls?.length).toBeGreaterThanOrEqual(2);
    expect((await dynamo.send(new ListTablesCommand({}))).TableNames?.length).toBeGreaterThanOrEqual(1);
    sqs.destroy();
    dynamo.destroy();
    await waitFor('the receiver listening', () => receiver.stdout().includes(`listening on http://127.0.0.1:${receiverPort}`), 30_000);

    const keys = [uniquePrefix('e2e-a'), uniquePrefix('e2e-b')];
    for (const key of keys) {
      const answer = await call(url, 'PUT', `/v1/subscriptions/${key}`, { tenant_id: 'tenant-it', url: `http://127.0.0.1:${receiverPort}/${key}`, secret: EXAMPLE_SECRET });
      expect(answer.status).toBe(201);
    }
    // One request, the two keys' events interleaved.
    const events = [1, 2, 3].flatMap((n) => keys.map((key) => makeEvent(key, `${key}-evt-${n}`)));
    expect((await postEvents(url, events)).map((result) => result.status)).toEqual(events.map(() => 'accepted'));

    await waitFor('six webhooks printed by the receiver', () => printedWebhooks(receiver.stdout()).length >= events.length, 30_000);
    const printed = printedWebhooks(receiver.stdout());
    for (const key of keys) {
      const ofKey = printed.filter((webhook) => webhook.id.startsWith(key));
      expect(ofKey.map((webhook) => [webhook.id, webhook.sequence])).toEqual([1, 2, 3].map((n) => [`${key}-evt-${n}`, n]));
    }
    // Each one verified and judged by the receiver kit, in its key's order.
    expect(printed.every((webhook) => webhook.signature === 'signature verified' && webhook.report === 'in order' && webhook.status === 204)).toBe(true);
    expect(stack.stdout()).toMatch(/INFO +ingest +events answered .*statusCode=202/);

    // A second stack on the same DATA_DIR is refused while the first runs.
    const intruder = spawnNpm(['start'], { PORT: String(await findFreePort()), DATA_DIR: dataDir });
    started.push(intruder);
    expect(await intruder.exited).not.toBe(0);
    expect(intruder.stderr()).toContain(`DATA_DIR ${dataDir} is in use by another local stack`);

    stack.signal('SIGTERM');
    receiver.signal('SIGTERM');
    expect(await stack.exited).toBe(0);
    expect(await receiver.exited).toBe(0);
    expect(stack.stdout()).toContain('stopped');
    expect(stack.stderr()).toBe('');
  });

  it('says which variable to set and exits non-zero when PORT is in use', async () => {
    const squatter = createServer();
    squatter.listen(0, '127.0.0.1');
    await once(squatter, 'listening');
    const address = squatter.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const stack = spawnNpm(['start'], { PORT: String(port) });
      started.push(stack);
      expect(await stack.exited).not.toBe(0);
      expect(stack.stderr()).toContain(`port ${port} is in use: set PORT=<another>`);
      expect(stack.stderr()).not.toContain('    at ');
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('refuses to start the receiver, naming the variable, when RECEIVER_STATUS is not a status', async () => {
    const receiver = spawnNpm(['run', 'receiver'], { RECEIVER_PORT: String(await findFreePort()), RECEIVER_STATUS: '42' });
    started.push(receiver);
    expect(await receiver.exited).toBe(78);
    expect(receiver.stderr()).toContain('RECEIVER_STATUS: must be an integer between 100 and 599 (got "42")');
  });

  it('refuses to start, naming the variable, when a setting is invalid', async () => {
    const stack = spawnNpm(['start'], { PORT: String(await findFreePort()), MAX_DELIVERY_ATTEMPTS: '0' });
    started.push(stack);
    expect(await stack.exited).not.toBe(0);
    expect(stack.stderr()).toContain('MAX_DELIVERY_ATTEMPTS: must be at least 1 (got "0")');
  });
});

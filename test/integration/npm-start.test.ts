/**
 * End to end as a user runs it: `npm start` and `npm run receiver` as child processes, driven only
 * over HTTP, stopped with SIGTERM.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_SECRET } from '../../local/banner.js';
import { call, makeEvent, postEvents, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { findFreePort, spawnNpm, type NpmProcess } from './support/process.js';

/** `webhook-sequence=1  webhook-id=evt  type=t  signature verified  -> 204` as the receiver prints it. */
const WEBHOOK_LINE = /webhook-sequence=(\d+) {2}webhook-id=(\S+) {2}type=\S+ {2}(.+?) {2}-> (\d+)/g;

function printedWebhooks(output: string): { sequence: number; id: string; signature: string; status: number }[] {
  return [...output.matchAll(WEBHOOK_LINE)].map((match) => ({
    sequence: Number(match[1]),
    id: match[2] ?? '',
    signature: match[3] ?? '',
    status: Number(match[4]),
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
    expect(stack.stdout()).toContain(`listening on ${url}`);
    expect(stack.stdout()).toContain(`state: kept in ${dataDir}`);
    expect(stack.stdout()).toContain(`curl -sS -X POST ${url}/v1/events`);
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
    expect(printed.every((webhook) => webhook.signature === 'signature verified' && webhook.status === 204)).toBe(true);
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

  it('refuses to start, naming the variable, when a setting is invalid', async () => {
    const stack = spawnNpm(['start'], { PORT: String(await findFreePort()), MAX_DELIVERY_ATTEMPTS: '0' });
    started.push(stack);
    expect(await stack.exited).not.toBe(0);
    expect(stack.stderr()).toContain('MAX_DELIVERY_ATTEMPTS: must be at least 1 (got "0")');
  });
});

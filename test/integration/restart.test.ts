/**
 * A restart with DATA_DIR loses nothing accepted: events still pending when the stack stops (their
 * receiver refusing) are delivered after it starts again, in order, with the numbers they had, and
 * subscriptions and idempotency records survive.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck, startRecordingReceiver, type RecordingReceiver } from './support/receiver.js';
import { startTestStack, type TestStack } from './support/stack.js';

const EVENTS_PER_KEY = 5;

describe('local stack restart with DATA_DIR', { timeout: 60_000 }, () => {
  let dataDir: string;
  let isAccepting = false;
  let receiver: RecordingReceiver;
  let second: TestStack | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ordered-webhooks-restart-'));
    receiver = await startRecordingReceiver(() => (isAccepting ? undefined : { statusCode: 503 }));
  });

  afterAll(async () => {
    await second?.stop();
    await receiver?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers what was pending in order after a stop and a start on the same DATA_DIR', async () => {
    // Attempts never run out here, and a refused head is retried every second.
    const environment = { DATA_DIR: dataDir, MAX_DELIVERY_ATTEMPTS: '100', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' };
    const first = await startTestStack(environment);
    const keys = [uniquePrefix('restart-a'), uniquePrefix('restart-b')];
    const accepted = new Map<string, string[]>();
    for (const key of keys) {
      receiver.setSecret(key, await subscribe(first.url, key, receiver.endpointFor(key)));
      const events = Array.from({ length: EVENTS_PER_KEY }, (_, n) => makeEvent(key, `${key}-evt-${n + 1}`));
      expect((await postEvents(first.url, events)).every((result) => result.status === 'accepted')).toBe(true);
      accepted.set(key, events.map((event) => event.event_id));
    }
    // Each key's head has been attempted (and refused), so it holds a sequence number and an attempt count.
    await waitFor('a refused attempt at each head', () => keys.every((key) => receiver.attempts().some((attempt) => attempt.path === `/${key}`)));
    await first.stop();

    second = await startTestStack(environment);
    isAccepting = true;
    await waitFor('every pending event delivered', () => keys.every((key) => receiver.deliveredTo(key).length === EVENTS_PER_KEY));

    for (const key of keys) {
      const deliveries = receiver.deliveredTo(key);
      expect(deliveries.map((d) => d.webhookId), key).toEqual(accepted.get(key));
      expect(deliveries.map((d) => d.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(deliveries.every((d) => d.signature === SignatureCheck.verified)).toBe(true);
      // The refused head kept its number across the restart.
      const headAttempts = receiver.attemptsOf(accepted.get(key)?.[0] ?? '');
      expect(headAttempts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(headAttempts.map((attempt) => attempt.sequence))).toEqual(new Set([1]));
      expect((await call(second.url, 'GET', `/v1/subscriptions/${key}`)).status).toBe(200);
    }
    // Idempotency records survived too.
    const [resent] = await postEvents(second.url, [makeEvent(keys[0] ?? '', accepted.get(keys[0] ?? '')?.[0] ?? '')]);
    expect(resent?.status).toBe('duplicate');
    const restarted = second;
    await waitFor('the delivery queue empty', async () => (await restarted.queueDepth()) === 0);
  });
});

describe('local stack stop', { timeout: 60_000 }, () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ordered-webhooks-stop-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers a request already in flight when stop begins, refuses new connections, and keeps the event', async () => {
    const first = await startTestStack({ DATA_DIR: dataDir }, { isConsumerEnabled: false });
    const key = uniquePrefix('stop');
    await subscribe(first.url, key, 'http://127.0.0.1:9/never-called');
    const body = JSON.stringify(makeEvent(key, `${key}-evt-1`));

    // `Expect: 100-continue` holds the body back until the server has taken the request in, so
    // stop begins while the request is surely in flight; then the body follows.
    const { port } = new URL(first.url);
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/v1/events',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' },
    });
    let stopped: Promise<void> | undefined;
    request.on('continue', () => {
      stopped = first.stop();
      request.end(body);
    });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on('error', reject);
    });
    request.flushHeaders();

    const answer = await answered;
    expect(answer.status).toBe(202);
    expect(JSON.parse(answer.text)).toMatchObject({ results: [{ event_id: `${key}-evt-1`, status: 'accepted' }] });
    expect(stopped).toBeDefined();
    await stopped;
    await expect(fetch(`${first.url}/health`)).rejects.toThrow();

    const second = await startTestStack({ DATA_DIR: dataDir }, { isConsumerEnabled: false });
    try {
      expect(await second.queueDepth()).toBe(1);
      expect(await second.eventItem(`${key}-evt-1`)).toMatchObject({ status: 'accepted' });
    } finally {
      await second.stop();
    }
  });
});

/**
 * With DATA_DIR, a refused head is retried after its backoff, as without: the embedded SQS takes
 * the consumer's visibility change, so the head does not wait out the delivery queue's whole
 * visibility timeout between attempts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { startRecordingReceiver, type RecordingReceiver } from './support/receiver.js';
import { startTestStack, type TestStack } from './support/stack.js';

const MAX_ATTEMPTS = 3;

/**
 * Far below the delivery queue's visibility timeout, far above three attempts with no backoff
 * (tenths of a second): only retries on the backoff meet it.
 */
const DEAD_LETTER_DEADLINE_MS = 5_000;

describe('local stack retries with DATA_DIR', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('data-dir-retries');
  const poisonId = `${prefix}-evt-1`;
  let dataDir: string;
  let receiver: RecordingReceiver;
  let stack: TestStack | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ordered-webhooks-data-dir-retries-'));
    receiver = await startRecordingReceiver((webhook) => (webhook.webhookId === poisonId ? { statusCode: 500 } : undefined));
    stack = await startTestStack({ DATA_DIR: dataDir, MAX_DELIVERY_ATTEMPTS: String(MAX_ATTEMPTS), RETRY_BASE_SECONDS: '0' });
  });

  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('gives a refused event its attempts on the backoff and dead-letters it', async () => {
    const running = stack;
    if (running === undefined) throw new Error('the stack did not start');
    receiver.setSecret(prefix, await subscribe(running.url, prefix, receiver.endpointFor(prefix)));
    const [result] = await postEvents(running.url, [makeEvent(prefix, poisonId)]);
    expect(result?.status).toBe('accepted');

    const [deadLetter] = await waitFor(
      'the refused event dead-lettered',
      async () => {
        const letters = await running.deadLetterItems(prefix);
        return letters.length > 0 ? letters : undefined;
      },
      DEAD_LETTER_DEADLINE_MS,
    );
    expect(receiver.attemptsOf(poisonId).map((attempt) => attempt.statusCode)).toEqual([500, 500, 500]);
    expect(deadLetter).toMatchObject({ event_id: poisonId, attempts: MAX_ATTEMPTS });
    expect(running.logs.filter((line) => line.includes('refused a visibility change'))).toEqual([]);
  });
});

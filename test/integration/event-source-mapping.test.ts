/**
 * The local poller against the embedded SQS behaves as Lambda's event source mapping for a FIFO
 * queue with partial batch responses: it deletes what succeeded, leaves what failed, leaves the
 * whole batch when the function throws or names a record not in the batch, and never runs more
 * than its concurrency.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LogLevel } from '../../lambda/config.js';
import { createLocalClients, type LocalClients } from '../../local/clients.js';
import { LOCAL_REGION, startEmulators, type Emulators } from '../../local/emulators.js';
import { startEventSourceMapping, type EventSourceMapping } from '../../local/event-source-mapping.js';
import { createTerminalLogger } from '../../local/terminal-logger.js';
import { uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';

/** A short visibility timeout, so a batch left by the function comes back within the test. */
const VISIBILITY_SECONDS = 1;

/** The function's timeout the mapping reports in the context it passes. */
const FUNCTION_TIMEOUT_SECONDS = 60;

interface Invocation {
  readonly records: SQSRecord[];
  readonly startedAt: number;
  /** What the context said was left, when the function began. */
  readonly remainingMs: number;
  readonly context: Pick<Context, 'getRemainingTimeInMillis'>;
}

describe('local event source mapping', { timeout: 60_000 }, () => {
  const logs: string[] = [];
  const logger = createTerminalLogger('event-source', LogLevel.INFO, (line) => logs.push(line));
  let emulators: Emulators;
  let clients: LocalClients;
  let mapping: EventSourceMapping | undefined;

  beforeAll(async () => {
    emulators = await startEmulators(undefined);
    clients = createLocalClients(emulators);
  });

  afterEach(async () => {
    await mapping?.stop();
    mapping = undefined;
  });

  afterAll(async () => {
    clients?.destroy();
    await emulators?.stop();
  });

  async function createQueue(sqs: SQSClient): Promise<{ url: string; arn: string }> {
    const name = `${uniquePrefix('esm')}.fifo`;
    const { QueueUrl = '' } = await sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: { FifoQueue: 'true', VisibilityTimeout: String(VISIBILITY_SECONDS) } }),
    );
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    return { url: QueueUrl, arn: Attributes?.QueueArn ?? '' };
  }

  async function send(sqs: SQSClient, url: string, messages: readonly { id: string; group: string }[]): Promise<void> {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: messages.map((message, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify({ id: message.id }),
          MessageGroupId: message.group,
          MessageDeduplicationId: message.id,
          MessageAttributes: { origin: { DataType: 'String', StringValue: 'test' } },
        })),
      }),
    );
  }

  async function depth(url: string): Promise<{ visible: number; inFlight: number }> {
    const { Attributes = {} } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    return { visible: Number(Attributes.ApproximateNumberOfMessages), inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible) };
  }

  const bodyId = (record: SQSRecord): string => (JSON.parse(record.body) as { id: string }).id;

  function start(queue: { url: string; arn: string }, invoke: (event: SQSEvent) => Promise<SQSBatchResponse>, concurrency = 2): Invocation[] {
    const invocations: Invocation[] = [];
    mapping = startEventSourceMapping({
      sqs: clients.sqs,
      queueUrl: queue.url,
      source: { queueArn: queue.arn, region: LOCAL_REGION },
      invoke: async (event, context) => {
        invocations.push({ records: event.Records, startedAt: Date.now(), remainingMs: context.getRemainingTimeInMillis(), context });
        return invoke(event);
      },
      functionTimeoutSeconds: FUNCTION_TIMEOUT_SECONDS,
      concurrency,
      logger,
    });
    return invocations;
  }

  it('hands over records shaped as Lambda builds them', async () => {
    const queue = await createQueue(clients.sqs);
    await send(clients.sqs, queue.url, [{ id: 'shape-1', group: 'g-shape' }]);
    const invocations = start(queue, async () => ({ batchItemFailures: [] }));
    await waitFor('an invocation', () => invocations[0]);
    const [record] = invocations[0]?.records ?? [];
    expect(record).toMatchObject({
      body: JSON.stringify({ id: 'shape-1' }),
      eventSource: 'aws:sqs',
      eventSourceARN: queue.arn,
      awsRegion: LOCAL_REGION,
      attributes: { MessageGroupId: 'g-shape', MessageDeduplicationId: 'shape-1', ApproximateReceiveCount: '1' },
      messageAttributes: { origin: { dataType: 'String', stringValue: 'test', stringListValues: [], binaryListValues: [] } },
    });
    expect(record?.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
    expect(typeof record?.attributes.SentTimestamp).toBe('string');
  });

  it('passes a context that counts down the function’s timeout, as Lambda’s does', async () => {
    const queue = await createQueue(clients.sqs);
    await send(clients.sqs, queue.url, [{ id: 'ctx-1', group: 'g-ctx' }]);
    const invocations = start(queue, async () => ({ batchItemFailures: [] }));
    const invocation = await waitFor('an invocation', () => invocations[0]);
    const timeoutMs = FUNCTION_TIMEOUT_SECONDS * 1000;
    expect(invocation.remainingMs).toBeGreaterThan(timeoutMs - 1000);
    expect(invocation.remainingMs).toBeLessThanOrEqual(timeoutMs);
    await waitFor('the queue empty', async () => {
      const { visible, inFlight } = await depth(queue.url);
      return visible + inFlight === 0;
    });
    // Read again later, it has counted down by the time that passed.
    const elapsedMs = Date.now() - invocation.startedAt;
    const laterMs = invocation.context.getRemainingTimeInMillis();
    expect(laterMs).toBeLessThanOrEqual(invocation.remainingMs - elapsedMs + 5);
    expect(laterMs).toBeGreaterThan(timeoutMs - elapsedMs - 1000);
  });

  it('deletes the records not reported failed and hands the failed one out again', async () => {
    const queue = await createQueue(clients.sqs);
    await send(clients.sqs, queue.url, [{ id: 'ok-1', group: 'g-1' }, { id: 'fail-once', group: 'g-2' }, { id: 'ok-2', group: 'g-3' }]);
    // The function fails the record on its first receive only.
    const invocations = start(queue, async (event) => ({
      batchItemFailures: event.Records.filter((record) => bodyId(record) === 'fail-once' && record.attributes.ApproximateReceiveCount === '1').map((record) => ({
        itemIdentifier: record.messageId,
      })),
    }));
    await waitFor('the failed record handed out again and the queue empty', async () => {
      const again = invocations.flatMap((invocation) => invocation.records).filter((record) => bodyId(record) === 'fail-once' && record.attributes.ApproximateReceiveCount === '2');
      const { visible, inFlight } = await depth(queue.url);
      return again.length === 1 && visible + inFlight === 0;
    });
    const received = invocations.flatMap((invocation) => invocation.records.map(bodyId));
    expect(received.sort()).toEqual(['fail-once', 'fail-once', 'ok-1', 'ok-2']);
  });

  it('leaves the whole batch when the function throws', async () => {
    const queue = await createQueue(clients.sqs);
    await send(clients.sqs, queue.url, [{ id: 'a', group: 'g-a' }, { id: 'b', group: 'g-b' }]);
    let hasThrown = false;
    const invocations = start(
      queue,
      async () => {
        if (!hasThrown) {
          hasThrown = true;
          throw new Error('function crashed');
        }
        return { batchItemFailures: [] };
      },
      1,
    );
    await waitFor('both records received a second time', () => {
      const counts = invocations.flatMap((invocation) => invocation.records).filter((record) => record.attributes.ApproximateReceiveCount === '2');
      return counts.length === 2;
    });
    // They came back only after their visibility timeout, as with Lambda.
    const first = invocations[0]?.startedAt ?? 0;
    const retried = invocations.find((invocation) => invocation.records.some((record) => record.attributes.ApproximateReceiveCount === '2'));
    expect((retried?.startedAt ?? 0) - first).toBeGreaterThanOrEqual(VISIBILITY_SECONDS * 1000 - 50);
    expect(logs.some((line) => line.includes('consumer invocation failed; the whole batch stays queued'))).toBe(true);
  });

  it('leaves the whole batch when the response names a record not in the batch', async () => {
    const queue = await createQueue(clients.sqs);
    await send(clients.sqs, queue.url, [{ id: 'x', group: 'g-x' }]);
    let hasAnsweredWrongly = false;
    const invocations = start(queue, async () => {
      if (hasAnsweredWrongly) return { batchItemFailures: [] };
      hasAnsweredWrongly = true;
      return { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] };
    });
    await waitFor('the record received a second time', () => invocations.some((invocation) => invocation.records[0]?.attributes.ApproximateReceiveCount === '2'));
    await waitFor('the queue empty', async () => {
      const { visible, inFlight } = await depth(queue.url);
      return visible + inFlight === 0;
    });
  });

  it('runs at most its concurrency of invocations at once, and uses all of it', async () => {
    const queue = await createQueue(clients.sqs);
    // fauxqs hands out one message per group per receive: 40 groups fill 4 batches of 10.
    for (let call = 0; call < 4; call += 1) {
      await send(clients.sqs, queue.url, Array.from({ length: 10 }, (_, n) => ({ id: `c-${call}-${n}`, group: `g-c-${call}-${n}` })));
    }
    let running = 0;
    let mostRunning = 0;
    const releases: (() => void)[] = [];
    const invocations = start(
      queue,
      async () => {
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
        return { batchItemFailures: [] };
      },
      3,
    );
    await waitFor('three invocations running', () => running === 3);
    expect(invocations).toHaveLength(3);
    // Release them until every message was handled.
    await waitFor('every message handled', async () => {
      releases.splice(0).forEach((release) => release());
      const { visible, inFlight } = await depth(queue.url);
      return visible + inFlight === 0 && running === 0;
    });
    expect(mostRunning).toBe(3);
  });

  it('finishes and settles an in-flight batch before stop resolves', async () => {
    const queue = await createQueue(clients.sqs);
    await send(clients.sqs, queue.url, [{ id: 'in-flight', group: 'g-stop' }]);
    let release: (() => void) | undefined;
    start(queue, () => new Promise<SQSBatchResponse>((resolve) => (release = () => resolve({ batchItemFailures: [] }))));
    await waitFor('the batch in flight', () => release);
    const stopped = mapping?.stop();
    mapping = undefined;
    release?.();
    await stopped;
    expect(await depth(queue.url)).toEqual({ visible: 0, inFlight: 0 });
  });
});

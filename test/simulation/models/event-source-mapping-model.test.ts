/**
 * The event source mapping model on the scheduler, driven with trivial functions. Each case names
 * the Lambda behaviour it checks; the URLs are in the header of event-source-mapping-model.ts.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { Scheduler } from '../scheduler.js';
import {
  EventSourceMappingConfigurationError,
  startEventSourceMappingModel,
  type EventSourceMappingModelOptions,
} from './event-source-mapping-model.js';
import { SqsFifoModel } from './sqs-fifo-model.js';

const VISIBILITY_SECONDS = 30;

interface Invocation {
  readonly startedAt: number;
  readonly records: readonly SQSRecord[];
  endedAt: number | undefined;
}

function world(seed = 1, queue: { visibilityTimeoutSeconds?: number } = {}) {
  const scheduler = new Scheduler(seed);
  const sqs = new SqsFifoModel(scheduler);
  const queueUrl = sqs.createQueue({ name: 'delivery.fifo', visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds ?? VISIBILITY_SECONDS });
  let serial = 0;
  const send = (groupId: string, body: string) => {
    serial += 1;
    return sqs.sendMessage({ QueueUrl: queueUrl, MessageBody: body, MessageGroupId: groupId, MessageDeduplicationId: `d${serial}` }).MessageId ?? '';
  };
  const invocations: Invocation[] = [];
  /** A function that takes `durationMs` and then answers with `respond(event)`. */
  const fn =
    (durationMs: number, respond: (event: SQSEvent) => SQSBatchResponse | void = () => ({ batchItemFailures: [] })) =>
    async (event: SQSEvent): Promise<SQSBatchResponse | void> => {
      const invocation: Invocation = { startedAt: scheduler.now(), records: event.Records, endedAt: undefined };
      invocations.push(invocation);
      await scheduler.sleep(durationMs);
      invocation.endedAt = scheduler.now();
      return respond(event);
    };
  const start = (options: Partial<EventSourceMappingModelOptions> & Pick<EventSourceMappingModelOptions, 'invoke'>) =>
    startEventSourceMappingModel({ scheduler, sqs, queueUrl, maxConcurrency: 2, batchSize: 10, functionTimeoutMs: 10_000, ...options });
  /**
   * Runs until `ms` have passed or `isDone` holds. It stops through `isDone` only: `Scheduler.run`
   * drops the sleeper it took when it stops at `untilMs`, so a later run would never wake it.
   */
  const runFor = (ms: number, isDone: () => boolean = () => false) => {
    const until = scheduler.now() + ms;
    return scheduler.run({ untilMs: Number.MAX_SAFE_INTEGER, isDone: () => scheduler.now() >= until || isDone() });
  };
  const bodiesOf = (invocation: Invocation | undefined) => invocation?.records.map((record) => record.body);
  return { scheduler, sqs, queueUrl, send, invocations, fn, start, runFor, bodiesOf };
}

describe('event source mapping model', () => {
  it('invokes with the records of a receive, shaped as Lambda shapes them, each group in order', async () => {
    const w = world();
    w.send('a', 'a1');
    w.send('b', 'b1');
    w.send('a', 'a2');
    const esm = w.start({ invoke: w.fn(100), maxConcurrency: 1 });
    await w.runFor(60_000, () => esm.stats.messagesDeleted === 3);
    esm.stop();
    expect(w.invocations).toHaveLength(1);
    expect(w.bodiesOf(w.invocations[0])).toEqual(['a1', 'a2', 'b1']);
    const [record] = w.invocations[0]?.records ?? [];
    expect(record).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:delivery.fifo',
      awsRegion: 'us-east-1',
      attributes: { MessageGroupId: 'a', ApproximateReceiveCount: '1', MessageDeduplicationId: 'd1' },
    });
    expect(record?.attributes.SequenceNumber).toMatch(/^\d{20}$/);
    expect(w.sqs.messages(w.queueUrl)).toEqual([]);
  });

  it('deletes the records not reported failed and leaves the failed ones until their visibility timeout ends (partial batch responses)', async () => {
    const w = world();
    w.send('a', 'a1');
    const failedId = w.send('b', 'b1');
    const esm = w.start({
      invoke: w.fn(100, (event) => ({
        batchItemFailures: event.Records.filter((record) => record.body === 'b1' && record.attributes.ApproximateReceiveCount === '1').map((record) => ({
          itemIdentifier: record.messageId,
        })),
      })),
      maxConcurrency: 1,
    });
    await w.runFor(20_000);
    expect(w.sqs.deletedMessages(w.queueUrl).map((message) => message.body)).toEqual(['a1']);
    expect(w.sqs.messages(w.queueUrl).map((message) => [message.messageId, message.state])).toEqual([[failedId, 'inFlight']]);
    await w.runFor(60_000, () => w.sqs.messages(w.queueUrl).length === 0);
    esm.stop();
    const retry = w.invocations[1];
    expect(w.bodiesOf(retry)).toEqual(['b1']);
    expect(retry?.records[0]?.attributes.ApproximateReceiveCount).toBe('2');
    // Not before the visibility timeout of the first receive ran out.
    expect(retry?.startedAt ?? 0).toBeGreaterThanOrEqual((w.invocations[0]?.startedAt ?? 0) + VISIBILITY_SECONDS * 1000 - 1000);
  });

  it.each([
    {
      label: 'the function throws',
      respond: (): SQSBatchResponse => {
        throw new Error('fault');
      },
      stat: 'invocationsThrew' as const,
    },
    { label: 'the response names an unknown itemIdentifier', respond: (): SQSBatchResponse => ({ batchItemFailures: [{ itemIdentifier: 'not-in-batch' }] }), stat: 'responsesRejected' as const },
    { label: 'the response names an empty itemIdentifier', respond: (): SQSBatchResponse => ({ batchItemFailures: [{ itemIdentifier: '' }] }), stat: 'responsesRejected' as const },
  ])('leaves the whole batch when $label, to come back after the visibility timeout (Errors: whole-batch failure)', async ({ respond, stat }) => {
    const w = world();
    w.send('a', 'a1');
    w.send('b', 'b1');
    let calls = 0;
    const esm = w.start({
      invoke: w.fn(100, () => {
        calls += 1;
        return calls === 1 ? respond() : { batchItemFailures: [] };
      }),
      maxConcurrency: 1,
    });
    await w.runFor(20_000);
    expect(esm.stats[stat]).toBe(1);
    expect(w.sqs.deletedMessages(w.queueUrl)).toEqual([]);
    expect(w.sqs.messages(w.queueUrl).map((message) => message.state)).toEqual(['inFlight', 'inFlight']);
    await w.runFor(60_000, () => w.sqs.messages(w.queueUrl).length === 0);
    esm.stop();
    expect(w.invocations.map((invocation) => w.bodiesOf(invocation))).toEqual([
      ['a1', 'b1'],
      ['a1', 'b1'],
    ]);
  });

  it('kills an invocation at the function timeout: its later steps never run, nothing is deleted, the messages return after their visibility timeout', async () => {
    const w = world();
    w.send('a', 'a1');
    let stepsAfterTimeout = 0;
    let calls = 0;
    const esm = w.start({
      functionTimeoutMs: 5000,
      maxConcurrency: 1,
      invoke: async (event) => {
        calls += 1;
        if (calls === 1) {
          await w.scheduler.sleep(8000);
          stepsAfterTimeout += 1;
        }
        return w.fn(10)(event);
      },
    });
    await w.runFor(20_000);
    expect(esm.stats.invocationsTimedOut).toBe(1);
    expect(esm.stats.concurrentInvocations).toBe(0);
    expect(w.sqs.messages(w.queueUrl).map((message) => message.state)).toEqual(['inFlight']);
    await w.runFor(60_000, () => w.sqs.messages(w.queueUrl).length === 0);
    esm.stop();
    expect(stepsAfterTimeout).toBe(0);
    expect(w.invocations).toHaveLength(1);
    expect(w.invocations[0]?.records[0]?.attributes.ApproximateReceiveCount).toBe('2');
    expect(w.sqs.deletedMessages(w.queueUrl).map((message) => message.receiveCount)).toEqual([2]);
  });

  it.each([
    { groups: 20, maxConcurrency: 3, expectedMax: 3 },
    { groups: 2, maxConcurrency: 5, expectedMax: 2 },
  ])(
    'runs at most min(active groups, maxConcurrency) invocations at once: $groups groups, maxConcurrency $maxConcurrency (Scaling)',
    async ({ groups, maxConcurrency, expectedMax }) => {
      const w = world(7);
      for (let message = 0; message < 3; message += 1) {
        for (let group = 0; group < groups; group += 1) w.send(`g${group}`, `g${group}-m${message}`);
      }
      let running = 0;
      let maxRunning = 0;
      const busyGroups = new Set<string>();
      let groupOverlaps = 0;
      const esm = w.start({
        maxConcurrency,
        batchSize: 2,
        invoke: async (event) => {
          running += 1;
          maxRunning = Math.max(maxRunning, running);
          const mine = new Set(event.Records.map((record) => record.attributes.MessageGroupId ?? ''));
          for (const group of mine) {
            if (busyGroups.has(group)) groupOverlaps += 1;
            busyGroups.add(group);
          }
          await w.scheduler.sleep(w.scheduler.random.between(100, 2000));
          for (const group of mine) busyGroups.delete(group);
          running -= 1;
          return { batchItemFailures: [] };
        },
      });
      await w.runFor(600_000, () => w.sqs.messages(w.queueUrl).length === 0);
      esm.stop();
      expect(w.sqs.messages(w.queueUrl)).toEqual([]);
      expect(maxRunning).toBe(expectedMax);
      expect(esm.stats.maxConcurrentInvocations).toBe(expectedMax);
      expect(groupOverlaps).toBe(0);
    },
  );

  it('holds a throttled batch and retries it late, so the same messages may be received again and run twice, until the visibility timeout ends (Errors: throttling)', async () => {
    // One invocation takes 15 s; a throttled retry comes 25 s later, 5 s before the 30 s visibility
    // timeout ends: the late invocation then overlaps another poller's receive of the same messages.
    let overlappingSeed: number | undefined;
    for (let seed = 1; seed <= 60 && overlappingSeed === undefined; seed += 1) {
      const w = world(seed);
      const messageId = w.send('a', 'a1');
      const esm = w.start({
        invoke: w.fn(15_000),
        maxConcurrency: 2,
        functionTimeoutMs: 20_000,
        throttleChance: 0.5,
        throttleRetryDelay: { minMs: 25_000, maxMs: 25_000 },
      });
      await w.runFor(600_000, () => w.sqs.messages(w.queueUrl).length === 0);
      // Let every invocation end and every delete answer.
      await w.runFor(60_000);
      esm.stop();
      // Lambda never starts a throttled retry once the visibility timeout has run out.
      for (const invocation of w.invocations) {
        const record = invocation.records[0];
        if (record?.attributes.ApproximateReceiveCount === '1') {
          expect(invocation.startedAt - Number(record.attributes.ApproximateFirstReceiveTimestamp)).toBeLessThan(VISIBILITY_SECONDS * 1000);
        }
      }
      expect(w.sqs.deletedMessages(w.queueUrl).map((message) => message.messageId)).toEqual([messageId]);
      const [first, second] = w.invocations;
      const overlaps = first !== undefined && second !== undefined && second.startedAt < (first.endedAt ?? Infinity);
      if (esm.stats.throttles > 0 && overlaps) {
        overlappingSeed = seed;
        expect(w.bodiesOf(first)).toEqual(w.bodiesOf(second));
        // The late invocation's receipt handle expired when the messages were received again.
        expect(esm.stats.deleteFailures).toBe(1);
        expect(esm.stats.messagesDeleted).toBe(1);
      }
    }
    expect(overlappingSeed).toBeDefined();
  });

  it('gives up a batch that is throttled until its visibility timeout has passed, without invoking (Errors: throttling)', async () => {
    const w = world();
    w.send('a', 'a1');
    const esm = w.start({ invoke: w.fn(10), maxConcurrency: 1, throttleChance: 1, throttleRetryDelay: { minMs: 4000, maxMs: 4000 } });
    await w.runFor(100_000);
    esm.stop();
    expect(w.invocations).toEqual([]);
    expect(esm.stats.batchesDroppedAfterThrottle).toBeGreaterThanOrEqual(3);
    expect(w.sqs.messages(w.queueUrl).map((message) => message.receiveCount)[0]).toBeGreaterThanOrEqual(3);
  });

  it('leaves a record whose delete the simulation failed, to be received again after its visibility timeout', async () => {
    const w = world();
    const keptId = w.send('a', 'a1');
    w.send('b', 'b1');
    let failures = 0;
    const esm = w.start({
      invoke: w.fn(100),
      maxConcurrency: 1,
      shouldFailDelete: (record) => record.messageId === keptId && (failures += 1) === 1,
    });
    await w.runFor(120_000, () => w.sqs.messages(w.queueUrl).length === 0);
    esm.stop();
    expect(esm.stats.deleteFailures).toBe(1);
    expect(w.invocations.map((invocation) => w.bodiesOf(invocation))).toEqual([['a1', 'b1'], ['a1']]);
    expect(w.sqs.deletedMessages(w.queueUrl).map((message) => [message.body, message.receiveCount])).toEqual([
      ['b1', 1],
      ['a1', 2],
    ]);
  });

  it('batches what short receives return: every message invoked once, each group in send order within and across batches (ReceiveMessage: fewer messages might be returned)', async () => {
    const scheduler = new Scheduler(7);
    let draws = 0;
    const sqs = new SqsFifoModel(scheduler, { shortReceives: { chance: 0.7, random: () => ((draws += 1) * 0.618_034) % 1 } });
    const queueUrl = sqs.createQueue({ name: 'delivery.fifo', visibilityTimeoutSeconds: VISIBILITY_SECONDS });
    const sent: Record<string, string[]> = { a: [], b: [], c: [] };
    for (let n = 0; n < 30; n += 1) {
      const group = ['a', 'b', 'c'][n % 3] ?? 'a';
      sent[group]?.push(`${group}${n}`);
      sqs.sendMessage({ QueueUrl: queueUrl, MessageBody: `${group}${n}`, MessageGroupId: group, MessageDeduplicationId: `d${n}` });
    }
    const batches: string[][] = [];
    const esm = startEventSourceMappingModel({
      scheduler,
      sqs,
      queueUrl,
      maxConcurrency: 2,
      batchSize: 10,
      functionTimeoutMs: 10_000,
      invoke: async (event) => {
        batches.push(event.Records.map((record) => record.body));
        await scheduler.sleep(50);
        return { batchItemFailures: [] };
      },
    });
    await scheduler.run({ untilMs: Number.MAX_SAFE_INTEGER, isDone: () => esm.stats.messagesDeleted === 30 });
    esm.stop();
    expect(batches.some((batch) => batch.length < 10 && batches.indexOf(batch) < batches.length - 1)).toBe(true);
    for (const group of ['a', 'b', 'c']) {
      expect(batches.flat().filter((body) => body.startsWith(group))).toEqual(sent[group]);
    }
  });

  it('stops polling after stop(), so the scheduler runs out of sleepers', async () => {
    const w = world();
    const esm = w.start({ invoke: w.fn(10) });
    await w.runFor(5000);
    esm.stop();
    const stoppedAt = w.scheduler.now();
    // With no sleeper left, run returns at once, whatever its deadline.
    await w.scheduler.run({ untilMs: Number.MAX_SAFE_INTEGER });
    expect(w.scheduler.now() - stoppedAt).toBeLessThan(5000);
    const receives = esm.stats.receives;
    w.send('a', 'late');
    await w.runFor(60_000);
    expect(esm.stats.receives).toBe(receives);
  });

  it.each([
    { label: 'a batch of 11', options: { batchSize: 11 } },
    { label: 'a function timeout above the visibility timeout', options: { functionTimeoutMs: VISIBILITY_SECONDS * 1000 + 1 } },
    { label: 'no concurrency', options: { maxConcurrency: 0 } },
  ])('refuses $label, as Lambda refuses the mapping (Parameters; Configure)', ({ options }) => {
    const w = world();
    expect(() => w.start({ invoke: w.fn(10), ...options })).toThrow(EventSourceMappingConfigurationError);
  });
});

describe('event source mapping model, idle backoff (plans of days)', () => {
  it('polls an idle queue less and less often, up to its limit, and takes a message sent then within that limit', async () => {
    const w = world();
    const mapping = w.start({ invoke: w.fn(10), maxConcurrency: 1, emptyReceiveWait: { minMs: 1_000, maxMs: 1_000 }, idleBackoffMaxMs: 60_000 });
    // A day idle: 1, 2, 4, … 32 s, then a minute each time: about 1,440 receives, not 86,400.
    await w.runFor(24 * 3_600_000);
    expect(mapping.stats.emptyReceives).toBeGreaterThan(1_400);
    expect(mapping.stats.emptyReceives).toBeLessThan(1_450);
    const sentAt = w.scheduler.now();
    w.send('g', 'late');
    await w.runFor(120_000, () => w.invocations.length > 0);
    expect(w.bodiesOf(w.invocations[0])).toEqual(['late']);
    expect(w.invocations[0]?.startedAt ?? Infinity).toBeLessThanOrEqual(sentAt + 60_000 + 1_000);
    mapping.stop();
  });
});

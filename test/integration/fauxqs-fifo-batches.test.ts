/**
 * The local stack's SQS hands out and takes back FIFO messages as SQS does (the override in
 * local/fauxqs-fifo-batches.ts): up to 10 messages of one group per receive, in order, the group
 * locked while any is in flight, and messages that become visible again back in their order,
 * also across a restart on a data directory. Fails if a fauxqs upgrade drops the override.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalClients, type LocalClients } from '../../local/clients.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';

/** SQS takes at most 10 entries per batch call. */
const BATCH_LIMIT = 10;

/** The bodies `<group>-<from>` … `<group>-<to>`, in the order they are sent. */
function bodiesOf(group: string, from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, index) => `${group}-${from + index}`);
}

async function createFifoQueue(sqs: SQSClient, label: string, attributes: Readonly<Record<string, string>> = {}): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `${uniquePrefix(label)}.fifo`, Attributes: { FifoQueue: 'true', VisibilityTimeout: '30', ...attributes } }),
  );
  if (QueueUrl === undefined) throw new Error('CreateQueue returned no URL');
  return QueueUrl;
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  if (Attributes?.QueueArn === undefined) throw new Error('GetQueueAttributes returned no ARN');
  return Attributes.QueueArn;
}

/** Sends the bodies to one group in order, ten per call. */
async function sendToGroup(sqs: SQSClient, queueUrl: string, group: string, bodies: readonly string[]): Promise<void> {
  for (let start = 0; start < bodies.length; start += BATCH_LIMIT) {
    const output = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.slice(start, start + BATCH_LIMIT).map((body, index) => ({
          Id: String(index),
          MessageBody: body,
          MessageGroupId: group,
          MessageDeduplicationId: body,
        })),
      }),
    );
    expect(output.Failed ?? []).toEqual([]);
  }
}

async function receive(sqs: SQSClient, queueUrl: string, visibilityTimeoutSeconds?: number): Promise<Message[]> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      ...(visibilityTimeoutSeconds === undefined ? {} : { VisibilityTimeout: visibilityTimeoutSeconds }),
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return Messages;
}

/** Polls until a receive returns messages, and returns them (they are then in flight). */
function receiveWhenVisible(sqs: SQSClient, queueUrl: string, what: string, visibilityTimeoutSeconds?: number): Promise<Message[]> {
  return waitFor(what, async () => {
    const messages = await receive(sqs, queueUrl, visibilityTimeoutSeconds);
    return messages.length > 0 ? messages : undefined;
  });
}

async function changeVisibility(sqs: SQSClient, queueUrl: string, messages: readonly Message[], timeoutSeconds: number): Promise<void> {
  const output = await sqs.send(
    new ChangeMessageVisibilityBatchCommand({
      QueueUrl: queueUrl,
      Entries: messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: timeoutSeconds })),
    }),
  );
  expect(output.Failed ?? []).toEqual([]);
}

async function deleteAll(sqs: SQSClient, queueUrl: string, messages: readonly Message[]): Promise<void> {
  const output = await sqs.send(
    new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })) }),
  );
  expect(output.Failed ?? []).toEqual([]);
}

const bodies = (messages: readonly Message[]): (string | undefined)[] => messages.map((message) => message.Body);
const receiveCounts = (messages: readonly Message[]): (string | undefined)[] => messages.map((message) => message.Attributes?.ApproximateReceiveCount);

describe('local SQS FIFO batches', { timeout: 60_000 }, () => {
  let emulators: Emulators;
  let clients: LocalClients;

  beforeAll(async () => {
    emulators = await startEmulators(undefined);
    clients = createLocalClients(emulators);
  });

  afterAll(async () => {
    clients?.destroy();
    await emulators?.stop();
  });

  it('hands out 10 messages of one group in order, and none of it to another receive while they are in flight', async () => {
    const { sqs } = clients;
    const queueUrl = await createFifoQueue(sqs, 'batches');
    const a = uniquePrefix('group-a');
    const b = uniquePrefix('group-b');
    const c = uniquePrefix('group-c');
    await sendToGroup(sqs, queueUrl, a, bodiesOf(a, 1, 15));
    await sendToGroup(sqs, queueUrl, b, bodiesOf(b, 1, 2));
    await sendToGroup(sqs, queueUrl, c, bodiesOf(c, 1, 2));

    const first = await receive(sqs, queueUrl);
    expect(bodies(first)).toEqual(bodiesOf(a, 1, 10));
    expect(first.every((message) => message.Attributes?.MessageGroupId === a)).toBe(true);

    // Group a is locked; the batch is filled from the other groups, each in its order.
    const meanwhile = await receive(sqs, queueUrl);
    expect(bodies(meanwhile)).toEqual([...bodiesOf(b, 1, 2), ...bodiesOf(c, 1, 2)]);

    await deleteAll(sqs, queueUrl, first);
    const rest = await receive(sqs, queueUrl);
    expect(bodies(rest)).toEqual(bodiesOf(a, 11, 15));
  });

  it('answers each send with the SequenceNumber its message is received with, growing in its group (ingest records it as the event\'s place)', async () => {
    const { sqs } = clients;
    const queueUrl = await createFifoQueue(sqs, 'sequence-numbers');
    const group = uniquePrefix('group');
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodiesOf(group, 1, 3).map((body, index) => ({ Id: String(index), MessageBody: body, MessageGroupId: group, MessageDeduplicationId: body })),
      }),
    );
    const numbers = ['0', '1', '2'].map((id) => sent.Successful?.find((entry) => entry.Id === id)?.SequenceNumber);
    expect(numbers.every((number) => number !== undefined && /^\d{1,40}$/.test(number))).toBe(true);
    const received = await receive(sqs, queueUrl);
    expect(received.map((message) => message.Attributes?.SequenceNumber)).toEqual(numbers);
    const padded = numbers.map((number) => (number ?? '').padStart(40, '0'));
    expect([...padded].sort()).toEqual(padded);
    expect(new Set(padded).size).toBe(3);
  });

  it('ends only the long polls it has messages for when several wait and a batch arrives', async () => {
    const { sqs } = clients;
    const queueUrl = await createFifoQueue(sqs, 'long-polls');
    const group = uniquePrefix('group');
    const waitSeconds = 2;
    // Several pollers waiting, as the event source mapping's are: each either gets messages or
    // waits out its WaitTimeSeconds, as on SQS; an early empty answer is a wasted round trip.
    const polls = Array.from({ length: 4 }, async () => {
      const startedAt = Date.now();
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds }));
      return { messages: Messages, waitedMs: Date.now() - startedAt };
    });
    await sendToGroup(sqs, queueUrl, group, bodiesOf(group, 1, 3));

    const answers = await Promise.all(polls);
    const withMessages = answers.filter((answer) => answer.messages.length > 0);
    expect(withMessages.map((answer) => bodies(answer.messages))).toEqual([bodiesOf(group, 1, 3)]);
    const empty = answers.filter((answer) => answer.messages.length === 0);
    expect(empty).toHaveLength(3);
    // fauxqs's timer is a setTimeout of the wait; the margin is for a loaded machine's clock reads only.
    for (const answer of empty) expect(answer.waitedMs).toBeGreaterThanOrEqual(waitSeconds * 1000 - 100);
  });

  it('gives back in their order messages made visible again, head first, and keeps the group locked until all are', async () => {
    const { sqs } = clients;
    const queueUrl = await createFifoQueue(sqs, 'visible-again');
    const group = uniquePrefix('group');
    await sendToGroup(sqs, queueUrl, group, bodiesOf(group, 1, 15));
    const received = await receive(sqs, queueUrl);
    expect(received).toHaveLength(10);

    // The head first, then the successors one at a time in send order: returned to the front of
    // the group, as fauxqs does, they would come back reversed.
    await changeVisibility(sqs, queueUrl, received.slice(0, 1), 0);
    expect(await receive(sqs, queueUrl)).toEqual([]);
    for (const successor of received.slice(1)) await changeVisibility(sqs, queueUrl, [successor], 0);

    const again = await receiveWhenVisible(sqs, queueUrl, 'the group handed out again');
    expect(bodies(again)).toEqual(bodiesOf(group, 1, 10));
    expect(receiveCounts(again)).toEqual(Array(10).fill('2'));
  });

  it('refuses, as SQS does, a visibility that would keep a message in flight past 12 hours from its receive: per entry in a batch', async () => {
    const { sqs } = clients;
    const queueUrl = await createFifoQueue(sqs, 'twelve-hours');
    const group = uniquePrefix('group');
    await sendToGroup(sqs, queueUrl, group, bodiesOf(group, 1, 2));
    const [first, second] = await receive(sqs, queueUrl);
    if (first?.ReceiptHandle === undefined || second?.ReceiptHandle === undefined) throw new Error('expected two messages in flight');
    // A minute after the receive (the clock moved on, nothing waits for it): 12 hours less two
    // minutes is within the limit, 12 hours less 59 s is past it.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60_000);
    try {
      const output = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: [
            { Id: 'within', ReceiptHandle: first.ReceiptHandle, VisibilityTimeout: 43_200 - 120 },
            { Id: 'past', ReceiptHandle: second.ReceiptHandle, VisibilityTimeout: 43_200 - 59 },
          ],
        }),
      );
      expect(output.Successful?.map((entry) => entry.Id)).toEqual(['within']);
      expect(output.Failed).toEqual([
        { Id: 'past', SenderFault: true, Code: 'InvalidParameterValue', Message: 'Value 43141 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds].' },
      ]);
      // fauxqs names every error's query code AWS.SimpleQueueService.<code>, which the SDK reads as the name.
      await expect(sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: second.ReceiptHandle, VisibilityTimeout: 43_200 - 59 }))).rejects.toMatchObject({
        name: expect.stringMatching(/InvalidParameterValue$/),
        message: expect.stringContaining('Total VisibilityTimeout for the message is beyond the limit [43200 seconds]'),
      });
      // Within the limit the same message's change is taken: the refusal changed nothing.
      await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: second.ReceiptHandle, VisibilityTimeout: 0 }));
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives back in their order messages whose visibility timeout expired', async () => {
    const { sqs } = clients;
    const queueUrl = await createFifoQueue(sqs, 'expired');
    const group = uniquePrefix('group');
    await sendToGroup(sqs, queueUrl, group, bodiesOf(group, 1, 15));
    expect(bodies(await receive(sqs, queueUrl, 1))).toEqual(bodiesOf(group, 1, 10));

    const again = await receiveWhenVisible(sqs, queueUrl, 'the group back after its visibility timeout');
    expect(bodies(again)).toEqual(bodiesOf(group, 1, 10));
    expect(receiveCounts(again)).toEqual(Array(10).fill('2'));
  });

  it('keeps a message moved to the dead-letter queue at its place there when its group comes back', async () => {
    const { sqs } = clients;
    const deadLetterUrl = await createFifoQueue(sqs, 'dead-letters');
    const redrivePolicy = JSON.stringify({ deadLetterTargetArn: await queueArn(sqs, deadLetterUrl), maxReceiveCount: 1 });
    const sourceUrl = await createFifoQueue(sqs, 'source', { RedrivePolicy: redrivePolicy, VisibilityTimeout: '0' });
    const group = uniquePrefix('group');
    // The source queue's numbers run ahead of the dead-letter queue's.
    const other = uniquePrefix('other');
    await sendToGroup(sqs, sourceUrl, other, bodiesOf(other, 1, 3));
    await deleteAll(sqs, sourceUrl, await receive(sqs, sourceUrl));
    await sendToGroup(sqs, deadLetterUrl, group, [`${group}-1`]);
    await sendToGroup(sqs, sourceUrl, group, [`${group}-2`]);
    // Received once and visible again at once (timeout 0); the next receive moves it.
    await waitFor('the source message moved to the dead-letter queue', async () => {
      await receive(sqs, sourceUrl);
      const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: deadLetterUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
      return Attributes?.ApproximateNumberOfMessages === '2';
    });
    await sendToGroup(sqs, deadLetterUrl, group, [`${group}-3`]);

    const received = await receive(sqs, deadLetterUrl);
    expect(bodies(received)).toEqual(bodiesOf(group, 1, 3));
    for (const message of received) await changeVisibility(sqs, deadLetterUrl, [message], 0);
    expect(bodies(await receive(sqs, deadLetterUrl))).toEqual(bodiesOf(group, 1, 3));
  });

  describe('with a data directory', () => {
    let dataDir: string;
    /** What a failed test leaves running, last started first. */
    const running: { emulators: Emulators; clients: LocalClients }[] = [];

    async function start(): Promise<LocalClients> {
      const started = await startEmulators(dataDir);
      const startedClients = createLocalClients(started);
      running.unshift({ emulators: started, clients: startedClients });
      return startedClients;
    }

    async function stopAll(): Promise<void> {
      for (const { emulators: started, clients: startedClients } of running.splice(0)) {
        startedClients.destroy();
        await started.stop();
      }
    }

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'ordered-webhooks-fifo-batches-'));
    });

    afterAll(async () => {
      await stopAll();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('keeps the order, the receive counts and the lock of messages in flight across a restart', async () => {
      const before = (await start()).sqs;
      const queueUrl = await createFifoQueue(before, 'restart');
      const group = uniquePrefix('group');
      await sendToGroup(before, queueUrl, group, bodiesOf(group, 1, 15));
      // Made visible again before the stop: on disk they must be visible, with their receive count.
      const received = await receive(before, queueUrl);
      await changeVisibility(before, queueUrl, received.slice(0, 1), 0);
      for (const successor of received.slice(1)) await changeVisibility(before, queueUrl, [successor], 0);
      // In flight at the stop for a few seconds more, so still in flight, and its group locked, after the start.
      expect(bodies(await receive(before, queueUrl, 4))).toEqual(bodiesOf(group, 1, 10));
      await stopAll();

      const { sqs } = await start();
      expect(await receive(sqs, queueUrl)).toEqual([]);
      const again = await receiveWhenVisible(sqs, queueUrl, 'the group back after its visibility timeout, after the restart');
      expect(bodies(again)).toEqual(bodiesOf(group, 1, 10));
      expect(receiveCounts(again)).toEqual(Array(10).fill('3'));

      await deleteAll(sqs, queueUrl, again);
      expect(bodies(await receive(sqs, queueUrl))).toEqual(bodiesOf(group, 11, 15));
    });
  });
});

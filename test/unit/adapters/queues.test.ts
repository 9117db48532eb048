import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  QueueDoesNotExist,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createBackstopQueue } from '../../../lambda/adapters/backstop-queue.js';
import { createDeliveryQueue } from '../../../lambda/adapters/delivery-queue.js';
import { planGroupRetry } from '../../../lambda/core/consumer-batch.js';
import type { ConsumerRecord } from '../../../lambda/core/delivery.js';
import { createLogger } from '../../../lambda/handlers/logger.js';

const sqs = mockClient(SQSClient);
const client = new SQSClient({ region: 'us-east-1' });
const logger = createLogger('test', 'SILENT');
const queueUrl = 'https://sqs.us-east-1.amazonaws.com/123456789012/delivery.fifo';
const deliveryQueue = createDeliveryQueue(client, queueUrl, logger);

beforeEach(() => sqs.reset());

describe('delivery queue sendBatch', () => {
  const entries = [
    { index: 0, orderingKey: 'a', messageGroupId: 'ga', deduplicationId: 'evt_0', body: '{"a":0}' },
    { index: 3, orderingKey: 'b', messageGroupId: 'gb', deduplicationId: 'evt_3', body: '{"b":3}' },
  ];

  it('sends each message with its group and deduplication id, and returns the number SQS gave each', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [
        { Id: '0', MessageId: 'm0', MD5OfMessageBody: '', SequenceNumber: '18890000000000000001' },
        { Id: '3', MessageId: 'm3', MD5OfMessageBody: '', SequenceNumber: '18890000000000000002' },
      ],
      Failed: [],
      $metadata: { attempts: 1 },
    });
    const answer = await deliveryQueue.sendBatch(entries);
    expect(answer.refused.size).toBe(0);
    expect(Object.fromEntries(answer.sequenceNumbers)).toEqual({ 0: '18890000000000000001', 3: '18890000000000000002' });
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: queueUrl,
      Entries: [
        { Id: '0', MessageBody: '{"a":0}', MessageGroupId: 'ga', MessageDeduplicationId: 'evt_0' },
        { Id: '3', MessageBody: '{"b":3}', MessageGroupId: 'gb', MessageDeduplicationId: 'evt_3' },
      ],
    });
  });

  it('returns no number for an answer the SDK got only by repeating the call: SQS may have deduplicated it', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: '0', MessageId: 'm0', MD5OfMessageBody: '', SequenceNumber: '18890000000000000001' }],
      Failed: [],
      $metadata: { attempts: 2 },
    });
    const answer = await deliveryQueue.sendBatch(entries.slice(0, 1));
    expect(answer.refused.size).toBe(0);
    expect(answer.sequenceNumbers.size).toBe(0);
  });

  it('returns the entries SQS refused, each classified', async () => {
    sqs.on(SendMessageBatchCommand).resolves({
      Successful: [],
      Failed: [
        { Id: '0', Code: 'InvalidMessageContents', SenderFault: true },
        { Id: '3', Code: 'InternalError', SenderFault: false },
      ],
      $metadata: { attempts: 1 },
    });
    expect(Object.fromEntries((await deliveryQueue.sendBatch(entries)).refused)).toEqual({
      0: { kind: 'message_refused', code: 'InvalidMessageContents' },
      3: { kind: 'transient', code: 'InternalError' },
    });
  });

  it('fails every entry with the classification of the call when it fails as a whole', async () => {
    sqs.on(SendMessageBatchCommand).rejects(new Error('socket hang up'));
    expect(Object.fromEntries((await deliveryQueue.sendBatch(entries)).refused)).toEqual({ 0: { kind: 'transient', code: 'Error' }, 3: { kind: 'transient', code: 'Error' } });
    sqs.on(SendMessageBatchCommand).rejects(new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: {} }));
    expect(Object.fromEntries((await deliveryQueue.sendBatch(entries)).refused)).toEqual({
      0: { kind: 'configuration', code: 'QueueDoesNotExist' },
      3: { kind: 'configuration', code: 'QueueDoesNotExist' },
    });
  });
});

describe('delivery queue changeVisibility', () => {
  it('backs off the head and releases the successors in one call', async () => {
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
    const group: ConsumerRecord[] = ['m1', 'm2', 'm3'].map((id) => ({ messageId: id, receiptHandle: `rh-${id}`, body: '', messageGroupId: 'g', receiveCount: 1 }));
    await deliveryQueue.changeVisibility(planGroupRetry(group, 0, 40).visibilityChanges);
    expect(sqs.commandCalls(ChangeMessageVisibilityBatchCommand)[0]?.args[0].input).toEqual({
      QueueUrl: queueUrl,
      Entries: [
        { Id: '0', ReceiptHandle: 'rh-m1', VisibilityTimeout: 40 },
        { Id: '1', ReceiptHandle: 'rh-m2', VisibilityTimeout: 0 },
        { Id: '2', ReceiptHandle: 'rh-m3', VisibilityTimeout: 0 },
      ],
    });
  });

  it('makes no call when nothing changes', async () => {
    await deliveryQueue.changeVisibility([]);
    expect(sqs.calls()).toHaveLength(0);
  });
});

describe('delivery queue counts', () => {
  it('reads the visible, in-flight and delayed counts in one call, an absent count as 0', async () => {
    sqs.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '3', ApproximateNumberOfMessagesNotVisible: '2' } });
    expect(await deliveryQueue.counts()).toEqual({ queued: 3, inFlight: 2, delayed: 0 });
    expect(sqs.commandCalls(GetQueueAttributesCommand)[0]?.args[0].input).toEqual({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    });
  });
});

describe('backstop queue quarantine', () => {
  it('keeps an unreadable record as it was received, in its group, deduplicated by its message id, with why', async () => {
    sqs.on(SendMessageCommand).resolves({});
    await createBackstopQueue(client, 'dlq').quarantine({
      messageId: 'm1',
      messageGroupId: 'malformed-m1',
      body: 'garbage',
      reason: 'malformed record: body is not JSON',
      at: '2026-12-02T13:00:00.000Z',
    });
    const input = sqs.commandCalls(SendMessageCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ QueueUrl: 'dlq', MessageGroupId: 'malformed-m1', MessageDeduplicationId: 'm1', MessageBody: 'garbage' });
    expect(input?.MessageAttributes).toEqual({
      reason: { DataType: 'String', StringValue: 'malformed record: body is not JSON' },
      dead_lettered_at: { DataType: 'String', StringValue: '2026-12-02T13:00:00.000Z' },
    });
  });

  it('sends an empty body as a placeholder, which SQS requires', async () => {
    sqs.on(SendMessageCommand).resolves({});
    await createBackstopQueue(client, 'dlq').quarantine({ messageId: 'm2', messageGroupId: 'g', body: '', reason: 'malformed record: body is not JSON', at: '2026-12-02T13:00:00.000Z' });
    expect(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody).toBe('(empty body)');
  });
});

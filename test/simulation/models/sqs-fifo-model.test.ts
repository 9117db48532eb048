/**
 * The SQS FIFO model against the behaviour AWS documents, or that real SQS was recorded showing
 * (LocalStack's `aws.validated` tests, whose snapshots hold real SQS answers). Each case names its
 * source; the URLs are in the header of sqs-fifo-model.ts.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSServiceException,
  type Message,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { createModelSqsClient, GroupLock, SqsFifoModel, type CreateQueueInput, type SqsFifoModelOptions } from './sqs-fifo-model.js';

const START_MS = Date.UTC(2026, 0, 1);
const HOUR_MS = 3_600_000;

function world(queue: Partial<CreateQueueInput> = {}, options: SqsFifoModelOptions = {}) {
  const clock = { nowMs: START_MS, now: () => clock.nowMs };
  const model = new SqsFifoModel(clock, options);
  const dlqUrl = model.createQueue({ name: 'dead-letters.fifo', visibilityTimeoutSeconds: 30 });
  const url = model.createQueue({ name: 'delivery.fifo', visibilityTimeoutSeconds: 30, ...queue });
  let dedup = 0;
  const send = (groupId: string, body: string, deduplicationId = `d${(dedup += 1)}`) =>
    model.sendMessage({ QueueUrl: url, MessageBody: body, MessageGroupId: groupId, MessageDeduplicationId: deduplicationId });
  const receive = (max = 10, extra: { VisibilityTimeout?: number; MessageSystemAttributeNames?: ('All' | 'ApproximateReceiveCount')[] } = {}): Message[] =>
    model.receiveMessage({ QueueUrl: url, MaxNumberOfMessages: max, ...extra }).Messages ?? [];
  const bodies = (messages: readonly Message[]) => messages.map((message) => message.Body);
  const advance = (ms: number) => {
    clock.nowMs += ms;
  };
  return { clock, model, url, dlqUrl, send, receive, bodies, advance };
}

/** Runs `call`, expects an SDK error of `name` (and message), as the SDK would throw from SQS. */
function expectSqsError(call: () => unknown, name: string, message?: string | RegExp): void {
  let caught: unknown;
  try {
    call();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SQSServiceException);
  expect((caught as SQSServiceException).name).toBe(name);
  if (message !== undefined) expect((caught as SQSServiceException).message).toMatch(message);
}

function handleOf(message: Message | undefined): string {
  if (message?.ReceiptHandle === undefined) throw new Error('no message');
  return message.ReceiptHandle;
}

describe('SqsFifoModel receive order', () => {
  it('returns several messages of one group in order, then other groups, when the batch has room (FIFO delivery logic; recorded test_fifo_receive_message_group_id_ordering)', () => {
    const w = world();
    w.send('g1', 'g1-m1');
    w.send('g2', 'g2-m1');
    w.send('g1', 'g1-m2');
    w.send('g1', 'g1-m3');
    expect(w.bodies(w.receive(10))).toEqual(['g1-m1', 'g1-m2', 'g1-m3', 'g2-m1']);
  });

  it('holds back the rest of a group that a smaller batch split, when the batch was full (recorded test_fifo_receive_message_visibility_timeout_shared_in_group)', () => {
    const w = world({ visibilityTimeoutSeconds: 1 });
    for (const body of ['g1-m1', 'g1-m2', 'g1-m3', 'g1-m4']) w.send('g1', body);
    w.send('g2', 'g2-m1');
    w.send('g3', 'g3-m1');
    expect(w.bodies(w.receive(2))).toEqual(['g1-m1', 'g1-m2']);
    expect(w.bodies(w.receive(1))).toEqual(['g2-m1']);
    w.advance(2000);
    // Groups come least recently served first; AWS recorded this exact order.
    expect(w.bodies(w.receive(10, { VisibilityTimeout: 0 }))).toEqual(['g3-m1', 'g1-m1', 'g1-m2', 'g1-m3', 'g1-m4', 'g2-m1']);
  });

  it('returns no message of a group while its head is in flight, and the next one once it is deleted (FIFO delivery logic; recorded test_fifo_message_group_visibility)', () => {
    const w = world({ visibilityTimeoutSeconds: 60 });
    w.send('g1', 'message-1');
    const [first] = w.receive(1);
    w.send('g1', 'message-2');
    w.advance(2000);
    expect(w.receive(10)).toEqual([]);
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(first) });
    expect(w.bodies(w.receive(10))).toEqual(['message-2']);
  });

  it('does not return a group whose head was deleted while a successor is still in flight (recorded test_fifo_message_group_visibility_after_partial_delete)', () => {
    const w = world();
    for (const [group, body] of [['g1', 'g1-m1'], ['g2', 'g2-m1'], ['g1', 'g1-m2'], ['g2', 'g2-m2'], ['g1', 'g1-m3'], ['g3', 'g3-m1']] as const) w.send(group, body);
    const [head] = w.receive(2);
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(head) });
    expect(w.bodies(w.receive(10))).toEqual(['g2-m1', 'g2-m2', 'g3-m1']);
  });

  it.each([
    { extended: 0, expected: [] as string[] },
    { extended: 1, expected: ['foo'] },
    { extended: 2, expected: ['foo', 'bar'] },
  ])(
    'returns the messages before the first still-in-flight one when message $extended of the group was extended (recorded test_fifo_group_visibility_extends_with_change_message_visibility, AWS 2025-11-19)',
    ({ extended, expected }) => {
      const w = world({ visibilityTimeoutSeconds: 1 });
      for (const body of ['foo', 'bar', 'baz']) w.send('1', body);
      const received = w.receive(5);
      w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(received[extended]), VisibilityTimeout: 4 });
      w.advance(2500);
      expect(w.bodies(w.receive(5))).toEqual(expected);
    },
  );

  it.each([1, 2])('returns nothing of a group with any message in flight under GroupLock.anyInFlight when message %i was extended (the documented reading)', (extended) => {
    const w = world({ visibilityTimeoutSeconds: 1 }, { groupLock: GroupLock.anyInFlight });
    for (const body of ['foo', 'bar', 'baz']) w.send('1', body);
    const received = w.receive(5);
    w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(received[extended]), VisibilityTimeout: 4 });
    w.advance(2500);
    expect(w.receive(5)).toEqual([]);
    w.advance(2000);
    expect(w.bodies(w.receive(5))).toEqual(['foo', 'bar', 'baz']);
  });

  it('returns a group in send order after visibility 0 was set in reverse order (a returning message keeps its place)', () => {
    const w = world();
    for (const body of ['m1', 'm2', 'm3']) w.send('g', body);
    const received = w.receive(10);
    for (const message of [...received].reverse()) {
      w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(message), VisibilityTimeout: 0 });
    }
    expect(w.bodies(w.receive(10))).toEqual(['m1', 'm2', 'm3']);
  });

  it('returns the head again, alone, when it was set visible while its successor stays in flight (recorded test_fifo_message_group_visibility_after_terminate_visibility_timeout)', () => {
    const w = world();
    w.send('group-1', 'g1-m1');
    w.send('group-1', 'g1-m2');
    w.send('group-2', 'g2-m1');
    const received = w.receive(2);
    expect(w.bodies(received)).toEqual(['g1-m1', 'g1-m2']);
    w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(received[0]), VisibilityTimeout: 0 });
    expect(w.bodies(w.receive(3))).toEqual(['g2-m1', 'g1-m1']);
  });
});

describe('SqsFifoModel short receives', () => {
  it('returns a shorter prefix of what is available now and then, each group still in order, the rest held behind it (ReceiveMessage: fewer messages might be returned)', () => {
    const draws: number[] = [];
    const w = world({}, { shortReceives: { chance: 0.5, random: () => draws.shift() ?? 0.99 } });
    for (const body of ['a1', 'a2', 'a3']) w.send('a', body);
    w.send('b', 'b1');
    // Short (0.1 < 0.5), of length 1 + floor(0.4 * 3) = 2.
    draws.push(0.1, 0.4);
    const first = w.receive(10);
    expect(w.bodies(first)).toEqual(['a1', 'a2']);
    // Not short: a3 stays behind the group's messages in flight; b1 comes.
    draws.push(0.9);
    expect(w.bodies(w.receive(10))).toEqual(['b1']);
    for (const message of first) w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(message) });
    expect(w.bodies(w.receive(10))).toEqual(['a3']);
  });

  it('never shortens a receive of one message, and never returns none when some are available', () => {
    const w = world({}, { shortReceives: { chance: 1, random: () => 0 } });
    w.send('a', 'a1');
    expect(w.bodies(w.receive(10))).toEqual(['a1']);
    w.send('b', 'b1');
    w.send('b', 'b2');
    expect(w.bodies(w.receive(10))).toEqual(['b1']);
  });
});

describe('SqsFifoModel visibility timeout', () => {
  it('makes messages visible again in order exactly when their visibility timeout ends (Visibility timeout; recorded test_fifo_messages_in_order_after_timeout)', () => {
    const w = world({ visibilityTimeoutSeconds: 30 });
    for (const body of ['m0', 'm1', 'm2']) w.send('1', body);
    expect(w.bodies(w.receive(10))).toEqual(['m0', 'm1', 'm2']);
    w.advance(29_999);
    expect(w.receive(10)).toEqual([]);
    w.advance(1);
    const again = w.receive(10, { MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
    expect(w.bodies(again)).toEqual(['m0', 'm1', 'm2']);
    expect(again.map((message) => message.Attributes?.ApproximateReceiveCount)).toEqual(['2', '2', '2']);
  });

  it('uses the request VisibilityTimeout for that receive only, and the queue default at the next receive (API reference ChangeMessageVisibility: a changed timeout is not saved)', () => {
    const w = world({ visibilityTimeoutSeconds: 30 });
    w.send('g', 'm');
    const [first] = w.receive(1, { VisibilityTimeout: 5 });
    w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(first), VisibilityTimeout: 10 });
    w.advance(10_000);
    expect(w.receive(1)).toHaveLength(1);
    w.advance(29_000);
    expect(w.receive(1)).toEqual([]);
    w.advance(1000);
    expect(w.receive(1)).toHaveLength(1);
  });

  it.each([
    { label: 'within 12 h of the receive', afterMs: HOUR_MS, timeoutSeconds: 10 * 3600, error: undefined },
    { label: 'ending exactly 12 h after the receive', afterMs: HOUR_MS, timeoutSeconds: 11 * 3600, error: undefined },
    { label: 'one second past 12 h after the receive', afterMs: HOUR_MS, timeoutSeconds: 11 * 3600 + 1, error: /beyond the limit \[43200 seconds\]/ },
    { label: '43200 s an hour after the receive', afterMs: HOUR_MS, timeoutSeconds: 43_200, error: /beyond the limit/ },
    { label: 'more than 43200 s', afterMs: 0, timeoutSeconds: 43_201, error: /Must be between 0 and 43200/ },
    { label: 'a negative timeout', afterMs: 0, timeoutSeconds: -1, error: /Must be between 0 and 43200/ },
  ])(
    'answers a visibility change $label as AWS does (Visibility timeout: 12 h from the ReceiveMessage request, extending does not reset it)',
    ({ afterMs, timeoutSeconds, error }) => {
      const w = world();
      w.send('g', 'm');
      const [message] = w.receive(1, { VisibilityTimeout: 2 * 3600 });
      w.advance(afterMs);
      const change = () => w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(message), VisibilityTimeout: timeoutSeconds });
      if (error === undefined) {
        change();
        const [view] = w.model.messages(w.url);
        expect(view?.visibleAt).toBe(w.clock.now() + timeoutSeconds * 1000);
      } else {
        expectSqsError(change, 'InvalidParameterValue', error);
        // A refused change changes nothing: the receive's 2 h still hold.
        expect(w.model.messages(w.url)[0]?.visibleAt).toBe(START_MS + 2 * HOUR_MS);
      }
    },
  );

  it('refuses an extension past 12 h even after repeated extensions (the 12 h count from the receive, not from the last change)', () => {
    const w = world();
    w.send('g', 'm');
    const [message] = w.receive(1);
    for (let hour = 0; hour < 11; hour += 1) {
      w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(message), VisibilityTimeout: 2 * 3600 });
      w.advance(HOUR_MS);
    }
    w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(message), VisibilityTimeout: 3600 });
    expectSqsError(() => w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handleOf(message), VisibilityTimeout: 3601 }), 'InvalidParameterValue', /beyond the limit/);
  });
});

describe('SqsFifoModel receipt handles', () => {
  type Case = { label: string; act: (w: ReturnType<typeof world>, handle: string) => void; name: string; message: RegExp };
  const deleteCases: Case[] = [
    { label: 'its visibility timeout ended', act: (w) => w.advance(30_000), name: 'InvalidParameterValue', message: /The receipt handle has expired\.$/ },
    {
      label: 'the message was received again',
      act: (w) => {
        w.advance(30_000);
        w.receive(1);
      },
      name: 'InvalidParameterValue',
      message: /The receipt handle has expired/,
    },
    {
      label: 'its visibility was set to 0',
      act: (w, handle) => w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handle, VisibilityTimeout: 0 }),
      name: 'InvalidParameterValue',
      message: /expired/,
    },
  ];

  it.each(deleteCases)(
    'refuses DeleteMessage with a handle after $label on a FIFO queue (recorded test_fifo_delete_after_visibility_timeout; aws/aws-sdk-js#1750)',
    ({ act, name, message }) => {
      const w = world();
      w.send('g', 'm');
      const handle = handleOf(w.receive(1)[0]);
      act(w, handle);
      expectSqsError(() => w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle }), name, message);
      expect(w.model.messages(w.url)).toHaveLength(1);
    },
  );

  it('deletes with the current handle, and again without error with the same handle (recorded test_delete_message_with_deleted_receipt_handle)', () => {
    const w = world();
    w.send('g', 'm');
    const handle = handleOf(w.receive(1)[0]);
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle });
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle });
    expect(w.model.messages(w.url)).toEqual([]);
    expect(w.model.deletedMessages(w.url).map((message) => message.body)).toEqual(['m']);
  });

  it('deletes after the original timeout when the visibility was extended (recorded test_fifo_delete_after_visibility_timeout_extended)', () => {
    const w = world({ visibilityTimeoutSeconds: 1 });
    w.send('g', 'foobar');
    const handle = handleOf(w.receive(1)[0]);
    w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handle, VisibilityTimeout: 5 });
    w.advance(1500);
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle });
    expect(w.receive(10)).toEqual([]);
  });

  it.each([
    { label: 'a handle SQS never issued', handle: () => 'garbage', name: 'ReceiptHandleIsInvalid', message: 'The input receipt handle "garbage" is not a valid receipt handle.' },
  ])('refuses DeleteMessage and ChangeMessageVisibility with $label (recorded test_delete_message_with_illegal_receipt_handle)', ({ handle, name, message }) => {
    const w = world();
    expectSqsError(() => w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle() }), name, message);
    expectSqsError(() => w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handle(), VisibilityTimeout: 5 }), name, message);
  });

  it('refuses a handle of another queue as ReceiptHandleIsInvalid (aws/aws-sdk-java-v2#3101)', () => {
    const w = world();
    w.model.sendMessage({ QueueUrl: w.dlqUrl, MessageBody: 'x', MessageGroupId: 'g', MessageDeduplicationId: 'x' });
    const handle = handleOf(w.model.receiveMessage({ QueueUrl: w.dlqUrl }).Messages?.[0]);
    expectSqsError(() => w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle }), 'ReceiptHandleIsInvalid', /not valid for this queue/);
  });

  it.each([
    { label: 'expired', act: (w: ReturnType<typeof world>) => w.advance(30_000), message: /The receipt handle has expired/ },
    {
      label: 'of a deleted message',
      act: (w: ReturnType<typeof world>, handle: string) => w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handle }),
      message: /Message does not exist or is not available for visibility timeout change/,
    },
  ])('refuses ChangeMessageVisibility with a handle $label as InvalidParameterValue (aws/aws-sdk-java#1628; recorded test_change_visibility_on_deleted_message_raises_invalid_parameter_value)', ({ act, message }) => {
    const w = world();
    w.send('g', 'm');
    const handle = handleOf(w.receive(1)[0]);
    act(w, handle);
    expectSqsError(() => w.model.changeMessageVisibility({ QueueUrl: w.url, ReceiptHandle: handle, VisibilityTimeout: 60 }), 'InvalidParameterValue', message);
    // The refused change did not hide the message again (floci-io/floci#902 describes that emulator bug).
    if (w.model.messages(w.url).length > 0) expect(w.model.messages(w.url)[0]?.state).toBe('visible');
  });

  it('answers each entry of a batch on its own: expired handles fail as ReceiptHandleIsInvalid, current ones succeed (smaskalik/sqsmover#54)', () => {
    const w = world({ visibilityTimeoutSeconds: 30 });
    w.send('a', 'a1');
    const stale = handleOf(w.receive(1)[0]);
    w.advance(30_000);
    w.send('b', 'b1');
    const received = w.receive(10);
    // A group that was served goes to the back of the rotation; a new group joins behind it.
    expect(w.bodies(received)).toEqual(['a1', 'b1']);
    const deleted = w.model.deleteMessageBatch({
      QueueUrl: w.url,
      Entries: [
        { Id: 'stale', ReceiptHandle: stale },
        { Id: 'fresh', ReceiptHandle: handleOf(received[1]) },
      ],
    });
    expect(deleted.Successful).toEqual([{ Id: 'fresh' }]);
    expect(deleted.Failed).toEqual([{ Id: 'stale', SenderFault: true, Code: 'ReceiptHandleIsInvalid', Message: 'The receipt handle has expired' }]);
    const changed = w.model.changeMessageVisibilityBatch({
      QueueUrl: w.url,
      Entries: [
        { Id: 'stale', ReceiptHandle: stale, VisibilityTimeout: 0 },
        { Id: 'current', ReceiptHandle: handleOf(received[0]), VisibilityTimeout: 0 },
        { Id: 'deleted', ReceiptHandle: handleOf(received[1]), VisibilityTimeout: 0 },
      ],
    });
    expect(changed.Successful).toEqual([{ Id: 'current' }]);
    expect(changed.Failed?.map((failure) => [failure.Id, failure.Code])).toEqual([
      ['stale', 'ReceiptHandleIsInvalid'],
      ['deleted', 'InvalidParameterValue'],
    ]);
  });
});

describe('SqsFifoModel message attributes', () => {
  it('counts every receive in ApproximateReceiveCount and keeps the first receive time (API reference ReceiveMessage)', () => {
    const w = world({ visibilityTimeoutSeconds: 10 });
    w.send('g', 'm');
    const counts: string[] = [];
    const firstReceives = new Set<string | undefined>();
    for (let round = 0; round < 3; round += 1) {
      const [message] = w.receive(1, { MessageSystemAttributeNames: ['All'] });
      counts.push(message?.Attributes?.ApproximateReceiveCount ?? '');
      firstReceives.add(message?.Attributes?.ApproximateFirstReceiveTimestamp);
      w.advance(10_000);
    }
    expect(counts).toEqual(['1', '2', '3']);
    expect([...firstReceives]).toEqual([String(START_MS)]);
  });

  it('returns the FIFO system attributes with All, and none unless asked (API reference Message.Attributes)', () => {
    const w = world();
    w.advance(5);
    const sent = w.send('group-7', 'hello', 'dedup-7');
    w.advance(10);
    const [plain] = w.receive(1, { VisibilityTimeout: 0 });
    expect(plain?.Attributes).toBeUndefined();
    expect(plain?.MD5OfBody).toBe('5d41402abc4b2a76b9719d911017c592');
    const [full] = w.receive(1, { MessageSystemAttributeNames: ['All'] });
    expect(full?.MessageId).toBe(sent.MessageId);
    expect(full?.Attributes).toMatchObject({
      MessageGroupId: 'group-7',
      MessageDeduplicationId: 'dedup-7',
      SequenceNumber: sent.SequenceNumber,
      SentTimestamp: String(START_MS + 5),
      ApproximateFirstReceiveTimestamp: String(START_MS + 15),
      ApproximateReceiveCount: '2',
    });
  });

  it('keeps message attributes and computes their MD5 as SQS does (recorded test_dead_letter_queue_message_attributes)', () => {
    const w = world();
    const sent = w.model.sendMessage({
      QueueUrl: w.url,
      MessageBody: 'message-1',
      MessageGroupId: 'g',
      MessageDeduplicationId: 'd',
      MessageAttributes: { MyAttribute: { DataType: 'String', StringValue: 'foobar' } },
    });
    expect(sent.MD5OfMessageBody).toBe('3d6b824fd8c1520e9a047d21fee6fb1f');
    expect(sent.MD5OfMessageAttributes).toBe('adb59cd4678ea5a855436b949cd07ab6');
    const [message] = w.model.receiveMessage({ QueueUrl: w.url, MessageAttributeNames: ['All'] }).Messages ?? [];
    expect(message?.MessageAttributes).toEqual({ MyAttribute: { DataType: 'String', StringValue: 'foobar' } });
  });

  it('increases SequenceNumber with every message of a group (recorded test_fifo_sequence_number_increases)', () => {
    const w = world();
    const numbers = ['m1', 'm2', 'm3'].map((body) => BigInt(w.send('group', body).SequenceNumber ?? '0'));
    expect(numbers[0]! < numbers[1]! && numbers[1]! < numbers[2]!).toBe(true);
  });
});

describe('SqsFifoModel redrive policy', () => {
  it('moves a message to the dead-letter queue at the receive that would exceed maxReceiveCount, keeping id, body, attributes, group and count (recorded test_dead_letter_queue_with_fifo_and_content_based_deduplication, test_dead_letter_queue_message_attributes)', () => {
    const w = world({ redrive: { deadLetterQueueName: 'dead-letters.fifo', maxReceiveCount: 2 } });
    const sent = w.model.sendMessage({
      QueueUrl: w.url,
      MessageBody: 'poison',
      MessageGroupId: 'g',
      MessageDeduplicationId: 'p',
      MessageAttributes: { reason: { DataType: 'String', StringValue: 'x' } },
    });
    w.send('g', 'next');
    expect(w.bodies(w.receive(1, { VisibilityTimeout: 0 }))).toEqual(['poison']);
    expect(w.bodies(w.receive(1, { VisibilityTimeout: 0 }))).toEqual(['poison']);
    // The third receive moves the head and returns its successor, still in order.
    expect(w.bodies(w.receive(1, { VisibilityTimeout: 0 }))).toEqual(['next']);
    expect(w.model.movedMessages(w.url).map((moved) => [moved.messageId, moved.receiveCount])).toEqual([[sent.MessageId, 2]]);
    const [dead] =
      w.model.receiveMessage({ QueueUrl: w.dlqUrl, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }).Messages ?? [];
    expect(dead).toMatchObject({ MessageId: sent.MessageId, Body: 'poison', MessageAttributes: { reason: { DataType: 'String', StringValue: 'x' } } });
    expect(dead?.Attributes).toMatchObject({ MessageGroupId: 'g', ApproximateReceiveCount: '3', DeadLetterQueueSourceArn: w.model.queueSettings(w.url).arn });
  });

  it('does not move a message that is in flight, however often it was received (the move happens at a receive)', () => {
    const w = world({ redrive: { deadLetterQueueName: 'dead-letters.fifo', maxReceiveCount: 1 } });
    w.send('g', 'm');
    w.receive(1);
    expect(w.model.messages(w.url).map((message) => message.state)).toEqual(['inFlight']);
    expect(w.model.messages(w.dlqUrl)).toEqual([]);
    w.advance(30_000);
    expect(w.receive(10)).toEqual([]);
    expect(w.model.messages(w.dlqUrl).map((message) => message.body)).toEqual(['m']);
  });
});

describe('SqsFifoModel retention', () => {
  const DAY_MS = 24 * HOUR_MS;

  it('deletes a message once it has been in the queue for the retention period, whatever its state, and names it (SetQueueAttributes MessageRetentionPeriod)', () => {
    const w = world({ messageRetentionSeconds: 60 });
    w.send('g', 'held');
    w.send('g', 'behind');
    w.send('h', 'never received');
    const [held] = w.receive(1, { VisibilityTimeout: 600 });
    w.advance(59_999);
    expect(w.model.messages(w.url).map((message) => message.body)).toEqual(['held', 'behind', 'never received']);
    w.advance(1);
    expect(w.model.messages(w.url)).toEqual([]);
    expect(w.receive(10)).toEqual([]);
    const expired = w.model.expiredMessages(w.url).map((message) => [message.body, message.receiveCount, message.expiredAt - message.enqueuedAt]);
    expect(expired).toHaveLength(3);
    expect(expired).toEqual(expect.arrayContaining([
      ['held', 1, 60_000],
      ['behind', 0, 60_000],
      ['never received', 0, 60_000],
    ]));
    // Its handle went with it: undocumented, refused as an expired handle.
    expectSqsError(() => w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(held) }), 'InvalidParameterValue');
    expect(w.model.getQueueAttributes({ QueueUrl: w.url, AttributeNames: ['MessageRetentionPeriod', 'ApproximateNumberOfMessages'] }).Attributes).toEqual({ MessageRetentionPeriod: '60', ApproximateNumberOfMessages: '0' });
  });

  it('keeps messages 4 days unless set, and refuses a retention outside 60 s to 14 days', () => {
    const w = world();
    w.send('g', 'm');
    w.advance(4 * DAY_MS - 1);
    expect(w.model.messages(w.url)).toHaveLength(1);
    w.advance(1);
    expect(w.model.messages(w.url)).toEqual([]);
    expect(() => w.model.createQueue({ name: 'short.fifo', visibilityTimeoutSeconds: 30, messageRetentionSeconds: 59 })).toThrow('messageRetentionSeconds');
    expect(() => w.model.createQueue({ name: 'long.fifo', visibilityTimeoutSeconds: 30, messageRetentionSeconds: 1_209_601 })).toThrow('messageRetentionSeconds');
  });

  it('restarts a message’s retention when the redrive policy moves it to a FIFO dead-letter queue (setting-up-dead-letter-queue-retention)', () => {
    const clock = { nowMs: START_MS, now: () => clock.nowMs };
    const model = new SqsFifoModel(clock);
    const retention = 14 * 86_400;
    const dlqUrl = model.createQueue({ name: 'dead-letters.fifo', visibilityTimeoutSeconds: 30, messageRetentionSeconds: retention });
    const url = model.createQueue({ name: 'delivery.fifo', visibilityTimeoutSeconds: 30, messageRetentionSeconds: retention, redrive: { deadLetterQueueName: 'dead-letters.fifo', maxReceiveCount: 1 } });
    model.sendMessage({ QueueUrl: url, MessageBody: 'crash loop', MessageGroupId: 'g', MessageDeduplicationId: 'c' });
    model.receiveMessage({ QueueUrl: url, VisibilityTimeout: 0 });
    // Ten days later the receive that would exceed maxReceiveCount moves it.
    clock.nowMs += 10 * DAY_MS;
    expect(model.receiveMessage({ QueueUrl: url }).Messages).toBeUndefined();
    // Fourteen days after its sending it is still in the dead-letter queue: its clock restarted at the move.
    clock.nowMs += 5 * DAY_MS;
    const [kept] = model.messages(dlqUrl);
    expect(kept).toMatchObject({ body: 'crash loop', sentAt: START_MS });
    const [received] = model.receiveMessage({ QueueUrl: dlqUrl, MessageSystemAttributeNames: ['SentTimestamp'], VisibilityTimeout: 0 }).Messages ?? [];
    expect(received?.Attributes?.SentTimestamp).toBe(String(START_MS));
    // Fourteen days after the move it is gone.
    clock.nowMs += 9 * DAY_MS;
    expect(model.messages(dlqUrl)).toEqual([]);
    expect(model.expiredMessages(dlqUrl).map((message) => [message.sentAt, message.enqueuedAt, message.expiredAt])).toEqual([[START_MS, START_MS + 10 * DAY_MS, START_MS + 24 * DAY_MS]]);
  });
});

describe('SqsFifoModel deduplication', () => {
  it('accepts a duplicate within 5 minutes with the first MessageId and does not enqueue it, even after the first was deleted (FIFO key terms; recorded test_fifo_deduplication_arrives_once_after_delete)', () => {
    const w = world();
    const first = w.send('group-1', '{"foo": "bar"}', 'dedup1');
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(w.receive(1)[0]) });
    w.advance(4 * 60_000);
    const duplicate = w.send('group-1', '{"foo": "bar"}', 'dedup1');
    expect(duplicate.MessageId).toBe(first.MessageId);
    expect(duplicate.SequenceNumber).toBe(first.SequenceNumber);
    expect(w.receive(10)).toEqual([]);
    w.advance(60_000);
    const later = w.send('group-1', '{"foo": "bar"}', 'dedup1');
    expect(later.MessageId).not.toBe(first.MessageId);
    expect(w.bodies(w.receive(10))).toEqual(['{"foo": "bar"}']);
  });

  it.each([
    { scope: 'queue' as const, expected: [] as string[] },
    { scope: 'messageGroup' as const, expected: ['Test'] },
  ])('deduplicates one id across groups only with DeduplicationScope=$scope (recorded test_sqs_fifo_same_dedup_id_different_message_groups; localstack/localstack#10274)', ({ scope, expected }) => {
    const w = world({ deduplicationScope: scope });
    w.send('group1', 'Test', 'same-dedup');
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(w.receive(1)[0]) });
    w.send('group2', 'Test', 'same-dedup');
    expect(w.bodies(w.receive(10))).toEqual(expected);
  });

  it('deduplicates by the body with content-based deduplication, an explicit id overriding it (API reference SendMessage)', () => {
    const w = world({ contentBasedDeduplication: true });
    w.model.sendMessage({ QueueUrl: w.url, MessageBody: 'same', MessageGroupId: 'g' });
    w.model.sendMessage({ QueueUrl: w.url, MessageBody: 'same', MessageGroupId: 'g' });
    w.model.sendMessage({ QueueUrl: w.url, MessageBody: 'same', MessageGroupId: 'g', MessageDeduplicationId: 'explicit' });
    expect(w.bodies(w.receive(10))).toEqual(['same', 'same']);
  });
});

describe('SqsFifoModel request validation', () => {
  const entry = (id: string, extra: Partial<SendMessageBatchRequestEntry> = {}): SendMessageBatchRequestEntry => ({
    Id: id,
    MessageBody: `body-${id}`,
    MessageGroupId: 'g',
    MessageDeduplicationId: `dedup-${id}`,
    ...extra,
  });

  it.each([
    { label: 'no entries', entries: [], name: 'EmptyBatchRequest', message: /at least one/ },
    { label: '11 entries', entries: Array.from({ length: 11 }, (_, index) => entry(`e${index}`)), name: 'TooManyEntriesInBatchRequest', message: 'Maximum number of entries per request are 10. You have sent 11.' },
    { label: 'repeated ids', entries: [entry('a'), entry('a')], name: 'BatchEntryIdsNotDistinct', message: /a repeated/ },
    { label: 'an id with a dot', entries: [entry('a.b')], name: 'InvalidBatchEntryId', message: /alphanumeric characters, hyphens and underscores/ },
    { label: 'an 81-character id', entries: [entry('x'.repeat(81))], name: 'InvalidBatchEntryId', message: /at most 80/ },
    { label: 'more than 1 MiB in all', entries: [entry('a', { MessageBody: 'a'.repeat(600_000) }), entry('b', { MessageBody: 'b'.repeat(600_000) })], name: 'BatchRequestTooLong', message: /cannot be longer than 1048576 bytes/ },
    { label: 'an entry without MessageGroupId', entries: [entry('a'), entry('b', { MessageGroupId: undefined })], name: 'InvalidParameterValue', message: 'The request must contain the parameter MessageGroupId.' },
    { label: 'an entry without deduplication id', entries: [entry('a', { MessageDeduplicationId: undefined })], name: 'InvalidParameterValue', message: /ContentBasedDeduplication enabled or MessageDeduplicationId/ },
    { label: 'a per-message delay', entries: [entry('a', { DelaySeconds: 2 })], name: 'InvalidParameterValue', message: /DelaySeconds is invalid/ },
  ])('refuses a whole SendMessageBatch with $label (Message quotas; recorded batch tests)', ({ entries, name, message }) => {
    const w = world();
    expectSqsError(() => w.model.sendMessageBatch({ QueueUrl: w.url, Entries: entries }), name, message);
    expect(w.model.messages(w.url)).toEqual([]);
  });

  it('fails single entries of a SendMessageBatch and enqueues the others in order (recorded test_send_batch_message_size, test_batch_send_with_invalid_char_should_succeed)', () => {
    const w = world({ maximumMessageBytes: 1024 });
    const output = w.model.sendMessageBatch({
      QueueUrl: w.url,
      Entries: [
        entry('ok1', { MessageBody: 'a'.repeat(1024) }),
        entry('big', { MessageBody: 'a'.repeat(1025) }),
        entry('control', { MessageBody: '\u0001' }),
        entry('group', { MessageGroupId: 'group 1' }),
        entry('ok2'),
      ],
    });
    expect(output.Successful?.map((success) => success.Id)).toEqual(['ok1', 'ok2']);
    expect(output.Failed?.map((failure) => [failure.Id, failure.Code, failure.SenderFault])).toEqual([
      ['big', 'InvalidParameterValue', true],
      ['control', 'InvalidMessageContents', true],
      ['group', 'InvalidParameterValue', true],
    ]);
    expect(output.Failed?.[0]?.Message).toBe('One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.');
    expect(w.model.messages(w.url).map((message) => message.body.length)).toEqual([1024, 'body-ok2'.length]);
  });

  it.each([
    { label: 'no MessageGroupId', input: { MessageGroupId: undefined }, name: 'MissingParameter', message: 'The request must contain the parameter MessageGroupId.' },
    { label: 'an empty body', input: { MessageBody: '' }, name: 'MissingParameter', message: 'The request must contain the parameter MessageBody.' },
    { label: 'DelaySeconds 2', input: { DelaySeconds: 2 }, name: 'InvalidParameterValue', message: /Value 2 for parameter DelaySeconds is invalid/ },
    { label: 'a group id with a space', input: { MessageGroupId: 'group 123' }, name: 'InvalidParameterValue', message: /MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length./ },
    { label: 'a 129-character group id', input: { MessageGroupId: 'a'.repeat(129) }, name: 'InvalidParameterValue', message: /MessageGroupId/ },
    { label: 'an empty deduplication id', input: { MessageDeduplicationId: '' }, name: 'InvalidParameterValue', message: /MessageDeduplicationId can only include/ },
    { label: 'a body of 1 MiB + 1 byte', input: { MessageBody: 'a'.repeat(1_048_577) }, name: 'InvalidParameterValue', message: 'One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.' },
    { label: 'an unknown queue', input: { QueueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/nope.fifo' }, name: 'QueueDoesNotExist', message: 'The specified queue does not exist.' },
  ])('refuses SendMessage with $label (Message quotas; API reference SendMessage; recorded tests)', ({ input, name, message }) => {
    const w = world();
    expectSqsError(() => w.model.sendMessage({ QueueUrl: w.url, MessageBody: 'b', MessageGroupId: 'g', MessageDeduplicationId: 'd', ...input }), name, message);
  });

  it.each([
    { label: 'a 128-character group id of punctuation', input: { MessageGroupId: `!"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~${'a'.repeat(96)}` } },
    { label: 'a body of exactly 1 MiB', input: { MessageBody: 'a'.repeat(1_048_576) } },
    { label: 'DelaySeconds 0', input: { DelaySeconds: 0 } },
  ])('accepts SendMessage with $label (Message quotas; recorded test_fifo_queue_send_message_with_zero_delay_defaults_to_queue_delay)', ({ input }) => {
    const w = world();
    expect(w.model.sendMessage({ QueueUrl: w.url, MessageBody: 'b', MessageGroupId: 'g', MessageDeduplicationId: 'd', ...input }).MessageId).toBeDefined();
  });

  it.each([
    { input: { MaxNumberOfMessages: 0 }, message: /MaxNumberOfMessages is invalid/ },
    { input: { MaxNumberOfMessages: 11 }, message: 'Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.' },
    { input: { WaitTimeSeconds: 21 }, message: 'Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.' },
    { input: { VisibilityTimeout: 43_201 }, message: /VisibilityTimeout is invalid/ },
  ])('refuses ReceiveMessage with $input (recorded test_send_receive_max_number_of_messages, test_send_receive_wait_time_seconds)', ({ input, message }) => {
    const w = world();
    expectSqsError(() => w.model.receiveMessage({ QueueUrl: w.url, ...input }), 'InvalidParameterValue', message);
  });
});

describe('SqsFifoModel queue attributes and delay', () => {
  it('counts held-back messages as visible and received ones as not visible (recorded test_fifo_approximate_number_of_messages_not_visible)', () => {
    const w = world({ visibilityTimeoutSeconds: 60 });
    for (const group of ['1', '1', '2', '2', '3', '3']) w.send(group, `m-${group}`);
    w.receive(1);
    w.receive(1);
    const attributes = () =>
      w.model.getQueueAttributes({
        QueueUrl: w.url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }).Attributes;
    expect(attributes()).toEqual({ ApproximateNumberOfMessages: '4', ApproximateNumberOfMessagesNotVisible: '2', ApproximateNumberOfMessagesDelayed: '0' });
    w.advance(60_000);
    expect(attributes()).toEqual({ ApproximateNumberOfMessages: '6', ApproximateNumberOfMessagesNotVisible: '0', ApproximateNumberOfMessagesDelayed: '0' });
    expect(w.model.getQueueAttributes({ QueueUrl: w.url, AttributeNames: ['QueueArn'] }).Attributes).toEqual({
      QueueArn: 'arn:aws:sqs:us-east-1:000000000000:delivery.fifo',
    });
  });

  it('reports the counters as of up to a minute ago with a counter lag: a message sent, deleted or moved within the lag may be missed or still counted (GetQueueAttributes)', () => {
    let draw = 0;
    const w = world({ visibilityTimeoutSeconds: 60 }, { counterLag: { maxMs: 60_000, random: () => draw } });
    const total = () => {
      const attributes = w.model.getQueueAttributes({ QueueUrl: w.url, AttributeNames: ['All'] }).Attributes ?? {};
      return Number(attributes.ApproximateNumberOfMessages) + Number(attributes.ApproximateNumberOfMessagesNotVisible) + Number(attributes.ApproximateNumberOfMessagesDelayed);
    };
    w.send('1', 'm-1');
    w.send('2', 'm-2');
    w.advance(30_000);
    draw = 0;
    expect(total()).toBe(2);
    // Sent 30 s ago: a read that reaches back 31 s or more does not see them yet.
    draw = 0.9;
    expect(total()).toBe(0);
    w.model.deleteMessage({ QueueUrl: w.url, ReceiptHandle: handleOf(w.receive(10)[0]) });
    w.advance(10_000);
    draw = 0;
    expect(total()).toBe(1);
    // Received and deleted 10 s ago, sent 40 s ago: a read as of 30 s ago still counts it, as it was
    // then (not yet received); the other, present then and now, in its state now (in flight).
    draw = 0.5;
    expect(w.model.getQueueAttributes({ QueueUrl: w.url, AttributeNames: ['All'] }).Attributes).toMatchObject({ ApproximateNumberOfMessages: '1', ApproximateNumberOfMessagesNotVisible: '1' });
    // A minute after the last change, every read agrees with the queue.
    w.advance(60_000);
    for (draw of [0, 0.5, 0.999]) expect(total()).toBe(1);
  });

  it('delays every message by the queue delay, then delivers the group in order (recorded test_fifo_queue_send_message_with_delay_on_queue_works)', () => {
    const w = world({ delaySeconds: 2 });
    for (const body of ['message-1', 'message-2', 'message-3']) w.send('1', body);
    expect(w.receive(10)).toEqual([]);
    expect(w.model.messages(w.url).map((message) => message.state)).toEqual(['delayed', 'delayed', 'delayed']);
    w.advance(2000);
    expect(w.bodies(w.receive(3))).toEqual(['message-1', 'message-2', 'message-3']);
  });
});

describe('createModelSqsClient', () => {
  it('runs SDK commands against the model through the gate, named after the command class', async () => {
    const w = world();
    const calls: string[] = [];
    const client = createModelSqsClient(w.model, async (call, apply) => {
      calls.push(call.operation);
      return apply();
    });
    await client.send(new SendMessageCommand({ QueueUrl: w.url, MessageBody: 'b', MessageGroupId: 'g', MessageDeduplicationId: 'd' }));
    await client.send(new SendMessageBatchCommand({ QueueUrl: w.url, Entries: [{ Id: '0', MessageBody: 'c', MessageGroupId: 'g', MessageDeduplicationId: 'e' }] }));
    const received = await client.send(new ReceiveMessageCommand({ QueueUrl: w.url, MaxNumberOfMessages: 10 }));
    expect(received.Messages?.map((message) => message.Body)).toEqual(['b', 'c']);
    await client.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: w.url, Entries: [{ Id: '0', ReceiptHandle: handleOf(received.Messages?.[1]), VisibilityTimeout: 0 }] }));
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: w.url, ReceiptHandle: handleOf(received.Messages?.[0]), VisibilityTimeout: 1 }));
    await client.send(new DeleteMessageCommand({ QueueUrl: w.url, ReceiptHandle: handleOf(received.Messages?.[0]) }));
    const attributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: w.url, AttributeNames: ['ApproximateNumberOfMessages'] }));
    expect(attributes.Attributes).toEqual({ ApproximateNumberOfMessages: '1' });
    expect(calls).toEqual(['SendMessage', 'SendMessageBatch', 'ReceiveMessage', 'ChangeMessageVisibilityBatch', 'ChangeMessageVisibility', 'DeleteMessage', 'GetQueueAttributes']);
  });

  it('rejects with the SDK error SQS would produce when the model refuses a call', async () => {
    const w = world();
    const client = createModelSqsClient(w.model);
    await expect(client.send(new DeleteMessageCommand({ QueueUrl: w.url, ReceiptHandle: 'garbage' }))).rejects.toMatchObject({
      name: 'ReceiptHandleIsInvalid',
      $fault: 'client',
    });
  });
});

/**
 * The backstop import on the local stack: a message SQS's own redrive moved to the dead-letter
 * queue (a crash loop) is imported into the store of dead letters, listed, and redriven whole.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { namedEventId } from '../../lambda/core/fan-out-id.js';
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, queuedFieldsOf, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useTestStack } from './support/stack-and-receiver.js';

describe('local stack backstop import', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('backstop');
  // No consumer: the test moves the message to the dead-letter queue itself, as SQS's redrive would.
  const stack = useTestStack({}, { isConsumerEnabled: false });

  it('imports what the backstop moved, lists it, and leaves the queue empty', async () => {
    const key = `${prefix}-a`;
    await subscribe(stack().url, key, 'http://127.0.0.1:9/unused');
    const event = makeEvent(key, `${key}-1`);
    await postEvents(stack().url, [event]);
    const { sqs } = stack().clients;
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: stack().resources.deliveryQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'] }),
    );
    const [moved] = Messages;
    expect(moved).toBeDefined();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: stack().resources.deadLetterQueueUrl,
        MessageBody: moved?.Body,
        MessageGroupId: moved?.Attributes?.MessageGroupId,
        MessageDeduplicationId: moved?.MessageId,
      }),
    );
    await sqs.send(new DeleteMessageCommand({ QueueUrl: stack().resources.deliveryQueueUrl, ReceiptHandle: moved?.ReceiptHandle }));

    const steps: unknown[] = [];
    await waitFor('the import done', async () => {
      const answer = await call(stack().url, 'POST', '/v1/dead-letters/import');
      expect(answer.status).toBe(200);
      steps.push(answer.body);
      return (answer.body as { is_done: boolean }).is_done;
    });
    expect(steps.flatMap((step) => (step as { imported: unknown[] }).imported)).toEqual([{ event_id: event.event_id, subscription_id: key, sequence: null }]);
    expect(await stack().receiveDeadLetters()).toEqual([]);

    const listed = await call(stack().url, 'GET', `/v1/dead-letters?subscription_id=${encodeURIComponent(key)}`);
    expect(listed.body).toMatchObject({ items: [{ event_id: event.event_id, sequence: null, attempts: 0 }], next_cursor: null });
    const [item] = await stack().deadLetterItems(key);
    expect(JSON.parse(String(item?.queued_event))).toMatchObject({ event: { ...queuedFieldsOf(event), event_id: namedEventId(event.event_id, event.tenant_id, event.subscription_id) }, named: { event_id: event.event_id } });
    expect(await stack().eventItem(event.event_id)).toMatchObject({ status: 'dead_lettered' });
  });
});

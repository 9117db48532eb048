/**
 * `ordered-webhooks import-backstop` and `dead-letters` against the local stack's API: what SQS's
 * backstop moved to the dead-letter queue is imported and then listed, and a record that is no
 * event is left there and makes the command exit 3, as often as it is run.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { runCommand } from '../cli/support/run-cli.js';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { useTestStack } from './support/stack-and-receiver.js';

describe('CLI import-backstop on the local stack', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('cli-import');
  // No consumer: the test moves messages to the dead-letter queue itself, as SQS's redrive would.
  const stack = useTestStack({}, { isConsumerEnabled: false });

  /** Moves `count` messages of the delivery queue to the backstop queue, as SQS's redrive policy does. */
  async function moveToBackstop(count: number): Promise<void> {
    const { sqs } = stack().clients;
    let moved = 0;
    await waitFor(`${count} messages moved to the backstop queue`, async () => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: stack().resources.deliveryQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'] }),
      );
      for (const message of Messages) {
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: stack().resources.deadLetterQueueUrl,
            MessageBody: message.Body,
            MessageGroupId: message.Attributes?.MessageGroupId,
            MessageDeduplicationId: message.MessageId,
          }),
        );
        await sqs.send(new DeleteMessageCommand({ QueueUrl: stack().resources.deliveryQueueUrl, ReceiptHandle: message.ReceiptHandle }));
        moved += 1;
      }
      return moved >= count;
    });
  }

  it('imports the events, lists them with dead-letters, and exits 3 for a record that is no event, every time', async () => {
    const key = `${prefix}-a`;
    await subscribe(stack().url, key, 'http://127.0.0.1:9/unused');
    const events = [makeEvent(key, `${key}-1`), makeEvent(key, `${key}-2`)];
    await postEvents(stack().url, events);
    // One message: a request's events of one key travel together, and are imported one by one.
    await moveToBackstop(1);
    await stack().clients.sqs.send(
      new SendMessageCommand({ QueueUrl: stack().resources.deadLetterQueueUrl, MessageBody: 'not an event', MessageGroupId: `${prefix}-junk`, MessageDeduplicationId: `${prefix}-junk` }),
    );

    const run = await runCommand(['import-backstop', '--url', stack().url, '--json']);
    const again = await runCommand(['import-backstop', '--url', stack().url]);
    const listed = await runCommand(['dead-letters', '--url', stack().url, '--subscription', key]);

    expect(run.exitCode, run.stderr).toBe(ExitCode.attentionNeeded);
    expect(JSON.parse(run.stdout)).toEqual({
      imported: 2,
      unreadable: 1,
      is_done: true,
      events: events.map((event) => ({ event_id: event.event_id, subscription_id: key, sequence: null })),
    });
    expect(run.stderr).toContain('1 record(s) in the backstop queue are no event and were left there');
    expect(again.exitCode, again.stderr).toBe(ExitCode.attentionNeeded);
    expect(again.stdout).toBe('The backstop queue held no event to import; 1 unreadable record(s) left in it.\n');
    expect(listed.exitCode, listed.stderr).toBe(ExitCode.ok);
    expect(listed.stdout.trimEnd().split('\n').slice(1).map((line) => line.split(/\s{2,}/).slice(0, 3))).toEqual(
      events.map((event) => [event.event_id, '-', '0']),
    );
    expect((await stack().receiveDeadLetters()).map((message) => message.Body)).toEqual(['not an event']);
  });
});

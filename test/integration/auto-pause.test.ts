/**
 * The automatic pause on the local stack (AUTO_PAUSE_AFTER_SECONDS): a subscription whose key has
 * been failing that long is paused instead of having its head given up. Nothing is dead-lettered,
 * one notice goes to the notice topic (read here through a queue subscribed to it, as a user
 * would) and one line to the log, and a resume delivers everything in order, the head on a new
 * round of attempts.
 */
import { SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, uniquePrefix, type TestEvent } from './support/api.js';
import { lagRowOf } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const MAX_DELIVERY_ATTEMPTS = 3;

describe('local stack: the automatic pause', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('auto-pause');
  /** Subscriptions whose endpoint answers 503 while listed. */
  const down = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: String(MAX_DELIVERY_ATTEMPTS), RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1', AUTO_PAUSE_AFTER_SECONDS: '1', LOG_LEVEL: 'INFO' },
    { respond: (webhook) => (down.has(webhook.path.slice(1)) ? { statusCode: 503 } : undefined) },
  );
  let noticeQueueUrl = '';

  beforeAll(async () => {
    // A queue subscribed to the notice topic, as an operator would subscribe one (or an e-mail address).
    const { sqs, sns } = stack().clients;
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-notices` }));
    noticeQueueUrl = QueueUrl ?? '';
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: noticeQueueUrl, AttributeNames: ['QueueArn'] }));
    await sns.send(new SubscribeCommand({ TopicArn: stack().resources.noticeTopic, Protocol: 'sqs', Endpoint: Attributes?.QueueArn, Attributes: { RawMessageDelivery: 'true' } }));
  });

  /** The notices published since the last call, each read once. */
  const receiveNotices = async (): Promise<Record<string, unknown>[]> => {
    const { sqs } = stack().clients;
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: noticeQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    for (const message of Messages) await sqs.send(new DeleteMessageCommand({ QueueUrl: noticeQueueUrl, ReceiptHandle: message.ReceiptHandle }));
    return Messages.map((message) => JSON.parse(message.Body ?? 'null') as Record<string, unknown>);
  };
  const subscribed = async (id: string): Promise<string> => {
    const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: 'tenant-it', url: receiver().endpointFor(id) });
    expect(answer.status).toBe(201);
    const { secret } = answer.body as { secret: string };
    receiver().setSecret(id, secret);
    return secret;
  };
  const subscription = async (id: string) => (await call(stack().url, 'GET', `/v1/subscriptions/${encodeURIComponent(id)}`)).body as { is_paused: boolean; paused_at: string | null; pause_reason: string | null };
  const events = (id: string, from: number, to: number): TestEvent[] => Array.from({ length: to - from + 1 }, (_, index) => makeEvent(id, `${id}-${from + index}`));

  it('pauses a subscription whose endpoint keeps failing instead of dead-lettering, sends one notice, and delivers everything in order on resume', async () => {
    const id = `${prefix}-a`;
    const secret = await subscribed(id);
    down.add(id);
    const [group] = (await postEvents(stack().url, events(id, 1, 4))).map((result) => result.message_group_id);

    // The head's last attempt came a second or more after its first failure: paused, not given up.
    const paused = await waitFor('the subscription paused', async () => {
      const state = await subscription(id);
      return state.is_paused ? state : undefined;
    });
    expect(paused.pause_reason).toMatch(/^auto: failing since \S+; 3 of 3 attempts failed; last: HTTP 503$/);
    const held = await waitFor('its group held', async () => {
      const row = await lagRowOf(stack(), group ?? '');
      return row?.is_paused === true ? row : undefined;
    });
    expect(held).toMatchObject({ held_subscription_id: id, depth: 4, dead_lettered: 0, pause_reason: paused.pause_reason });
    expect(receiver().attemptsOf(`${id}-1`)).toHaveLength(MAX_DELIVERY_ATTEMPTS);
    expect(events(id, 2, 4).flatMap((event) => receiver().attemptsOf(event.event_id))).toEqual([]);
    expect(await stack().deadLetterItems(id)).toEqual([]);

    const [notice, ...more] = await waitFor('the notice published', async () => {
      const notices = await receiveNotices();
      return notices.length > 0 ? notices : undefined;
    });
    expect(more).toEqual([]);
    expect(notice).toEqual({
      notice: 'subscription_auto_paused',
      subscription_id: id,
      message_group_id: group,
      event_id: `${id}-1`,
      attempts: MAX_DELIVERY_ATTEMPTS,
      failing_since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      paused_at: paused.paused_at,
      pause_reason: paused.pause_reason,
    });
    const lines = stack().logs.filter((line) => line.includes('subscription paused automatically'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(id);
    // Ids and reasons only: no payload in the line.
    expect(lines[0]).not.toContain('"payload"');

    // Resumed while the endpoint still fails: the head gets a new round, then the pause comes back, still no dead letter.
    expect((await call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/resume`)).body).toMatchObject({ is_paused: false, released_groups: 1 });
    await waitFor('paused again after a second round', async () => (await subscription(id)).is_paused && receiver().attemptsOf(`${id}-1`).length === 2 * MAX_DELIVERY_ATTEMPTS);
    expect(await stack().deadLetterItems(id)).toEqual([]);
    expect(await waitFor('a second notice', async () => {
      const notices = await receiveNotices();
      return notices.length > 0 ? notices : undefined;
    })).toEqual([expect.objectContaining({ subscription_id: id, event_id: `${id}-1`, attempts: 2 * MAX_DELIVERY_ATTEMPTS })]);

    // Fixed, then resumed: all four in order, with the sequences they would have had, verifiable by the receiver.
    down.delete(id);
    await call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/resume`);
    await waitFor('all four delivered', () => receiver().deliveredTo(id).length === 4);
    const delivered = receiver().deliveredTo(id);
    expect(delivered.map((attempt) => [attempt.webhookId, attempt.sequence])).toEqual(events(id, 1, 4).map((event, index) => [event.event_id, index + 1]));
    for (const attempt of delivered) {
      expect(attempt.signature).toBe(SignatureCheck.verified);
      expect(() => new Webhook(secret).verify(attempt.body, attempt.headers)).not.toThrow();
    }
    expect(receiver().attemptsOf(`${id}-1`)).toHaveLength(2 * MAX_DELIVERY_ATTEMPTS + 1);
    expect(await stack().deadLetterItems(id)).toEqual([]);
    expect(await stack().eventItem(`${id}-1`)).toMatchObject({ status: 'delivered', attempts: 2 * MAX_DELIVERY_ATTEMPTS + 1 });
  });

  it('leaves other subscriptions flowing while one is paused automatically', async () => {
    const failing = `${prefix}-failing`;
    const healthy = `${prefix}-healthy`;
    await subscribed(failing);
    await subscribed(healthy);
    down.add(failing);
    await postEvents(stack().url, [...events(failing, 1, 2), ...events(healthy, 1, 3)]);
    await waitFor('the failing one paused', async () => (await subscription(failing)).is_paused);
    await waitFor('the healthy one delivered', () => receiver().deliveredTo(healthy).length === 3);
    expect((await subscription(healthy)).is_paused).toBe(false);
    expect(await stack().deadLetterItems(failing)).toEqual([]);
  });
});

/**
 * The acceptance test on the local stack, through the HTTP API alone: fifteen events of
 * one key, all dead-lettered by a receiver that refuses everything, redriven, all dead-lettered
 * again, and redriven once more to a receiver that accepts: each is delivered once, in sequence
 * order, with its original webhook-id, webhook-sequence and payload, marked as a redelivery.
 * Meanwhile the local queue hands out several messages of the key's group per receive, as SQS
 * does, so the redrive and the consumer's successor rules are exercised on real FIFO batches.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeadLetterRow } from '../../lambda/core/dead-letter.js';
import { call, postEvents, subscribe, uniquePrefix, type TestEvent } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck, type Attempt } from './support/receiver.js';
import { redriveUntilDone } from './support/operator-api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** Events of the one key: more than a receive's 10, so the group comes in more than one batch. */
const EVENT_COUNT = 15;
/** Attempts before an event is dead-lettered: two, to keep the test short. */
const MAX_DELIVERY_ATTEMPTS = 2;
/** A small page, so that fifteen dead letters take four pages. */
const PAGE_LIMIT = 4;

interface DeadLettersPage {
  readonly items: DeadLetterRow[];
  readonly next_cursor: string | null;
}

/** A subscription's dead letters, every page, and the size of each page. */
interface DeadLetterListing {
  readonly items: DeadLetterRow[];
  readonly pageSizes: number[];
}

/** The sequences 1..n. */
const sequencesUpTo = (n: number): number[] => Array.from({ length: n }, (_, index) => index + 1);

describe('local stack redrive, twice', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('redrive-twice');
  let isRefusing = true;
  /**
   * Holds the refusals of redriven events until the redrive has answered. The redrive sends an
   * event before it removes its dead letter; a consumer fast enough to give the event up again in
   * between leaves the dead letter written back in its place, which the redrive then does not
   * list as redriven (lambda/core/redrive.ts, RemoveOutcome.replaced). This test is about the
   * answer listing every event, so it takes that race out.
   */
  let redriveAnswered: Promise<void> = Promise.resolve();
  /** The message group of every message of the delivery queue, per receive of the event source mapping. */
  const receivedGroups: string[][] = [];
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: String(MAX_DELIVERY_ATTEMPTS), RETRY_BASE_SECONDS: '0' },
    {
      respond: async (webhook) => {
        if (webhook.headers['webhook-redelivery'] === 'true') await redriveAnswered;
        return isRefusing ? { statusCode: 500 } : undefined;
      },
    },
  );

  beforeAll(async () => {
    // Watches what the delivery queue hands out, on the client the stack's pollers receive with.
    stack().clients.sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const input = args.input as { readonly QueueUrl?: string };
        if (context.commandName === 'ReceiveMessageCommand' && input.QueueUrl === stack().resources.deliveryQueueUrl) {
          const { Messages = [] } = result.output as { readonly Messages?: Message[] };
          if (Messages.length > 0) receivedGroups.push(Messages.map((message) => message.Attributes?.MessageGroupId ?? ''));
        }
        return result;
      },
      { step: 'initialize', name: 'recordDeliveryQueueReceives' },
    );
  });

  /** Every page of the subscription's dead letters, `PAGE_LIMIT` at a time, following `next_cursor`. */
  async function listDeadLetters(subscriptionId: string): Promise<DeadLetterListing> {
    const items: DeadLetterRow[] = [];
    const pageSizes: number[] = [];
    const followed = new Set<string>();
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ subscription_id: subscriptionId, limit: String(PAGE_LIMIT), ...(cursor === null ? {} : { cursor }) });
      const answer = await call(stack().url, 'GET', `/v1/dead-letters?${query.toString()}`);
      expect(answer.status).toBe(200);
      const page = answer.body as DeadLettersPage;
      items.push(...page.items);
      pageSizes.push(page.items.length);
      cursor = page.next_cursor;
      if (cursor !== null && followed.has(cursor)) throw new Error(`GET /v1/dead-letters gave the cursor ${cursor} twice`);
      if (cursor !== null) followed.add(cursor);
    } while (cursor !== null);
    return { items, pageSizes };
  }

  /** Waits until all the events are dead letters, listed with their sequences in order, in full pages. */
  async function waitForAllDeadLettered(subscriptionId: string, events: readonly TestEvent[], what: string): Promise<DeadLetterListing> {
    const listing = await waitFor(what, async () => {
      const current = await listDeadLetters(subscriptionId);
      return current.items.length === events.length ? current : undefined;
    });
    expect(listing.pageSizes).toEqual([4, 4, 4, 3]);
    expect(listing.items.map((item) => [item.event_id, item.sequence])).toEqual(events.map((event, index) => [event.event_id, index + 1]));
    expect(listing.items.every((item) => item.attempts === MAX_DELIVERY_ATTEMPTS && item.subscription_id === subscriptionId)).toBe(true);
    return listing;
  }

  /** The attempts of a round, as [webhook-id, webhook-sequence, webhook-redelivery]. */
  const describeAttempts = (attempts: readonly Attempt[]): [string | undefined, number | undefined, string | undefined][] =>
    attempts.map((attempt) => [attempt.webhookId, attempt.sequence, attempt.headers['webhook-redelivery']]);

  /** What a round of refused attempts must look like: each event twice, its sequence kept, one key in order. */
  const refusedRound = (events: readonly TestEvent[], redelivery: string | undefined): [string, number, string | undefined][] =>
    events.flatMap((event, index) => Array.from({ length: MAX_DELIVERY_ATTEMPTS }, (): [string, number, string | undefined] => [event.event_id, index + 1, redelivery]));

  it('delivers 15 events of one key once each, in order, with their ids, sequences and payloads, when redriven after failing twice', async () => {
    const key = `${prefix}-key`;
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events: TestEvent[] = sequencesUpTo(EVENT_COUNT).map((n) => ({
      event_id: `${key}-${n}`,
      tenant_id: 'tenant-it',
      subscription_id: key,
      type: 'order.updated',
      payload: { order: `${key}-order-${n}`, position: n, lines: Array.from({ length: n }, (_, line) => ({ sku: `sku-${n}-${line}`, quantity: line + 1 })) },
    }));
    const results = await postEvents(stack().url, events);
    expect(results.map((result) => result.status)).toEqual(Array(EVENT_COUNT).fill('accepted'));
    const group = results[0]?.message_group_id;

    // Round 1: the receiver refuses everything; each event is given up after its attempts.
    const first = await waitForAllDeadLettered(key, events, 'all 15 events dead-lettered');
    expect(first.items.every((item) => item.message_group_id === group)).toBe(true);
    await waitFor('no attempt of the key in flight', () => receiver().attempts().every((attempt) => attempt.statusCode !== undefined));
    const roundOne = receiver().attempts();
    expect(describeAttempts(roundOne)).toEqual(refusedRound(events, undefined));

    // Round 2: redriven, still refused, all dead-lettered again with the same sequences.
    let answered: () => void = () => undefined;
    redriveAnswered = new Promise((resolve) => {
      answered = resolve;
    });
    const firstRedrive = await redriveUntilDone(stack(), key).finally(answered);
    expect(firstRedrive).toEqual(events.map((event, index) => ({ event_id: event.event_id, sequence: index + 1 })));
    await waitFor('the redriven events attempted and refused', () => receiver().attempts().length >= 2 * roundOne.length);
    await waitForAllDeadLettered(key, events, 'all 15 redriven events dead-lettered again');
    const roundTwo = receiver().attempts().slice(roundOne.length);
    expect(describeAttempts(roundTwo)).toEqual(refusedRound(events, 'true'));

    // Round 3: the receiver accepts; the second redrive delivers every event, once, in order.
    isRefusing = false;
    const secondRedrive = await redriveUntilDone(stack(), key);
    expect(secondRedrive).toEqual(firstRedrive);
    await waitFor('all 15 events delivered', () => receiver().deliveredTo(key).length === EVENT_COUNT);
    const delivered = receiver().deliveredTo(key);
    expect(describeAttempts(delivered)).toEqual(events.map((event, index) => [event.event_id, index + 1, 'true']));
    expect(delivered.map((attempt) => (JSON.parse(attempt.body) as { data: unknown }).data)).toEqual(events.map((event) => event.payload));
    expect(delivered.every((attempt) => attempt.signature === SignatureCheck.verified)).toBe(true);
    await waitFor('the group settled: nothing pending or dead-lettered in the lag view', async () => {
      const lag = await call(stack().url, 'GET', '/v1/lag?limit=1000');
      return (lag.body as { groups: { message_group_id: string }[] }).groups.every((row) => row.message_group_id !== group);
    });
    expect(await listDeadLetters(key)).toEqual({ items: [], pageSizes: [0] });
    expect(receiver().attempts()).toHaveLength(roundOne.length + roundTwo.length + EVENT_COUNT);

    // The queue handed the group out several messages at a time, as SQS's FIFO receive does.
    // (Ingest and the redrive send a key's events one SendMessageBatch after another, so a receive
    // may come before the rest are sent; after each refused head the group is handed out again.)
    const perReceive = receivedGroups.map((groups) => groups.filter((received) => received === group).length);
    expect(perReceive.filter((count) => count >= 2).length, `messages of the group per receive: ${perReceive.join(', ')}`).toBeGreaterThanOrEqual(3);
    expect(Math.max(...perReceive)).toBeLessThanOrEqual(10);
  });
});

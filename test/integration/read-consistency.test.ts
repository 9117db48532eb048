/**
 * Eventually consistent reads, against a replica that lags: every eventually consistent read of a
 * chosen table answers as if the item had never been written (dynalite itself is always
 * consistent). What the README's guarantees promise must hold all the same: a subscription
 * created a moment ago is neither refused by ingest nor dead-lettered by the consumer. (Ingest
 * reads no event record: its conditional write answers a resend `duplicate`, see idempotency.)
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const readInputSchema = z.looseObject({
  TableName: z.string().optional(),
  ConsistentRead: z.boolean().optional(),
  RequestItems: z.record(z.string(), z.looseObject({ ConsistentRead: z.boolean().optional() })).optional(),
});

/** A lagging replica in front of some tables. */
interface LaggingReplica {
  /** How many stale answers it gave, per table. */
  readonly staleAnswers: Map<string, number>;
  /** Takes it away: reads are answered by dynalite alone again. */
  readonly remove: () => void;
}

const LAGGING_REPLICA = 'lagEventuallyConsistentReads';

/**
 * Makes every eventually consistent GetItem and BatchGetItem of `tables` find nothing, as a
 * replica that has not yet seen any write would answer; strongly consistent reads are untouched.
 */
function lagEventuallyConsistentReads(dynamo: DynamoDBDocumentClient, tables: readonly string[]): LaggingReplica {
  const stale = new Map<string, number>();
  const count = (table: string): void => {
    stale.set(table, (stale.get(table) ?? 0) + 1);
  };
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = readInputSchema.safeParse(args.input);
      if (!input.success) return result;
      const { TableName: table, ConsistentRead: isConsistent, RequestItems: requestItems = {} } = input.data;
      if (context.commandName === 'GetItemCommand' && table !== undefined && tables.includes(table) && isConsistent !== true) {
        count(table);
        return { ...result, output: { $metadata: result.output.$metadata } };
      }
      if (context.commandName === 'BatchGetItemCommand') {
        const lagging = Object.entries(requestItems).filter(([name, request]) => tables.includes(name) && request.ConsistentRead !== true);
        if (lagging.length === 0) return result;
        lagging.forEach(([name]) => count(name));
        const responses: unknown = Reflect.get(result.output, 'Responses');
        const kept = Object.fromEntries(Object.entries(z.record(z.string(), z.unknown()).catch({}).parse(responses)).filter(([name]) => !lagging.some(([laggingName]) => laggingName === name)));
        return { ...result, output: { ...result.output, Responses: kept } };
      }
      return result;
    },
    { step: 'initialize', name: LAGGING_REPLICA },
  );
  return { staleAnswers: stale, remove: () => dynamo.middlewareStack.remove(LAGGING_REPLICA) };
}

describe('eventually consistent reads', { timeout: 60_000 }, () => {
  const { stack, receiver } = useStackAndReceiver();
  let replica: LaggingReplica | undefined;
  afterEach(() => {
    replica?.remove();
    replica = undefined;
  });

  it('accepts and delivers events of a subscription created a moment ago when eventually consistent reads miss it', async () => {
    replica = lagEventuallyConsistentReads(stack().clients.dynamo, [stack().resources.subscriptionsTable]);
    const key = uniquePrefix('just-created');
    receiver().setSecret(key, await subscribe(stack().url, key, receiver().endpointFor(key)));
    const events = [1, 2].map((n) => makeEvent(key, `${key}-evt-${n}`));

    // Ingest's existence check: at once, not refused as unknown_subscription.
    expect((await postEvents(stack().url, events)).map((result) => result.status)).toEqual(['accepted', 'accepted']);
    // The consumer's read of the target: delivered, not dead-lettered as having no subscription.
    const deliveries = await waitFor('both events delivered', () => receiver().deliveredTo(key).length >= 2 && receiver().deliveredTo(key));
    expect(deliveries.map((delivery) => [delivery.webhookId, delivery.sequence, delivery.signature])).toEqual([
      [events[0]?.event_id, 1, SignatureCheck.verified],
      [events[1]?.event_id, 2, SignatureCheck.verified],
    ]);
    expect(await stack().deadLetterItems(key)).toEqual([]);
    // Ingest read eventually consistent first and got the lagging replica's answer; the consumer
    // reads its subscription strongly consistent (a pause answered must be seen), so never stale.
    expect(replica.staleAnswers.get(stack().resources.subscriptionsTable)).toBe(1);
  });
});

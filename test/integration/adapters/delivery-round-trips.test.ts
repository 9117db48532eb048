/**
 * The state round trips on the delivery path, counted, not timed: the consumer handler with the
 * real Events, OrderingKeys, Subscriptions and Groups adapters on dynalite, every DynamoDB call
 * logged by a middleware on the client with when it started and ended relative to the POSTs.
 * Calls that overlap are one round trip; a call that starts after another ended is a second.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventStore } from '../../../lambda/adapters/event-store.js';
import { createOrderingKeyStore } from '../../../lambda/adapters/ordering-key-store.js';
import { createSubscriptionStore, toDeliveryTarget } from '../../../lambda/adapters/subscription-store.js';
import type { SQSRecord } from 'aws-lambda';
import { createGroupStore } from '../../../lambda/adapters/group-store.js';
import { AttemptResultKind, queuePositionOf, type DeliveryPorts } from '../../../lambda/core/delivery.js';
import { createConsumerHandler } from '../../../lambda/handlers/consumer.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { encodeQueuedEvent } from '../../../lambda/core/event.js';
import type { RetryPolicy } from '../../../lambda/core/retry-policy.js';
import { messageGroupIdFor } from '../../../lambda/core/routing.js';
import { TABLES } from '../../../lambda/resources.js';
import { startDynaliteTables, type DynaliteTables } from '../support/dynalite.js';

let tables: DynaliteTables;

/** One entry per DynamoDB call and per POST, in the order things happened. */
interface Step {
  readonly what: string;
  readonly start: number;
  end: number;
}
const steps: Step[] = [];
let clock = 0;

beforeAll(async () => {
  tables = await startDynaliteTables();
  tables.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { TableName?: string; RequestItems?: Record<string, unknown> };
      const table = input.TableName ?? Object.keys(input.RequestItems ?? {}).join(',');
      const step: Step = { what: `${(context.commandName ?? '').replace(/Command$/, '')} ${table}`, start: (clock += 1), end: Number.POSITIVE_INFINITY };
      steps.push(step);
      try {
        return await next(args);
      } finally {
        step.end = clock += 1;
      }
    },
    { step: 'initialize', name: 'countDeliveryPathCalls' },
  );
});

afterAll(async () => {
  await tables.stop();
});

const policy: RetryPolicy = { maxDeliveryAttempts: 5, onExhausted: 'dead_letter', retryBaseSeconds: 1, retryMaxSeconds: 10, visibilityCeilingSeconds: 43_200 };
const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');

function portsOnDynalite(): DeliveryPorts {
  const events = createEventStore(tables.dynamo, { tableName: TABLES.events.localName, ttlDays: 30 });
  const keys = createOrderingKeyStore(tables.dynamo, TABLES.orderingKeys.localName);
  const subscriptions = createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName);
  return {
    // What the consumer's wiring picks (lambda/handlers/consumer.ts, USES).
    store: {
      findSettled: events.findSettled,
      recordSequence: events.recordSequence,
      markDelivered: events.markDelivered,
      markDeliveredUnlessSettled: events.markDeliveredUnlessSettled,
      markDeadLettered: events.markDeadLettered,
      beginAttempt: keys.beginAttempt,
      beginBatch: keys.beginBatch,
      findNumber: keys.findNumber,
      recordFailure: keys.recordFailure,
      recordGivenUp: keys.recordGivenUp,
      recordRecovered: keys.recordRecovered,
      grantAttempts: keys.grantAttempts,
      findDelivered: keys.findDelivered,
      recordDelivered: keys.recordDelivered,
    },
    findTarget: async (subscriptionId) => toDeliveryTarget(await subscriptions.get(subscriptionId)),
    send: async (_url, request) => {
      const step: Step = { what: `POST ${request.headers['webhook-id'] ?? ''}`, start: (clock += 1), end: Number.POSITIVE_INFINITY };
      steps.push(step);
      await new Promise((resolve) => setTimeout(resolve, 5));
      step.end = clock += 1;
      return { kind: AttemptResultKind.response, statusCode: 204 };
    },
    deadLetters: { put: async () => undefined },
    countDeadLetter: async () => undefined,
    quarantine: async () => undefined,
    pause: async () => undefined,
    now: () => new Date(),
    random: () => 0.5,
  };
}

/** The longest chain of steps each starting after the one before it ended: the round trips. */
function roundTrips(calls: readonly Step[]): number {
  const chain = new Map<Step, number>();
  for (const call of [...calls].sort((a, b) => a.start - b.start)) {
    const before = calls.filter((other) => other.end < call.start).map((other) => chain.get(other) ?? 0);
    chain.set(call, 1 + Math.max(0, ...before));
  }
  return Math.max(0, ...chain.values());
}

/** Runs the consumer on three events of one new key, recorded by ingest (at their messages' places, when `withPlaces`), and gives its steps. */
async function deliverThree(withPlaces: boolean): Promise<{ readonly key: string; readonly steps: readonly Step[] }> {
  const key = `round-trips-${process.pid}-${Date.now().toString(36)}-${withPlaces ? 'placed' : 'unplaced'}`;
  await createSubscriptionStore(tables.dynamo, TABLES.subscriptions.localName).put({ subscription_id: key, tenant_id: 't', url: 'https://receiver.example/hook', secret, now: new Date().toISOString() });
  const group = messageGroupIdFor(key, undefined);
  const sequenceNumber = (n: number) => String(1000 + n).padStart(20, '0');
  const records: SQSRecord[] = [1, 2, 3].map((n) => ({
    messageId: `m${n}`,
    receiptHandle: `rh${n}`,
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 's', ApproximateFirstReceiveTimestamp: '0', MessageGroupId: group, MessageDeduplicationId: `${key}-${n}`, SequenceNumber: sequenceNumber(n) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:delivery.fifo',
    awsRegion: 'us-east-1',
    body: encodeQueuedEvent({
      version: 1,
      event: { event_id: `${key}-${n}`, tenant_id: 't', subscription_id: key, type: 'x.y', payload_json: JSON.stringify({ n }) },
      ordering_key: key,
      message_group_id: group,
      accepted_at: new Date().toISOString(),
    }),
  }));
  const handler = createConsumerHandler({
    ports: portsOnDynalite(),
    policy,
    recordTimeBudgetMs: 0,
    changeVisibility: async () => undefined,
    publishPauseNotice: async () => undefined,
    recordGroupProgress: createGroupStore(tables.dynamo, TABLES.groups.localName).recordProgress,
    holds: { isPaused: async () => false, letGo: async () => 0, forgetHold: async () => undefined },
    publishCounts: () => undefined,
    logger: createLogger('test', 'SILENT'),
  });
  // Accepted as ingest records them (before the batch: its calls are not counted here).
  const events = createEventStore(tables.dynamo, { tableName: TABLES.events.localName, ttlDays: 30 });
  for (const n of [1, 2, 3]) {
    const place = withPlaces ? { queuePosition: queuePositionOf({ messageGroupId: group, sequenceNumber: sequenceNumber(n) }) } : {};
    await events.recordAccepted({ eventId: `${key}-${n}`, subscriptionId: key, tenantId: 't', orderingKey: key, messageGroupId: group, acceptedAt: new Date().toISOString(), ...place });
  }
  await createGroupStore(tables.dynamo, TABLES.groups.localName).recordIntake({ messageGroupId: group, events: 3, orderingKeys: [key], acceptedAt: new Date().toISOString() });
  steps.length = 0;
  expect(await handler({ Records: records }, { getRemainingTimeInMillis: () => 300_000 })).toEqual({ batchItemFailures: [] });
  expect(steps.filter((step) => step.what.startsWith('POST')).map((step) => step.what)).toEqual([1, 2, 3].map((n) => `POST ${key}-${n}`));
  return { key, steps: [...steps] };
}

describe('the delivery path', () => {
  it('makes no state round trip between two POSTs of a run, and records the run in one write on its key', async () => {
    const { steps: calls } = await deliverThree(true);
    const posts = calls.filter((step) => step.what.startsWith('POST'));
    const between = (after: number, before: number) => calls.filter((step) => !step.what.startsWith('POST') && step.start > after && step.start < before);
    // Before the first POST: the batch's one read (settled? beside the subscription; no key's item,
    // as SQS hands each message out the first time), then the run's one begin, which numbers all three.
    const first = between(0, posts[0]?.start ?? 0);
    expect(first.map((step) => step.what).sort()).toEqual(['BatchGetItem Events', 'GetItem Subscriptions', 'UpdateItem OrderingKeys'].sort());
    expect(roundTrips(first)).toBe(2);
    // Between two POSTs: nothing. Each event is the message ingest recorded for it.
    for (const n of [1, 2]) expect(between(posts[n - 1]?.end ?? 0, posts[n]?.start ?? 0)).toEqual([]);
    // After the last POST: the run's deliveries recorded on its key, then the group's lag, once
    // per group per batch: the batch held all of the group, so one conditional write counts and
    // forgets it (drained).
    const last = between(posts[2]?.end ?? 0, Number.POSITIVE_INFINITY);
    expect(last.map((step) => step.what)).toEqual(['UpdateItem OrderingKeys', 'UpdateItem Groups']);
    expect(roundTrips(last)).toBe(2);
    // Per event: no write. Per run one begin and one record of its deliveries; per batch one lag write and two reads.
    expect(calls.filter((step) => step.what.startsWith('UpdateItem')).length).toBe(3);
    expect(calls.filter((step) => step.what.startsWith('GetItem') || step.what.startsWith('BatchGetItem')).length).toBe(2);
  });

  it('records a delivery on its event’s record, while the next is sent, when ingest recorded no place for it', async () => {
    const { steps: calls } = await deliverThree(false);
    const posts = calls.filter((step) => step.what.startsWith('POST'));
    const between = (after: number, before: number) => calls.filter((step) => !step.what.startsWith('POST') && step.start > after && step.start < before);
    // Between two POSTs: only the record of the delivery before, still under way when the next
    // POST starts: no state round trip holds the key back.
    for (const n of [1, 2]) {
      const between2 = between(posts[n - 1]?.end ?? 0, posts[n]?.start ?? 0);
      expect(between2.map((step) => step.what)).toEqual(['UpdateItem Events']);
      expect(between2.every((step) => step.end > (posts[n]?.start ?? 0))).toBe(true);
    }
    const last = between(posts[2]?.end ?? 0, Number.POSITIVE_INFINITY);
    expect(last.map((step) => step.what)).toEqual(['UpdateItem Events', 'UpdateItem Groups']);
    expect(calls.filter((step) => step.what.startsWith('UpdateItem')).length).toBe(5);
  });
});

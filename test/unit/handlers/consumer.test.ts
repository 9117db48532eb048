import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { VisibilityChange } from '../../../lambda/core/consumer-batch.js';
import { AttemptResultKind, type DeliveryPorts, type UnreadableRecord } from '../../../lambda/core/delivery.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { Deployment, loadConfig } from '../../../lambda/config.js';
import { createConsumerHandler, retryPolicyOf, toConsumerRecord, type ConsumerContext } from '../../../lambda/handlers/consumer.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { HeadState, type GroupProgress } from '../../../lambda/core/lag.js';
import { UNRECORDED_HOLD_SECONDS, type PauseNotice } from '../../../lambda/core/pause.js';
import type { ConsumerCounts } from '../../../lambda/core/consumer-metrics.js';
import { sqsPackRecordOf, sqsRecordOf } from '../../support/sqs-record.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

function queuedOf(eventId: string, key: string): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: key, type: 'x.y', payload_json: '{}' },
    ordering_key: key,
    message_group_id: `g-${key}`,
    accepted_at: '2026-12-02T12:00:00.000Z',
  };
}

function sqsRecord(eventId: string, key: string): SQSRecord {
  return sqsRecordOf(queuedOf(eventId, key));
}

/** One message holding several events of one key, as ingest sends a key's events of one request. */
function sqsPack(messageId: string, key: string, eventIds: readonly [string, ...string[]]): SQSRecord {
  const [first, ...rest] = eventIds;
  return sqsPackRecordOf([queuedOf(first, key), ...rest.map((eventId) => queuedOf(eventId, key))], messageId);
}

/** Lambda's context for an invocation with time to spare. */
const plentyOfTime: ConsumerContext = { getRemainingTimeInMillis: () => 300_000 };

/** The time a record needs left to be started, in these tests. */
const RECORD_TIME_BUDGET_MS = 15_000;

interface PauseOptions {
  /** Subscriptions paused now; the test may change it meanwhile. */
  readonly paused: Set<string>;
  /** Called for each group's lag write, before it lands (it may throw). */
  readonly onRecordProgress?: (progress: GroupProgress) => void;
  /** The consumer's AUTO_PAUSE_AFTER_SECONDS; unset by default. */
  readonly autoPauseAfterSeconds?: number;
  /** Whether publishing a notice fails (SNS down). */
  readonly isNoticeFailing?: boolean;
}

function setup(failing: ReadonlySet<string>, changeVisibility?: (changes: readonly VisibilityChange[]) => Promise<void>, pauses: PauseOptions = { paused: new Set() }) {
  const changes: VisibilityChange[] = [];
  const letGo: string[] = [];
  const forgotten: string[] = [];
  const sent: string[] = [];
  const lookups: string[] = [];
  const progressed: GroupProgress[] = [];
  const quarantined: UnreadableRecord[] = [];
  const published: ConsumerCounts[] = [];
  const notices: PauseNotice[] = [];
  const store = new InMemoryDeliveryStore();
  const ports: DeliveryPorts = {
    store,
    findTarget: async (subscriptionId) => {
      lookups.push(subscriptionId);
      const pause = pauses.paused.has(subscriptionId) ? { pausedAt: '2026-12-02T11:00:00.000Z', reason: 'maintenance' } : undefined;
      return { url: 'https://example.com', secret: 'whsec_' + Buffer.alloc(24).toString('base64'), batchSize: 1, pause };
    },
    send: async (_url, request) => {
      const eventId = request.headers['webhook-id'] ?? '';
      sent.push(eventId);
      return { kind: AttemptResultKind.response, statusCode: failing.has(eventId) ? 503 : 200 };
    },
    deadLetters: { put: async () => undefined },
    countDeadLetter: async () => undefined,
    quarantine: async (record) => {
      quarantined.push(record);
    },
    pause: async ({ subscriptionId, reason, now }) => {
      const isNew = !pauses.paused.has(subscriptionId);
      pauses.paused.add(subscriptionId);
      return { pause: isNew ? { pausedAt: now, reason } : { pausedAt: '2026-12-02T11:00:00.000Z', reason: 'maintenance' }, isNew };
    },
    now: () => new Date(),
    random: () => 0,
  };
  const handler = createConsumerHandler({
    ports,
    policy: { maxDeliveryAttempts: 5, retryBaseSeconds: 5, retryMaxSeconds: 900, onExhausted: 'dead_letter', visibilityCeilingSeconds: 43_070, autoPauseAfterSeconds: pauses.autoPauseAfterSeconds },
    recordTimeBudgetMs: RECORD_TIME_BUDGET_MS,
    changeVisibility:
      changeVisibility ??
      (async (batch) => {
        changes.push(...batch);
      }),
    recordGroupProgress: async (progress) => {
      pauses.onRecordProgress?.(progress);
      progressed.push(progress);
    },
    holds: {
      isPaused: async (subscriptionId) => pauses.paused.has(subscriptionId),
      letGo: async (handles) => {
        letGo.push(...handles);
        return handles.length;
      },
      forgetHold: async (messageGroupId, receiptHandle) => {
        forgotten.push(`${messageGroupId}:${receiptHandle}`);
      },
    },
    publishCounts: (counts) => {
      published.push(counts);
    },
    publishPauseNotice: async (notice) => {
      if (pauses.isNoticeFailing === true) throw new Error('SNS unavailable');
      notices.push(notice);
    },
    logger: createLogger('test', 'SILENT'),
  });
  return { handler, changes, sent, quarantined, lookups, progressed, published, notices, store, letGo, forgotten };
}

describe('consumer handler: the automatic pause', () => {
  /** Runs `a1` of key `a` until it is one attempt short of exhausted, its key failing for two hours; since when. */
  async function failingForHours(consumer: ReturnType<typeof setup>): Promise<string> {
    for (let attempt = 1; attempt < 5; attempt += 1) await consumer.handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a')] }, plentyOfTime);
    const key = consumer.store.keys.get('a');
    if (key === undefined) throw new Error('key a was never attempted');
    key.failingSince = new Date(Date.now() - 2 * 3_600_000).toISOString();
    return key.failingSince;
  }

  it('publishes one notice per subscription it paused, once the group is held', async () => {
    const paused = new Set<string>();
    const consumer = setup(new Set(['a1']), undefined, { paused, autoPauseAfterSeconds: 3600 });
    const failingSince = await failingForHours(consumer);
    consumer.changes.length = 0;
    const response = await consumer.handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a'), sqsRecord('b1', 'b')] }, plentyOfTime);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'a1' }, { itemIdentifier: 'a2' }] });
    expect(paused).toEqual(new Set(['a']));
    expect(consumer.changes.map((change) => [change.receiptHandle, change.timeoutSeconds])).toEqual([['rh-a1', 43_070], ['rh-a2', 0]]);
    expect(consumer.notices).toEqual([
      {
        notice: 'subscription_auto_paused',
        subscription_id: 'a',
        message_group_id: 'g-a',
        event_id: 'a1',
        attempts: 5,
        failing_since: failingSince,
        paused_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        pause_reason: `auto: failing since ${failingSince}; 5 of 5 attempts failed; last: HTTP 503`,
      },
    ]);
    expect(consumer.published.at(-1)).toMatchObject({ deadLettered: 0 });
    // Held from then on, with no second notice.
    await consumer.handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a')] }, plentyOfTime);
    expect(consumer.notices).toHaveLength(1);
  });

  it('keeps the pause and the hold when the notice cannot be published', async () => {
    const paused = new Set<string>();
    const consumer = setup(new Set(['a1']), undefined, { paused, autoPauseAfterSeconds: 3600, isNoticeFailing: true });
    await failingForHours(consumer);
    const response = await consumer.handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a')] }, plentyOfTime);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'a1' }, { itemIdentifier: 'a2' }] });
    expect(paused).toEqual(new Set(['a']));
    expect(consumer.progressed.at(-1)?.head.state).toBe(HeadState.held);
  });
});

describe('consumer handler', () => {
  it('reports the failing head and its successors, and changes their visibility', async () => {
    const { handler, changes } = setup(new Set(['a1']));
    const event: SQSEvent = { Records: [sqsRecord('a1', 'a'), sqsRecord('b1', 'b'), sqsRecord('a2', 'a')] };
    const response = await handler(event, plentyOfTime);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'a1' }, { itemIdentifier: 'a2' }] });
    expect(changes.map((c) => [c.receiptHandle, c.timeoutSeconds])).toEqual([['rh-a1', 5], ['rh-a2', 0]]);
  });

  it('reads each subscription once per invocation', async () => {
    const { handler, lookups } = setup(new Set());
    await handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a'), sqsRecord('b1', 'b'), sqsRecord('a3', 'a')] }, plentyOfTime);
    expect(lookups.sort()).toEqual(['a', 'b']);
    await handler({ Records: [sqsRecord('a4', 'a')] }, plentyOfTime);
    expect(lookups.filter((id) => id === 'a')).toHaveLength(2);
  });

  it('records each group’s lag once per batch, skipping groups where nothing changed', async () => {
    const { handler, progressed, store } = setup(new Set(['b2']));
    // Ingest recorded (and so counted) these events.
    for (const [eventId, key] of [['a1', 'a'], ['a2', 'a'], ['b1', 'b'], ['b2', 'b'], ['b3', 'b']] as const) {
      await store.recordAccepted({ eventId, subscriptionId: key, tenantId: 't', orderingKey: key, messageGroupId: `g-${key}`, acceptedAt: '2026-12-02T12:00:00.000Z' });
    }
    await handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('b1', 'b'), sqsRecord('a2', 'a'), sqsRecord('b2', 'b'), sqsRecord('b3', 'b')] }, plentyOfTime);
    // A batch short of full: each group likely drained (a hint for the write, see GroupProgress).
    expect(progressed).toEqual([
      { messageGroupId: 'g-a', settled: 2, lastSettledAcceptedAt: '2026-12-02T12:00:00.000Z', head: { state: 'clear' }, isLikelyDrained: true, hasDelivered: true },
      {
        messageGroupId: 'g-b',
        settled: 1,
        lastSettledAcceptedAt: '2026-12-02T12:00:00.000Z',
        head: { state: 'waiting', eventId: 'b2', orderingKey: 'b', attempts: 1, lastError: 'HTTP 503', acceptedAt: '2026-12-02T12:00:00.000Z' },
        isLikelyDrained: true,
        hasDelivered: true,
      },
    ]);
    progressed.length = 0;
    // A batch of duplicates changes no lag: no write.
    await handler({ Records: [sqsRecord('a1', 'a')] }, plentyOfTime);
    expect(progressed).toEqual([]);
  });

  it('returns the records it has no time to start, visible at once and reported failed, attempting none', async () => {
    const { handler, changes, sent, published } = setup(new Set());
    const nearlyOut: ConsumerContext = { getRemainingTimeInMillis: () => RECORD_TIME_BUDGET_MS - 1 };
    const response = await handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('b1', 'b'), sqsRecord('a2', 'a')] }, nearlyOut);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['a1', 'a2', 'b1']);
    expect(changes.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['a1', 0], ['a2', 0], ['b1', 0]]);
    expect(sent).toEqual([]);
    expect(published).toEqual([{ delivered: 0, failedAttempts: 0, deadLettered: 0, faults: 0 }]);
  });

  it('stops starting records once less time is left than an attempt and its writes need', async () => {
    const { handler, changes, sent } = setup(new Set());
    // Each attempt uses 10 s of the 30 s left: a1 starts with 30 s, a2 with 20 s, a3 would have 10 s.
    const countingDown: ConsumerContext = { getRemainingTimeInMillis: () => 30_000 - 10_000 * sent.length };
    const response = await handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a'), sqsRecord('a3', 'a')] }, countingDown);
    expect(sent).toEqual(['a1', 'a2']);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'a3' }] });
    expect(changes.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['a3', 0]]);
  });

  it('still reports the failures when the visibility changes fail', async () => {
    const { handler } = setup(new Set(['a1']), async () => {
      throw new Error('SQS unavailable');
    });
    const response = await handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a')] }, plentyOfTime);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['a1', 'a2']);
  });

  it('publishes one count per invocation: delivered, failed attempts, dead letters and faults', async () => {
    const { handler, published } = setup(new Set(['b1']));
    const record = sqsRecord('c1', 'c');
    const withoutGroup = { ...record, attributes: { ...record.attributes, MessageGroupId: undefined } } as unknown as SQSRecord;
    await handler({ Records: [sqsRecord('a1', 'a'), sqsRecord('a2', 'a'), sqsRecord('b1', 'b'), withoutGroup] }, plentyOfTime);
    expect(published).toEqual([{ delivered: 2, failedAttempts: 1, deadLettered: 1, faults: 0 }]);
  });

  it('delivers the events of a pack one by one, in order, with the messages around it, and fails nothing', async () => {
    const { handler, sent, changes } = setup(new Set());
    const response = await handler({ Records: [sqsRecord('a1', 'a'), sqsPack('m-a', 'a', ['a2', 'a3', 'a4']), sqsRecord('b1', 'b'), sqsRecord('a5', 'a')] }, plentyOfTime);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sent.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
    expect(changes).toEqual([]);
  });

  it('keeps a pack whose event fails, once, with that event’s backoff, and sends its delivered events no second time', async () => {
    const { handler, sent, changes } = setup(new Set(['a2']));
    const batch: SQSEvent = { Records: [sqsPack('m-a', 'a', ['a1', 'a2', 'a3']), sqsRecord('a4', 'a'), sqsRecord('b1', 'b')] };
    const response = await handler(batch, plentyOfTime);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-a' }, { itemIdentifier: 'a4' }] });
    // The pack waits as its first waiting event (a2) does; the message after it is released at once.
    expect(changes.map((c) => [c.messageId, c.receiptHandle, c.timeoutSeconds])).toEqual([
      ['m-a', 'rh-m-a', 5],
      ['a4', 'rh-a4', 0],
    ]);
    expect(sent.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2']);
    expect(sent).toContain('b1');
    sent.length = 0;
    // The pack comes back: a1 is settled, a2 is tried again, then the rest.
    const again = await handler({ Records: [sqsPack('m-a', 'a', ['a1', 'a2', 'a3']), sqsRecord('a4', 'a')] }, plentyOfTime);
    expect(sent).toEqual(['a2']);
    expect(again.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(['m-a', 'a4']);
  });

  it('sets an item of a pack that is no event aside alone, as it came, and delivers the others', async () => {
    const { handler, sent, quarantined } = setup(new Set());
    const pack = sqsPack('m-a', 'a', ['a1', 'a2']);
    const body = JSON.parse(pack.body) as { version: 2; events: unknown[] };
    const spoiled = { ...pack, body: JSON.stringify({ ...body, events: [body.events[0], { not: 'an event' }, body.events[1]] }) };
    const response = await handler({ Records: [spoiled] }, plentyOfTime);
    expect(response.batchItemFailures).toEqual([]);
    expect(sent).toEqual(['a1', 'a2']);
    expect(quarantined.map((record) => [record.messageId, record.body])).toEqual([['m-a#1', '{"not":"an event"}']]);
  });

  it('returns a pack it has no time to finish, visible at once, and skips its delivered events when it comes back', async () => {
    const { handler, sent, changes } = setup(new Set());
    // Time for two attempts: a1 starts with 30 s, a2 with 20 s, a3 would have 10 s.
    const countingDown: ConsumerContext = { getRemainingTimeInMillis: () => 30_000 - 10_000 * sent.length };
    const response = await handler({ Records: [sqsPack('m-a', 'a', ['a1', 'a2', 'a3'])] }, countingDown);
    expect(sent).toEqual(['a1', 'a2']);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-a' }] });
    expect(changes.map((c) => [c.messageId, c.timeoutSeconds])).toEqual([['m-a', 0]]);
    sent.length = 0;
    expect(await handler({ Records: [sqsPack('m-a', 'a', ['a1', 'a2', 'a3'])] }, plentyOfTime)).toEqual({ batchItemFailures: [] });
    expect(sent).toEqual(['a3']);
  });

  it('dead-letters a record without a message group as malformed, and fails nothing', async () => {
    const { handler, quarantined } = setup(new Set());
    const record = sqsRecord('a1', 'a');
    const withoutGroup = { ...record, attributes: { ...record.attributes, MessageGroupId: undefined } } as unknown as SQSRecord;
    const response = await handler({ Records: [withoutGroup] }, plentyOfTime);
    expect(response.batchItemFailures).toEqual([]);
    expect(quarantined.map((d) => [d.messageGroupId, d.messageId])).toEqual([['malformed-a1', 'a1']]);
    expect(quarantined[0]?.reason).toMatch(/^malformed record: attributes.MessageGroupId/);
  });
});

describe('retryPolicyOf', () => {
  it('carries the visibility ceiling of the configuration into the core', () => {
    expect(retryPolicyOf(loadConfig({}, Deployment.deployed)).visibilityCeilingSeconds).toBe(43_200 - 130);
    expect(retryPolicyOf(loadConfig({ DELIVERY_TIMEOUT_MS: '60000' }, Deployment.deployed)).visibilityCeilingSeconds).toBe(43_200 - 630);
  });
});

describe('toConsumerRecord', () => {
  it('reads the fields the consumer relies on', () => {
    const record = sqsRecord('a1', 'a');
    expect(toConsumerRecord(record, 0)).toEqual({
      messageId: 'a1',
      receiptHandle: 'rh-a1',
      body: record.body,
      messageGroupId: 'g-a',
      receiveCount: 1,
      sequenceNumber: record.attributes.SequenceNumber,
    });
  });

  it('keeps a record it cannot read as its own group', () => {
    expect(toConsumerRecord({ body: 'x' }, 3)).toMatchObject({ messageId: 'record-3', receiptHandle: '', body: 'x', messageGroupId: 'malformed-record-3', receiveCount: 1 });
    expect(toConsumerRecord({ body: 'x' }, 3).problem).toMatch(/messageId/);
    expect(toConsumerRecord(null, 4)).toMatchObject({ messageId: 'record-4', messageGroupId: 'malformed-record-4' });
  });
});

describe('consumer handler, paused subscriptions', () => {
  it('holds a paused subscription\'s group without an attempt and delivers the others', async () => {
    const { handler, changes, sent, progressed, letGo, store } = setup(new Set(), undefined, { paused: new Set(['a']) });
    const event: SQSEvent = { Records: [sqsRecord('a1', 'a'), sqsRecord('b1', 'b'), sqsRecord('a2', 'a')] };
    const response = await handler(event, plentyOfTime);
    expect(sent).toEqual(['b1']);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'a1' }, { itemIdentifier: 'a2' }] });
    // The head for as long as SQS allows (the policy's ceiling), its successor visible at once.
    expect(changes.map((c) => [c.receiptHandle, c.timeoutSeconds])).toEqual([['rh-a1', 43_070], ['rh-a2', 0]]);
    const held = progressed.find((progress) => progress.messageGroupId === 'g-a');
    expect(held?.head).toMatchObject({ state: HeadState.held, hold: { subscriptionId: 'a', receiptHandle: 'rh-a1', pausedAt: '2026-12-02T11:00:00.000Z', reason: 'maintenance' } });
    // No attempt was begun, so none is counted.
    expect(store.writes.filter((write) => write.includes('a1') || write.includes('a2'))).toEqual([]);
    expect(letGo).toEqual([]);
  });

  it('lets a hold go at once when the subscription was resumed before the hold was recorded', async () => {
    const paused = new Set(['a']);
    // The resume lands between the consumer's read of the pause and its record of the hold: the
    // resume read no hold, so the consumer's second read must let it go.
    const { handler, letGo, forgotten } = setup(new Set(), undefined, { paused, onRecordProgress: () => paused.delete('a') });
    await handler({ Records: [sqsRecord('a1', 'a')] }, plentyOfTime);
    expect(letGo).toEqual(['rh-a1']);
    expect(forgotten).toEqual(['g-a:rh-a1']);
  });

  it('records a hold before it applies it', async () => {
    const order: string[] = [];
    const { handler } = setup(
      new Set(),
      async (batch) => {
        order.push(...batch.map((change) => `visibility ${change.receiptHandle} ${change.timeoutSeconds}`));
      },
      { paused: new Set(['a']), onRecordProgress: (progress) => order.push(`record ${progress.head.state}`) },
    );
    await handler({ Records: [sqsRecord('a1', 'a')] }, plentyOfTime);
    expect(order).toEqual(['record held', 'visibility rh-a1 43070']);
  });

  it('keeps a hold short when it could not be recorded, so that it is made again and recorded', async () => {
    const { handler, changes, letGo } = setup(new Set(), undefined, {
      paused: new Set(['a']),
      onRecordProgress: () => {
        throw new Error('DynamoDB unavailable');
      },
    });
    await handler({ Records: [sqsRecord('a1', 'a')] }, plentyOfTime);
    expect(changes.map((c) => [c.receiptHandle, c.timeoutSeconds])).toEqual([['rh-a1', UNRECORDED_HOLD_SECONDS]]);
    expect(letGo).toEqual([]);
  });
});

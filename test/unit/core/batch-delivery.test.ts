import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { gatherBatch } from '../../../lambda/core/batch-delivery.js';
import { processBatch, type TimeBudget } from '../../../lambda/core/consumer-batch.js';
import { AttemptResultKind, OutcomeKind, queuePositionOf, type AttemptResult, type ConsumerRecord, type DeliveryPorts } from '../../../lambda/core/delivery.js';
import type { DeadLetter } from '../../../lambda/core/dead-letter.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import type { RetryPolicy } from '../../../lambda/core/retry-policy.js';
import { batchWebhookId, MAX_BATCH_BODY_BYTES, type WebhookRequest } from '../../../lambda/core/webhook.js';
import { InMemoryDeliveryStore } from '../../support/in-memory-ports.js';

const policy: RetryPolicy = { maxDeliveryAttempts: 3, retryBaseSeconds: 5, retryMaxSeconds: 900, onExhausted: 'dead_letter', visibilityCeilingSeconds: 43_070 };
const plentyOfTime: TimeBudget = { hasTimeFor: () => true, recordMs: 20_000 };
const secret = 'whsec_' + Buffer.alloc(32, 1).toString('base64');

function queued(eventId: string, key: string, payload: Record<string, unknown> = { eventId }): QueuedEvent {
  return {
    version: 1,
    event: { event_id: eventId, tenant_id: 't', subscription_id: key, type: 'thing.happened', payload_json: JSON.stringify(payload) },
    ordering_key: key,
    message_group_id: `group-${key}`,
    accepted_at: '2026-12-02T12:00:00.000Z',
  };
}

/** Records of one key, in group order, with growing SQS SequenceNumbers. */
function records(key: string, count: number, from = 1): ConsumerRecord[] {
  return Array.from({ length: count }, (_, index) => {
    const eventId = `${key}${from + index}`;
    return { messageId: eventId, receiptHandle: `rh-${eventId}`, body: JSON.stringify(queued(eventId, key)), messageGroupId: `group-${key}`, receiveCount: 1, sequenceNumber: String(100 + from + index) };
  });
}

interface Post {
  readonly webhookId: string;
  readonly items: readonly { readonly id: string; readonly sequence: number; readonly ordering_key: string; readonly redelivery?: boolean }[];
  readonly request: WebhookRequest;
}

/** A consumer of subscriptions that take batches of `batchSize`, and a receiver answering `respond`. */
function harness(batchSize: number, respond: (post: Post) => AttemptResult = () => ({ kind: AttemptResultKind.response, statusCode: 204 })) {
  const store = new InMemoryDeliveryStore();
  const posts: Post[] = [];
  const deadLetters: DeadLetter[] = [];
  const ports: DeliveryPorts = {
    store,
    findTarget: async (subscriptionId) => ({ url: `https://example.com/${subscriptionId}`, secret, batchSize }),
    send: async (_url, request) => {
      const body = JSON.parse(request.body) as { events: Post['items'] };
      const post: Post = { webhookId: request.headers['webhook-id'] ?? '', items: body.events, request };
      posts.push(post);
      return respond(post);
    },
    deadLetters: { put: async (deadLetter) => void deadLetters.push(deadLetter) },
    countDeadLetter: async () => undefined,
    quarantine: async () => undefined,
    pause: async () => undefined,
    now: () => new Date(),
    random: () => 0.5,
  };
  const run = (batch: ConsumerRecord[]) => processBatch(batch, ports, policy, () => undefined, plentyOfTime);
  return { store, posts, deadLetters, run };
}

const ok: AttemptResult = { kind: AttemptResultKind.response, statusCode: 204 };
const refused: AttemptResult = { kind: AttemptResultKind.response, statusCode: 500 };

/** Runs the consumer on what SQS would hand out again (the records it did not delete), until none is left. */
async function drain(run: (batch: ConsumerRecord[]) => ReturnType<typeof processBatch>, batch: ConsumerRecord[], maxRuns = 20): Promise<number> {
  let waiting = batch;
  let runs = 0;
  while (waiting.length > 0 && runs < maxRuns) {
    const plan = await run(waiting);
    const failed = new Set(plan.failedMessageIds);
    waiting = waiting.filter((record) => failed.has(record.messageId));
    runs += 1;
  }
  return runs;
}

describe('ordered batches', () => {
  it('delivers consecutive events of one key in one POST, numbered 1, 2, 3, signed once over the body', async () => {
    const { run, posts, store } = harness(10);
    const plan = await run(records('a', 3));
    expect(plan.failedMessageIds).toEqual([]);
    expect(posts).toHaveLength(1);
    const [post] = posts;
    expect(post?.items.map((item) => [item.id, item.sequence, item.ordering_key])).toEqual([['a1', 1, 'a'], ['a2', 2, 'a'], ['a3', 3, 'a']]);
    expect(post?.request.headers['webhook-sequence']).toBeUndefined();
    expect(() => new Webhook(secret).verify(post?.request.body ?? '', post?.request.headers ?? {})).not.toThrow();
    expect([...plan.outcomes.values()].map((outcome) => outcome.kind)).toEqual([OutcomeKind.delivered, OutcomeKind.delivered, OutcomeKind.delivered]);
    expect(['a1', 'a2', 'a3'].map((id) => [store.events.get(id)?.status, store.events.get(id)?.sequence])).toEqual([['delivered', 1], ['delivered', 2], ['delivered', 3]]);
  });

  it('splits what one receive holds into batches of batch_size, the last one short, in order', async () => {
    const { run, posts } = harness(2);
    await run(records('a', 5));
    expect(posts.map((post) => post.items.map((item) => `${item.id}#${item.sequence}`))).toEqual([['a1#1', 'a2#2'], ['a3#3', 'a4#4'], ['a5#5']]);
  });

  it('keeps one batch to one ordering key, and keys apart run side by side', async () => {
    const { run, posts } = harness(10);
    const a = records('a', 2);
    const b = records('b', 2);
    await run([a[0], b[0], a[1], b[1]].filter((record) => record !== undefined));
    expect(posts.map((post) => post.items.map((item) => item.id)).sort()).toEqual([['a1', 'a2'], ['b1', 'b2']]);
  });

  it('sends one event alone in the batch shape', async () => {
    const { run, posts } = harness(10);
    await run(records('a', 1));
    expect(posts.map((post) => post.items.map((item) => `${item.id}#${item.sequence}`))).toEqual([['a1#1']]);
    expect(posts[0]?.webhookId).toBe(batchWebhookId([{ queued: queued('a1', 'a'), sequence: 1, previousSequence: 0 }]));
  });

  it('never takes a poison event’s batch-mates to the dead letters: after the batch fails, one at a time, each with its own attempts', async () => {
    const { run, posts, deadLetters, store } = harness(10, (post) => (post.items.some((item) => item.id === 'a2') ? refused : ok));
    await drain(run, records('a', 4));
    expect(deadLetters.map((letter) => [letter.queued.event.event_id, letter.sequence, letter.attempts])).toEqual([['a2', 2, 3]]);
    expect(['a1', 'a3', 'a4'].map((id) => store.events.get(id)?.status)).toEqual(['delivered', 'delivered', 'delivered']);
    // The batch once, then a1 alone, a2 alone three times, a3 and a4 alone: the batch's numbers stay.
    expect(posts.map((post) => post.items.map((item) => `${item.id}#${item.sequence}`).join(' '))).toEqual(['a1#1 a2#2 a3#3 a4#4', 'a1#1', 'a2#2', 'a2#2', 'a2#2', 'a3#3', 'a4#4']);
  });

  it('names in each item the number delivered before it: the item before, and for the first the key\'s last delivered', async () => {
    const { run, posts } = harness(10, (post) => (post.items.some((item) => item.id === 'a2') ? refused : ok));
    await drain(run, records('a', 4));
    await run(records('a', 2, 5));
    const places = posts.map((post) => post.items.map((item) => `${item.sequence}<${(item as { previous_sequence?: number }).previous_sequence}`).join(' '));
    // The batch claims 1, 2, 3 delivered in it; it fails; alone, 2 is given up, so 3 follows 1.
    expect(places).toEqual(['1<0 2<1 3<2 4<3', '1<0', '2<1', '2<1', '2<1', '3<1', '4<3', '5<4 6<5']);
  });

  it('names in a run\'s later members the one given up before them, as the key names it to a member begun alone', async () => {
    const store = new InMemoryDeliveryStore();
    const bodies: { sequence: number; previous_sequence: number }[] = [];
    const ports: DeliveryPorts = {
      store,
      findTarget: async (subscriptionId) => ({ url: `https://example.com/${subscriptionId}`, secret, batchSize: 1 }),
      send: async (_url, request) => {
        const body = JSON.parse(request.body) as { sequence: number; previous_sequence: number };
        bodies.push(body);
        return body.sequence === 2 || body.sequence === 3 || (body.sequence === 5 && bodies.filter((each) => each.sequence === 5).length === 1) ? refused : ok;
      },
      deadLetters: { put: async () => undefined },
      countDeadLetter: async () => undefined,
      quarantine: async () => undefined,
      pause: async () => undefined,
      now: () => new Date(),
      random: () => 0.5,
    };
    // One attempt each: a refused member is given up at once, and the run goes on past it.
    const once: RetryPolicy = { ...policy, maxDeliveryAttempts: 1, retryBaseSeconds: 0 };
    await processBatch(records('a', 5), ports, once, () => undefined, plentyOfTime);
    expect(bodies.map((body) => `${body.sequence}<${body.previous_sequence}`)).toEqual(['1<0', '2<1', '3<1', '4<1', '5<4']);
    // 5 was given up too; the key's next event, begun alone, follows 4.
    await processBatch(records('a', 1, 6), ports, once, () => undefined, plentyOfTime);
    expect(bodies.at(-1)).toMatchObject({ sequence: 6, previous_sequence: 4 });
  });

  it('batches again, with the next numbers, once a failed batch’s events are settled', async () => {
    let isDown = true;
    const { run, posts } = harness(10, () => (isDown ? refused : ok));
    const first = await run(records('a', 2));
    expect(first.failedMessageIds).toEqual(['a1', 'a2']);
    isDown = false;
    await drain(run, records('a', 2));
    await run(records('a', 3, 3));
    expect(posts.map((post) => post.items.map((item) => `${item.id}#${item.sequence}`).join(' '))).toEqual(['a1#1 a2#2', 'a1#1', 'a2#2', 'a3#3 a4#4 a5#5']);
  });

  it('holds the key after a failed batch only as long as the receiver’s Retry-After asks, and counts no attempt', async () => {
    const { run, store } = harness(10, () => ({ kind: AttemptResultKind.response, statusCode: 429, retryAfter: '30' }));
    const plan = await run(records('a', 3));
    expect(plan.visibilityChanges.map((change) => [change.messageId, change.timeoutSeconds])).toEqual([['a1', 30], ['a2', 0], ['a3', 0]]);
    expect(store.keys.get('a')?.headAttempts).toBe(0);
    const noHint = harness(10, () => refused);
    const retried = await noHint.run(records('a', 2));
    expect(retried.visibilityChanges.map((change) => change.timeoutSeconds)).toEqual([0, 0]);
  });

  it('goes on one at a time, with the batch’s numbers, after an invocation crashed during the batch', async () => {
    let crashes = 1;
    const { run, posts, store } = harness(10, () => {
      if (crashes > 0) {
        crashes -= 1;
        throw new Error('the invocation stopped');
      }
      return ok;
    });
    const crashed = await run(records('a', 3));
    expect(crashed.failedMessageIds).toEqual(['a1', 'a2', 'a3']);
    await drain(run, records('a', 3));
    expect(posts.map((post) => post.items.map((item) => `${item.id}#${item.sequence}`).join(' '))).toEqual(['a1#1 a2#2 a3#3', 'a1#1', 'a2#2', 'a3#3']);
    expect(store.keys.get('a')?.lastSequence).toBe(3);
  });

  it('leaves a redriven dead letter out of a batch: it goes alone, marked as a redelivery', async () => {
    const { run, posts } = harness(10);
    const redriven: ConsumerRecord = {
      messageId: 'a9',
      receiptHandle: 'rh-a9',
      body: JSON.stringify({ ...queued('a9', 'a'), redrive: { sequence: 9, redriven_at: '2026-12-02T13:00:00.000Z' } }),
      messageGroupId: 'group-a',
      receiveCount: 1,
      sequenceNumber: '900',
    };
    await run([...records('a', 2), redriven]);
    expect(posts.map((post) => post.items.map((item) => `${item.id}#${item.sequence}${item.redelivery === true ? 'r' : ''}`).join(' '))).toEqual(['a1#1 a2#2', 'a9#9r']);
    // Every batch names its ordering key; only the redelivery is marked as one, in its header too (docs/api.md#what-a-receiver-gets).
    expect(posts.map((post) => [post.request.headers['webhook-ordering-key'], post.request.headers['webhook-redelivery']])).toEqual([
      ['a', undefined],
      ['a', 'true'],
    ]);
  });
});

describe('gatherBatch', () => {
  it('stops at another key, a settled event, a repeated event, batch_size, and before the body limit', () => {
    const a = records('a', 3);
    const never = () => false;
    expect(gatherBatch(a, 0, 2, never).map((member) => member.record.messageId)).toEqual(['a1', 'a2']);
    expect(gatherBatch([...records('a', 1), ...records('b', 1)], 0, 10, never)).toHaveLength(1);
    expect(gatherBatch(a, 0, 10, (member) => member.queued.event.event_id === 'a2').map((member) => member.record.messageId)).toEqual(['a1']);
    expect(gatherBatch([...a, ...records('a', 1)], 0, 10, never).map((member) => member.record.messageId)).toEqual(['a1', 'a2', 'a3']);
    const big = (eventId: string): ConsumerRecord => ({
      messageId: eventId,
      receiptHandle: eventId,
      body: JSON.stringify(queued(eventId, 'a', { text: 'x'.repeat(MAX_BATCH_BODY_BYTES / 2) })),
      messageGroupId: 'group-a',
      receiveCount: 1,
    });
    expect(gatherBatch([big('x1'), big('x2'), big('x3')], 0, 10, never)).toHaveLength(1);
  });
});

describe('batchWebhookId', () => {
  it('is the same for the same events and numbers, and differs when either differs', () => {
    const one = [{ queued: queued('a1', 'a'), sequence: 1, previousSequence: 0 }, { queued: queued('a2', 'a'), sequence: 2, previousSequence: 1 }];
    expect(batchWebhookId(one)).toBe(batchWebhookId(one.map((item) => ({ ...item }))));
    expect(batchWebhookId(one)).toMatch(/^batch_[0-9a-f]{32}$/);
    expect(batchWebhookId(one)).not.toBe(batchWebhookId([{ queued: queued('a1', 'a'), sequence: 1, previousSequence: 0 }]));
    expect(batchWebhookId(one)).not.toBe(batchWebhookId([{ queued: queued('a1', 'a'), sequence: 1, previousSequence: 0 }, { queued: queued('a2', 'a'), sequence: 3, previousSequence: 2 }]));
  });
});

describe('deliveries recorded on the key', () => {
  /** Records whose events ingest recorded at their messages' places, as it does from SQS's answer. */
  async function recorded(store: InMemoryDeliveryStore, key: string, count: number, from = 1): Promise<ConsumerRecord[]> {
    const batch = records(key, count, from);
    for (const record of batch) {
      await store.recordAccepted({
        eventId: record.messageId,
        subscriptionId: key,
        tenantId: 't',
        orderingKey: key,
        messageGroupId: record.messageGroupId,
        acceptedAt: '2026-12-02T12:00:00.000Z',
        queuePosition: queuePositionOf({ messageGroupId: record.messageGroupId, sequenceNumber: record.sequenceNumber ?? '' }),
      });
    }
    return batch;
  }

  /** A consumer of subscriptions that take one event per POST, and a receiver answering `respond` to each. */
  function runs(respond: (webhookId: string) => AttemptResult = () => ok, overrides?: (store: InMemoryDeliveryStore) => Partial<DeliveryPorts['store']>, extra: Partial<DeliveryPorts> = {}) {
    const store = new InMemoryDeliveryStore();
    const posts: string[] = [];
    const ports: DeliveryPorts = {
      store: overrides === undefined ? store : Object.assign(Object.create(store) as InMemoryDeliveryStore, overrides(store)),
      findTarget: async (subscriptionId) => ({ url: `https://example.com/${subscriptionId}`, secret, batchSize: 1 }),
      send: async (_url, request) => {
        const webhookId = request.headers['webhook-id'] ?? '';
        posts.push(`${webhookId}#${request.headers['webhook-sequence'] ?? ''}`);
        return respond(webhookId);
      },
      deadLetters: { put: async () => undefined },
      countDeadLetter: async () => undefined,
      quarantine: async () => undefined,
      pause: async () => undefined,
      now: () => new Date(),
      random: () => 0.5,
      ...extra,
    };
    return { store, posts, run: (batch: ConsumerRecord[]) => processBatch(batch, ports, policy, () => undefined, plentyOfTime) };
  }

  it('records a batch of recorded messages in one write on the key, none on the events, and never sends it again', async () => {
    const { run, posts, store } = harness(10);
    const batch = await recorded(store, 'a', 3);
    const plan = await run(batch);
    expect(plan.failedMessageIds).toEqual([]);
    expect([...plan.outcomes.values()].map((outcome) => [outcome.kind, 'isCounted' in outcome ? outcome.isCounted : undefined])).toEqual([
      [OutcomeKind.delivered, true],
      [OutcomeKind.delivered, true],
      [OutcomeKind.delivered, true],
    ]);
    expect(store.writes.filter((write) => !write.startsWith('recordAccepted'))).toEqual(['beginBatch a1 a2 a3', 'recordDelivered a 3']);
    expect(['a1', 'a2', 'a3'].map((id) => store.events.get(id)?.status)).toEqual(['accepted', 'accepted', 'accepted']);
    // SQS hands the batch out again (the invocation stopped before its deletion): all of it was taken.
    const again = await run(batch.map((record) => ({ ...record, receiveCount: 2 })));
    expect(posts).toHaveLength(1);
    expect([...again.outcomes.values()].map((outcome) => outcome.kind)).toEqual([OutcomeKind.duplicate, OutcomeKind.duplicate, OutcomeKind.duplicate]);
  });

  it('records on its event a member that is not its event’s recorded message, and the others on the key', async () => {
    const { run, store } = harness(10);
    const batch = [...(await recorded(store, 'a', 2)), ...records('a', 1, 3)];
    await run(batch);
    expect(store.writes.filter((write) => !write.startsWith('recordAccepted'))).toEqual(['beginBatch a1 a2 a3', 'recordDelivered a 2', 'markDelivered a3']);
    expect(store.events.get('a3')?.status).toBe('delivered');
  });

  it('reads again, once, the records ingest had not written when the batch read them, and records the run on the key', async () => {
    let landing: (() => Promise<void>) | undefined;
    const { run, posts, store } = runs(undefined, (inner) => ({
      // Ingest's records land right after the batch's read, as when the consumer receives a message first.
      findSettled: async (queries) => {
        const answer = await inner.findSettled(queries);
        const land = landing;
        landing = undefined;
        await land?.();
        return answer;
      },
    }));
    const batch = records('a', 3);
    landing = async () => void (await recorded(store, 'a', 3));
    await run(batch);
    expect(posts).toEqual(['a1#1', 'a2#2', 'a3#3']);
    expect(store.reads.filter((read) => read.startsWith('findSettled'))).toEqual(['findSettled a1 a2 a3', 'findSettled a1 a2 a3']);
    expect(store.writes.filter((write) => !write.startsWith('recordAccepted'))).toEqual(['beginBatch a1 a2 a3', 'recordDelivered a 3']);
  });

  it('records a run on the key every ten deliveries and at its end, and sends none of it again', async () => {
    const { run, posts, store } = runs();
    const batch = await recorded(store, 'a', 25);
    const plan = await run(batch);
    expect(plan.failedMessageIds).toEqual([]);
    expect(posts).toHaveLength(25);
    expect(store.writes.filter((write) => write.startsWith('recordDelivered'))).toEqual(['recordDelivered a 10', 'recordDelivered a 20', 'recordDelivered a 25']);
    expect(store.writes.filter((write) => write.startsWith('markDelivered'))).toEqual([]);
    await run(batch.map((record) => ({ ...record, receiveCount: 2 })));
    expect(posts).toHaveLength(25);
  });

  it('records the deliveries before a failed member on the key before it counts the failure, and goes on from that member', async () => {
    let refusals = 1;
    const { run, posts, store } = runs((webhookId) => {
      if (webhookId === 'a3' && refusals > 0) {
        refusals -= 1;
        return refused;
      }
      return ok;
    });
    const batch = await recorded(store, 'a', 4);
    const plan = await run(batch);
    expect(plan.failedMessageIds).toEqual(['a3', 'a4']);
    expect(store.writes.filter((write) => !write.startsWith('recordAccepted'))).toEqual(['beginBatch a1 a2 a3 a4', 'recordDelivered a 2', 'beginAttempt a3', 'recordFailure a3']);
    await drain(run, batch.slice(2));
    expect(posts).toEqual(['a1#1', 'a2#2', 'a3#3', 'a3#3', 'a4#4']);
  });

  it("keeps a run's numbers for a replay, by its first event's place, before its first delivery is recorded", async () => {
    const kept: { firstPosition: string; firstSequence: number; eventIds: readonly string[] }[] = [];
    let store: InMemoryDeliveryStore | undefined;
    const harnessed = runs(undefined, undefined, {
      keepNumbers: async ({ firstPosition, firstSequence, eventIds }) => {
        // Nothing of the run is recorded on the key yet.
        expect(store?.writes.filter((write) => write.startsWith('recordDelivered'))).toEqual([]);
        kept.push({ firstPosition, firstSequence, eventIds });
      },
    });
    store = harnessed.store;
    const batch = await recorded(harnessed.store, 'a', 12);
    await harnessed.run(batch);
    const [first] = batch;
    expect(kept).toEqual([{ firstPosition: queuePositionOf({ messageGroupId: first?.messageGroupId ?? '', sequenceNumber: first?.sequenceNumber ?? '' }), firstSequence: 1, eventIds: batch.map((record) => record.messageId) }]);
  });

  it("records no delivery of a run whose numbers could not be kept: its events come back and go one at a time, with their numbers on their records", async () => {
    let failures = 1;
    const { run, posts, store } = runs(undefined, undefined, {
      keepNumbers: async () => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('DynamoDB is unavailable');
        }
      },
    });
    const batch = await recorded(store, 'a', 3);
    const failed = await run(batch);
    expect(failed.failedMessageIds).toEqual(['a1', 'a2', 'a3']);
    expect(store.writes.filter((write) => write.startsWith('recordDelivered'))).toEqual([]);
    await drain(run, batch);
    expect(['a1', 'a2', 'a3'].map((id) => store.events.get(id)?.sequence)).toEqual([1, 2, 3]);
    expect(posts.slice(-3)).toEqual(['a1#1', 'a2#2', 'a3#3']);
  });

  it('sends a run again, with its numbers, when the key’s write of its deliveries fails: it was never recorded', async () => {
    let failures = 1;
    const { run, posts, store } = runs(undefined, (inner) => ({
      recordDelivered: async (input) => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('DynamoDB is unavailable');
        }
        return inner.recordDelivered(input);
      },
    }));
    const batch = await recorded(store, 'a', 3);
    const failed = await run(batch);
    expect(failed.failedMessageIds).toEqual(['a1', 'a2', 'a3']);
    await drain(run, batch);
    expect(posts).toEqual(['a1#1', 'a2#2', 'a3#3', 'a1#1', 'a2#2', 'a3#3']);
  });
});

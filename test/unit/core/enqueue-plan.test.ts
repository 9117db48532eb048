import { describe, expect, it } from 'vitest';
import { planSendWaves, SendFailureKind, sendInKeyOrder, SendStatus, type OutgoingMessage, type SendFailure } from '../../../lambda/core/enqueue-plan.js';

const transient: SendFailure = { kind: SendFailureKind.transient, code: 'ServiceUnavailable' };

const message = (index: number, key: string, body = `{"i":${index}}`): OutgoingMessage => ({
  index,
  orderingKey: key,
  messageGroupId: `g-${key}`,
  deduplicationId: `evt_${index}`,
  body,
});

const indexes = (calls: OutgoingMessage[][][]) => calls.map((wave) => wave.map((call) => call.map((m) => m.index)));

describe('planSendWaves', () => {
  it('never puts two messages of one key in one call, and keeps each key in request order', () => {
    const messages = ['a', 'b', 'a', 'c', 'a', 'b'].map((key, i) => message(i, key));
    expect(indexes(planSendWaves(messages))).toEqual([[[0, 1, 3]], [[2, 5]], [[4]]]);
  });

  it('splits a wave into calls of at most 10 entries', () => {
    const messages = Array.from({ length: 25 }, (_, i) => message(i, `k${i}`));
    const waves = planSendWaves(messages);
    expect(waves).toHaveLength(1);
    expect(waves[0]?.map((call) => call.length)).toEqual([10, 10, 5]);
  });

  it('splits a call before its bodies exceed 1 MiB', () => {
    const big = 'x'.repeat(400_000);
    const messages = Array.from({ length: 4 }, (_, i) => message(i, `k${i}`, big));
    expect(indexes(planSendWaves(messages))).toEqual([[[0, 1], [2, 3]]]);
  });

  it('sends a single key one message per wave', () => {
    const messages = Array.from({ length: 12 }, (_, i) => message(i, 'only'));
    const waves = planSendWaves(messages);
    expect(waves).toHaveLength(12);
    expect(waves.flat(2).map((m) => m.index)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });
});

describe('sendInKeyOrder', () => {
  it('sends everything when SQS takes everything, and reports the number SQS gave each message', async () => {
    const sent: number[][] = [];
    const { statuses, sequenceNumbers } = await sendInKeyOrder(
      ['a', 'b', 'a'].map((key, i) => message(i, key)),
      async (entries) => {
        sent.push(entries.map((e) => e.index));
        return { refused: new Map(), sequenceNumbers: new Map(entries.map((e) => [e.index, `${e.index + 1}`])) };
      },
    );
    expect(sent).toEqual([[0, 1], [2]]);
    expect([...statuses.values()]).toEqual([SendStatus.sent, SendStatus.sent, SendStatus.sent]);
    expect(Object.fromEntries(sequenceNumbers)).toEqual({ 0: '1', 1: '2', 2: '3' });
  });

  it('sends no later event of a key after one of its events failed, and lets other keys go on', async () => {
    const keys = ['a', 'b', 'a', 'b', 'a', 'c'];
    const sent: number[] = [];
    const { statuses, failures } = await sendInKeyOrder(
      keys.map((key, i) => message(i, key)),
      async (entries) => {
        sent.push(...entries.map((e) => e.index));
        // SQS refuses the second event of key a (index 2).
        return { refused: new Map(entries.filter((e) => e.index === 2).map((e) => [e.index, transient])), sequenceNumbers: new Map() };
      },
    );
    expect(Object.fromEntries(statuses)).toEqual({
      0: SendStatus.sent,
      1: SendStatus.sent,
      2: SendStatus.failed,
      3: SendStatus.sent,
      4: SendStatus.notEnqueued,
      5: SendStatus.sent,
    });
    expect(sent).not.toContain(4);
    expect(Object.fromEntries(failures)).toEqual({ 2: transient });
  });

  it('holds back the rest of a key whose first event failed, while its neighbour in the call was taken', async () => {
    const { statuses } = await sendInKeyOrder(
      ['a', 'a', 'b'].map((key, i) => message(i, key)),
      async (entries) => ({ refused: new Map(entries.filter((e) => e.orderingKey === 'a' || e.index < 2).map((e) => [e.index, transient])), sequenceNumbers: new Map() }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 0: SendStatus.failed, 1: SendStatus.notEnqueued, 2: SendStatus.sent });
  });
});

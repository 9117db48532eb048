/**
 * The operator's actions on the local stack: redrive a key's dead letters in their original order
 * with their event ids and sequence numbers, marked as redeliveries; skip a stuck head on purpose.
 */
import { describe, expect, it } from 'vitest';
import type { DeadLetterRow } from '../../lambda/core/dead-letter.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { deadLettersOf, lagRowOf, redriveUntilDone } from './support/operator-api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

describe('local stack operator actions', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('ops');
  /** Event ids the receiver refuses for now. */
  const refusing = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2' },
    { respond: (webhook) => (refusing.has(webhook.webhookId ?? '') ? { statusCode: 500 } : undefined) },
  );

  const deadLetters = (subscription: string): Promise<DeadLetterRow[]> => deadLettersOf(stack(), subscription);

  it('redrives a key’s dead letters in their original order, with their ids and sequences, marked as redeliveries', async () => {
    const key = `${prefix}-redrive`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    refusing.add(`${key}-2`).add(`${key}-4`);
    const [group] = (await postEvents(stack().url, [1, 2, 3, 4, 5].map((n) => makeEvent(key, `${key}-${n}`)))).map((r) => r.message_group_id);
    await waitFor('the healthy events delivered', () => receiver().deliveredTo(key).length === 3);
    await waitFor('two dead letters listed', async () => (await deadLetters(key)).length === 2);
    expect((await deadLetters(key)).map((letter) => [letter.event_id, letter.sequence])).toEqual([
      [`${key}-2`, 2],
      [`${key}-4`, 4],
    ]);

    refusing.clear();
    let answer: { redriven: { event_id: string; sequence: number | null }[]; remaining: number; is_done: boolean } | undefined;
    const redriven: { event_id: string; sequence: number | null }[] = [];
    for (let step = 0; step < 10 && answer?.is_done !== true; step += 1) {
      const response = await call(stack().url, 'POST', '/v1/dead-letters/redrive', { subscription_id: key });
      expect(response.status).toBe(200);
      answer = response.body as typeof answer;
      redriven.push(...(answer?.redriven ?? []));
    }
    expect(answer).toMatchObject({ remaining: 0, is_done: true });
    expect(redriven).toEqual([
      { event_id: `${key}-2`, sequence: 2 },
      { event_id: `${key}-4`, sequence: 4 },
    ]);

    await waitFor('the redriven events delivered', () => receiver().deliveredTo(key).length === 5);
    const late = receiver().deliveredTo(key).slice(3);
    expect(late.map((d) => [d.webhookId, d.sequence, d.headers['webhook-redelivery']])).toEqual([
      [`${key}-2`, 2, 'true'],
      [`${key}-4`, 4, 'true'],
    ]);
    expect(receiver().deliveredTo(key).slice(0, 3).every((d) => d.headers['webhook-redelivery'] === undefined)).toBe(true);
    expect(await deadLetters(key)).toEqual([]);
    expect(await stack().eventItem(`${key}-2`)).toMatchObject({ status: 'delivered', sequence: 2 });
    expect(await stack().deadLetterItems(key)).toEqual([]);
    await waitFor('nothing of the key left in the lag view', async () => (await lagRowOf(stack(), group ?? '')) === undefined);
  });

  it('redrives a dead letter that was its key’s last head, attempting it afresh', async () => {
    const key = `${prefix}-last`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    refusing.add(`${key}-1`);
    await postEvents(stack().url, [makeEvent(key, `${key}-1`)]);
    await waitFor('the only event dead-lettered', async () => (await deadLetters(key)).length === 1);
    refusing.clear();
    await redriveUntilDone(stack(), key);
    await waitFor('the redriven event delivered', () => receiver().deliveredTo(key).length === 1);
    expect(receiver().deliveredTo(key).map((d) => [d.webhookId, d.sequence, d.headers['webhook-redelivery']])).toEqual([[`${key}-1`, 1, 'true']]);
    expect(await deadLetters(key)).toEqual([]);
  });

  it('keeps a dead letter too large for an item in the payload bucket, and redrives it whole', async () => {
    const key = `${prefix}-large`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    const large = { ...makeEvent(key, `${key}-1`), payload: { blob: 'x'.repeat(400_000) } };
    refusing.add(large.event_id);
    await postEvents(stack().url, [large]);
    await waitFor('the large event dead-lettered', async () => (await deadLetters(key)).length === 1);
    const [item] = await stack().deadLetterItems(key);
    expect(item?.queued_event).toBeUndefined();
    expect(String(item?.payload_key)).toMatch(/^dead-letters\//);

    refusing.clear();
    await redriveUntilDone(stack(), key);
    await waitFor('the large event delivered', () => receiver().deliveredTo(key).length === 1);
    const [delivered] = receiver().deliveredTo(key);
    expect((JSON.parse(delivered?.body ?? '{}') as { data: unknown }).data).toEqual(large.payload);
    expect(await stack().deadLetterItems(key)).toEqual([]);
  });

  it('answers a redrive with nothing to do as done', async () => {
    const key = `${prefix}-clean`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    const response = await call(stack().url, 'POST', '/v1/dead-letters/redrive', { subscription_id: key });
    expect(response).toMatchObject({ status: 200, body: { redriven: [], remaining: 0, is_done: true } });
  });

  it('answers 404 not_found to a redrive of an unknown subscription and a skip in an unknown group', async () => {
    const redrive = await call(stack().url, 'POST', '/v1/dead-letters/redrive', { subscription_id: `${prefix}-nobody` });
    expect(redrive).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    const skip = await call(stack().url, 'POST', `/v1/groups/${'0'.repeat(32)}/skip`, {});
    expect(skip).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

});

describe('local stack skip', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('skip');
  // So many attempts, 1 s apart, that only the operator's skip ends this head.
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '100', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    { respond: (webhook) => (webhook.webhookId === `${prefix}-key-1` ? { statusCode: 500 } : undefined) },
  );

  it('dead-letters a stuck head on purpose, recorded with its reason, and the key moves on in order', async () => {
    const key = `${prefix}-key`;
    await subscribe(stack().url, key, receiver().endpointFor(key));
    const [group] = (await postEvents(stack().url, [1, 2].map((n) => makeEvent(key, `${key}-${n}`)))).map((r) => r.message_group_id);
    await waitFor('the failing head in the lag view', async () => ((await lagRowOf(stack(), group ?? ''))?.head_attempts ?? 0) >= 2);

    const wrongHead = await call(stack().url, 'POST', `/v1/groups/${group}/skip`, { event_id: `${key}-2` });
    expect(wrongHead).toMatchObject({ status: 409, body: { error: { code: 'head_changed' } } });
    const skip = await call(stack().url, 'POST', `/v1/groups/${group}/skip`, { event_id: `${key}-1` });
    expect(skip).toMatchObject({ status: 202, body: { message_group_id: group, event_id: `${key}-1`, status: 'skip_requested' } });

    await waitFor('the rest of the key delivered', () => receiver().deliveredTo(key).length === 1);
    expect(receiver().deliveredTo(key).map((d) => [d.webhookId, d.sequence])).toEqual([[`${key}-2`, 2]]);
    const listed = await waitFor('the skipped head listed as a dead letter', async () => {
      const items = await deadLettersOf(stack(), key);
      return items.length === 1 ? items : undefined;
    });
    expect(listed[0]).toMatchObject({ event_id: `${key}-1`, sequence: 1 });
    expect(listed[0]?.reason).toMatch(/^skipped by an operator after \d+ attempts?$/);
    // The consumer writes the group's progress after the batch that delivered the key's rest: wait
    // until the lag view shows no failing head before asking to skip one.
    await waitFor('no failing head in the lag view', async () => ((await lagRowOf(stack(), group ?? ''))?.head_attempts ?? 0) === 0);
    const idle = await call(stack().url, 'POST', `/v1/groups/${group}/skip`, {});
    expect(idle).toMatchObject({ status: 409, body: { error: { code: 'no_failing_head' } } });
  });
});

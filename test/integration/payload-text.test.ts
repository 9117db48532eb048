/**
 * Payloads travel as posted (docs/api.md#payloads-travel-as-posted) through the local stack's HTTP API to the receiver: the
 * receiver's `data` is the payload's JSON text byte for byte (digits JSON.parse would round, `-0`,
 * key order, escapes, spaces), under a signature that verifies, alone, in a batch request and in a
 * batch webhook; dead letters (listed and redriven) and replays keep the text. A body that is not
 * UTF-8, or that repeats a key, is refused whole with 400, and nothing of it is delivered.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { call, makeEvent, postEvents, uniquePrefix } from './support/api.js';
import { deadLettersOf, redriveUntilDone } from './support/operator-api.js';
import { waitFor } from './support/poll.js';
import { SignatureCheck, type Attempt } from './support/receiver.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

/** What JSON.parse and JSON.stringify rewrite today: each would arrive altered. */
const ALTERED = '{"n":9007199254740993,"f":1e400,"neg":-0,"small":1e-400}';
/** More of the same: `1.0`, an integer-like key after another, escapes, spaces and a newline. */
const REWRITTEN = '{"one":1.0,"b":1,"2":2,"\\u00e9":"\\u00e9 \\/ 😀","list" : [ 1 ,\n 2 ]}';

/** An event's JSON text with its payload given as JSON text, so that nothing on our side rewrites it. */
function eventJson(subscriptionId: string, eventId: string, payloadJson: string): string {
  const { payload: _payload, ...envelope } = makeEvent(subscriptionId, eventId);
  return `${JSON.stringify(envelope).slice(0, -1)},"payload":${payloadJson}}`;
}

/** The text of the one `data` member of a single event's body: between `"data":` and the place fields that follow it. */
function dataTextOf(body: string): string {
  const start = body.indexOf('"data":') + '"data":'.length;
  const end = body.lastIndexOf(',"sequence":');
  expect(start).toBeGreaterThan('"data":'.length - 1);
  return body.slice(start, end);
}

describe('local stack: payloads travel as posted', { timeout: 90_000 }, () => {
  const prefix = uniquePrefix('payload-text');
  /** Event ids the receiver refuses with 500 while listed. */
  const refusing = new Set<string>();
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '2', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '1' },
    { respond: (webhook) => (refusing.has(webhook.webhookId ?? '') ? { statusCode: 500 } : undefined) },
  );

  async function subscribed(label: string, body: Record<string, unknown> = {}): Promise<string> {
    const id = `${prefix}-${label}`;
    const answer = await call(stack().url, 'PUT', `/v1/subscriptions/${encodeURIComponent(id)}`, { tenant_id: 'tenant-it', url: receiver().endpointFor(id), ...body });
    expect(answer.status).toBe(201);
    receiver().setSecret(id, (answer.body as { secret: string }).secret);
    return id;
  }

  /** The deliveries of an event (its webhook-id), each signature checked. */
  async function deliveriesOf(eventId: string, count = 1): Promise<Attempt[]> {
    const attempts = await waitFor(`${count} deliveries of ${eventId}`, () => {
      const delivered = receiver().delivered().filter((attempt) => attempt.webhookId === eventId);
      return delivered.length >= count ? delivered : undefined;
    });
    for (const attempt of attempts) expect(attempt.signature).toBe(SignatureCheck.verified);
    return attempts;
  }

  it('delivers the payload text byte for byte, signed, for a single event and each event of a batch request', async () => {
    const id = await subscribed('plain');
    const single = await call(stack().url, 'POST', '/v1/events', eventJson(id, `${id}-single`, ALTERED));
    expect(single.status).toBe(202);
    const batch = await call(stack().url, 'POST', '/v1/events', `{"events":[${eventJson(id, `${id}-b1`, REWRITTEN)},${eventJson(id, `${id}-b2`, ALTERED)}]}`);
    expect(batch.status).toBe(202);

    for (const [eventId, posted] of [[`${id}-single`, ALTERED], [`${id}-b1`, REWRITTEN], [`${id}-b2`, ALTERED]] as const) {
      const [delivery] = await deliveriesOf(eventId);
      expect(dataTextOf(delivery?.body ?? '')).toBe(posted);
    }
  });

  it('delivers each item\'s payload text byte for byte in a batch webhook, signed once over the body', async () => {
    const id = await subscribed('batch-webhook', { batch_size: 10 });
    const texts = [ALTERED, REWRITTEN, '{}', '{ "nested" : { "a" : [ 1.10 , { } ] } }'];
    const body = `{"events":[${texts.map((text, index) => eventJson(id, `${id}-${index}`, text)).join(',')}]}`;
    expect((await call(stack().url, 'POST', '/v1/events', body)).status).toBe(202);
    const batches = await waitFor('every item delivered', () => {
      const delivered = receiver().deliveredTo(id);
      return delivered.flatMap((attempt) => attempt.items ?? []).length === texts.length ? delivered : undefined;
    });
    for (const attempt of batches) expect(attempt.signature).toBe(SignatureCheck.verified);
    const bodies = batches.map((attempt) => attempt.body).join('\n');
    // `data` is the last member of each item: its text runs to the item's closing brace.
    for (const text of texts) expect(bodies).toContain(`"data":${text}}`);
  });

  it('refuses a body that is not UTF-8 with 400, storing and delivering nothing of it', async () => {
    const id = await subscribed('not-utf8');
    const bytes = Buffer.concat([Buffer.from(eventJson(id, `${id}-bad`, '{"name":"Zo').slice(0, -1)), Buffer.from([0xeb]), Buffer.from('"}}')]);
    const answer = await call(stack().url, 'POST', '/v1/events', new Uint8Array(bytes));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: { code: 'invalid_json', message: 'The request body is not UTF-8: it holds a byte sequence that is not a character.' } });
    // An event of the same key after it arrives first and alone: the refused one was never queued.
    await postEvents(stack().url, [makeEvent(id, `${id}-after`)]);
    await deliveriesOf(`${id}-after`);
    expect(receiver().deliveredTo(id).map((attempt) => attempt.webhookId)).toEqual([`${id}-after`]);
    expect(await stack().eventItem(`${id}-bad`)).toBeUndefined();
  });

  it('refuses a body that starts with a byte order mark with 400, as deployed: the local stack does not drop it', async () => {
    const id = await subscribed('bom');
    const answer = await call(stack().url, 'POST', '/v1/events', new Uint8Array(Buffer.from(`\ufeff${eventJson(id, `${id}-bom`, '{}')}`)));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: { code: 'invalid_json', message: 'The request body starts with a byte order mark (U+FEFF); send the JSON text without it.' } });
    expect(await stack().eventItem(`${id}-bom`)).toBeUndefined();
  });

  it('refuses a repeated key, in a payload or the envelope, with 400 naming its path, enqueuing nothing of the request', async () => {
    const id = await subscribed('repeats');
    const inPayload = await call(stack().url, 'POST', '/v1/events', `{"events":[${eventJson(id, `${id}-0`, '{"a":1}')},${eventJson(id, `${id}-1`, '{"x":{"a":1,"a":2}}')}]}`);
    expect(inPayload.status).toBe(400);
    expect(inPayload.body).toEqual({
      error: {
        code: 'invalid_request',
        message: 'The request body repeats a key in an object: which of its values is meant is unknown.',
        details: [{ path: 'events[1].payload.x.a', message: 'repeats a key of the same object' }],
      },
    });
    const inEnvelope = await call(stack().url, 'POST', '/v1/events', eventJson(id, `${id}-2`, '{}').replace('"type":', '"type":"a","type":'));
    expect(inEnvelope.status).toBe(400);
    expect((inEnvelope.body as { error: { details: unknown } }).error.details).toEqual([{ path: 'type', message: 'repeats a key of the same object' }]);
    for (const eventId of [`${id}-0`, `${id}-1`, `${id}-2`]) expect(await stack().eventItem(eventId)).toBeUndefined();
    await postEvents(stack().url, [makeEvent(id, `${id}-after`)]);
    await deliveriesOf(`${id}-after`);
    expect(receiver().deliveredTo(id).map((attempt) => attempt.webhookId)).toEqual([`${id}-after`]);
  });

  it('keeps the text in a dead letter: listed with include=payload as posted, and redriven as posted', async () => {
    const id = await subscribed('dead-letter');
    const eventId = `${id}-1`;
    refusing.add(eventId);
    expect((await call(stack().url, 'POST', '/v1/events', eventJson(id, eventId, REWRITTEN))).status).toBe(202);
    await waitFor('the event dead-lettered', async () => (await deadLettersOf(stack(), id)).some((row) => row.event_id === eventId));
    const listed = await fetch(`${stack().url}/v1/dead-letters?subscription_id=${encodeURIComponent(id)}&include=payload`);
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain(`"payload":${REWRITTEN}`);

    refusing.delete(eventId);
    expect((await redriveUntilDone(stack(), id)).map((letter) => letter.event_id)).toEqual([eventId]);
    const delivered = await waitFor('the redelivery', () => receiver().deliveredTo(id).find((attempt) => attempt.webhookId === eventId));
    expect(delivered.signature).toBe(SignatureCheck.verified);
    expect(delivered.headers['webhook-redelivery']).toBe('true');
    expect(dataTextOf(delivered.body)).toBe(REWRITTEN);
  });

  it('reads and redrives a dead letter stored before payloads travelled as text (its payload an object): as JSON.stringify writes it', async () => {
    const id = await subscribed('stored-before');
    const eventId = `${id}-1`;
    refusing.add(eventId);
    expect((await call(stack().url, 'POST', '/v1/events', eventJson(id, eventId, '{ "b" : 1.0, "a" : [ "\\u00e9" ] }'))).status).toBe(202);
    const [item] = await waitFor('the dead letter stored', async () => {
      const items = await stack().deadLetterItems(id);
      return items.some((stored) => stored['event_id'] === eventId) ? items.filter((stored) => stored['event_id'] === eventId) : undefined;
    });
    // The item as the version before wrote it: the payload as an object inside the queued event.
    const { payload_json: payloadJson, ...fields } = (JSON.parse(String(item?.['queued_event'])) as { event: { payload_json: string } }).event;
    const before = { ...(JSON.parse(String(item?.['queued_event'])) as object), event: { ...fields, payload: JSON.parse(payloadJson) as unknown } };
    await stack().clients.dynamo.send(
      new UpdateCommand({
        TableName: stack().resources.deadLettersTable,
        Key: { subscription_id: id, position: item?.['position'] },
        UpdateExpression: 'SET queued_event = :before',
        ExpressionAttributeValues: { ':before': JSON.stringify(before) },
      }),
    );
    const listed = await fetch(`${stack().url}/v1/dead-letters?subscription_id=${encodeURIComponent(id)}&include=payload`);
    expect(await listed.text()).toContain('"payload":{"b":1,"a":["é"]}');

    refusing.delete(eventId);
    await redriveUntilDone(stack(), id);
    const delivered = await waitFor('the redelivery', () => receiver().deliveredTo(id).find((attempt) => attempt.webhookId === eventId));
    expect(delivered.signature).toBe(SignatureCheck.verified);
    expect(dataTextOf(delivered.body)).toBe('{"b":1,"a":["é"]}');
  });

  it('replays an event with its payload text as posted', async () => {
    const id = await subscribed('replay');
    const since = new Date(Date.now() - 1000).toISOString();
    expect((await call(stack().url, 'POST', '/v1/events', eventJson(id, `${id}-1`, ALTERED))).status).toBe(202);
    await deliveriesOf(`${id}-1`);
    await waitFor('the replay done', async () => {
      const answer = await call(stack().url, 'POST', `/v1/subscriptions/${encodeURIComponent(id)}/replay`, { since });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return (answer.body as { is_done: boolean }).is_done;
    });
    const [first, replayed] = await deliveriesOf(`${id}-1`, 2);
    expect(replayed?.headers['webhook-redelivery']).toBe('true');
    expect(dataTextOf(first?.body ?? '')).toBe(ALTERED);
    expect(dataTextOf(replayed?.body ?? '')).toBe(ALTERED);
  });
});

import { describe, expect, it } from 'vitest';
import { encodeQueuedEvent, encodeQueuedMessage, isDeeperThan, parseEventsRequest, queuedEventFieldsOf, readEventsRequest, readJsonBody, readQueuedEvent, readQueuedMessage } from '../../../lambda/core/event.js';
import { MAX_PAYLOAD_DEPTH } from '../../../lambda/core/limits.js';

/** The JSON text of an object nested `depth` levels deep (`{}` is 1), built without recursion. */
const nestedJson = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

/** A request body, as text, whose payload is nested `depth` levels deep. */
const deepEventJson = (depth: number) =>
  `{"event_id":"evt_1","tenant_id":"tenant_1","subscription_id":"sub_1","type":"order.updated","payload":${nestedJson(depth)}}`;

/** Reads a body as the handler does: JSON text, then the schema. */
function readRequest(body: string) {
  const json = readJsonBody(body, false);
  if (!json.ok) throw new Error('expected JSON');
  return parseEventsRequest(json.value);
}

const ownKeysJson = '{"__proto__":{"polluted":true},"constructor":{"name":"x"},"prototype":1,"id":2}';


const event = (overrides: Record<string, unknown> = {}) => ({
  event_id: 'evt_1',
  tenant_id: 'tenant_1',
  subscription_id: 'sub_1',
  type: 'order.updated',
  payload: { id: 1 },
  ...overrides,
});

function refusal(value: unknown) {
  const parsed = parseEventsRequest(value);
  if (parsed.ok) throw new Error('expected a refusal');
  return parsed.refusal;
}

describe('readJsonBody', () => {
  it('refuses a body over 1 MiB as payload_too_large', () => {
    const body = JSON.stringify({ pad: 'x'.repeat(1_048_576) });
    const result = readJsonBody(body, false);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.refusal).toMatchObject({ code: 'payload_too_large' });
  });

  it('accepts exactly 1 MiB', () => {
    const body = JSON.stringify({ pad: 'x'.repeat(1_048_576 - 10) });
    expect(Buffer.byteLength(body)).toBe(1_048_576);
    expect(readJsonBody(body, false).ok).toBe(true);
  });

  it('counts bytes, not characters', () => {
    const body = JSON.stringify({ pad: 'é'.repeat(600_000) });
    expect(readJsonBody(body, false).ok).toBe(false);
  });

  it('decodes base64 bodies', () => {
    const result = readJsonBody(Buffer.from('{"a":1}').toString('base64'), true);
    expect(result).toEqual({ ok: true, value: { a: 1 } });
  });

  it.each(['', 'not json', '{"a":', '{"a":1}x'])('refuses %j as invalid_json', (body) => {
    const result = readJsonBody(body, false);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.refusal).toEqual({ code: 'invalid_json', message: 'The request body is not valid JSON.' });
  });
});

describe('readJsonBody: text and keys', () => {
  const refusalOf = (result: ReturnType<typeof readJsonBody>) => {
    if (result.ok) throw new Error('expected a refusal');
    return result.refusal;
  };
  const notUtf8 = { code: 'invalid_json', message: 'The request body is not UTF-8: it holds a byte sequence that is not a character.' };

  it.each([
    ['a lone continuation byte', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d])],
    ['a truncated sequence', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xe6, 0x97]), Buffer.from('"}')])],
    ['an overlong encoding of "/"', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
    ['an encoded surrogate (CESU-8)', Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])],
    ['Latin-1 text', Buffer.from('{"name":"Zoë"}', 'latin1')],
  ])('refuses a body that is not UTF-8 (%s) instead of replacing it with U+FFFD', (_label, bytes) => {
    expect(refusalOf(readJsonBody(bytes.toString('base64'), true))).toEqual(notUtf8);
  });

  it('refuses a text body holding a lone surrogate, which no UTF-8 makes', () => {
    expect(refusalOf(readJsonBody('{"a":"\ud800"}', false))).toEqual({ code: 'invalid_json', message: 'The request body is not UTF-8: it holds a lone surrogate.' });
  });

  it('reads UTF-8 of every plane, and an escaped lone surrogate (JSON text, not bytes), as it is', () => {
    const text = '{"a":"é 日本 😀 \uFFFF","b":"\\ud800"}';
    expect(readJsonBody(Buffer.from(text).toString('base64'), true)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it.each([
    ['as text', '\ufeff{"a":1}', false],
    ['as base64 bytes', Buffer.from('\ufeff{"a":1}').toString('base64'), true],
  ])('refuses a leading byte order mark %s, never drops it unseen', (_label, body, isBase64Encoded) => {
    expect(refusalOf(readJsonBody(body, isBase64Encoded))).toEqual({ code: 'invalid_json', message: 'The request body starts with a byte order mark (U+FEFF); send the JSON text without it.' });
  });

  it.each([
    ['{"a":1,"a":2}', ['a']],
    ['{"url":"https://a.example/","url":"https://b.example/"}', ['url']],
    ['{"a":{"b":1,"\\u0062":2}}', ['a.b']],
    ['{"events":[{"payload":{}}],"events":[]}', ['events']],
  ])('refuses %s, naming each repeated key by its path', (body, paths) => {
    expect(refusalOf(readJsonBody(body, false))).toEqual({
      code: 'invalid_request',
      message: 'The request body repeats a key in an object: which of its values is meant is unknown.',
      details: paths.map((path) => ({ path, message: 'repeats a key of the same object' })),
    });
  });
});

/** A request event's fields, with `payload` as its text in `body`. */
const single = (payloadText: string) => `{"event_id":"e","tenant_id":"t","subscription_id":"s","type":"x","payload":${payloadText}}`;

describe('readEventsRequest', () => {
  const altered = '{"n":9007199254740993,"f":1e400,"neg":-0,"small":1e-400,"one":1.0,"b":1,"2":2,"\\u00e9":"\\u00e9","ws" : [ 1 , 2 ]}';

  it('keeps a single event\'s payload text exactly as posted, and its value for validation', () => {
    const read = readEventsRequest(single(altered), false);
    if (!read.ok) throw new Error('expected the event to be accepted');
    expect(read.value.events.map((event) => event.payload_json)).toEqual([altered]);
    expect(read.value.events[0]?.payload).toEqual(JSON.parse(altered));
  });

  it('keeps each payload text of a batch, by its index', () => {
    const body = `{"events":[${single(altered)},${single('{}').replace('"e"', '"f"')},${single('{ "z" : 0.10 }').replace('"e"', '"g"')}]}`;
    const read = readEventsRequest(Buffer.from(body).toString('base64'), true);
    if (!read.ok) throw new Error('expected the events to be accepted');
    expect(read.value.events.map((event) => event.payload_json)).toEqual([altered, '{}', '{ "z" : 0.10 }']);
  });

  it.each([
    [single('{"a":1,"a":2}'), ['payload.a']],
    [`{"events":[${single('{}')},${single('{"x":{"a":1,"a":2}}').replace('"e"', '"f"')}]}`, ['events[1].payload.x.a']],
    [single('{}').replace('"type":"x"', '"type":"x","type":"y"'), ['type']],
  ])('refuses a repeated key in a payload or the envelope as invalid_request naming its path: %s', (body, paths) => {
    const read = readEventsRequest(body, false);
    expect(!read.ok && read.refusal).toMatchObject({ code: 'invalid_request', details: paths.map((path) => ({ path, message: 'repeats a key of the same object' })) });
  });

  it('still refuses a payload that is no object, or too deep, by its path', () => {
    const read = readEventsRequest(`{"events":[${single('[1]')},${single(nestedJson(MAX_PAYLOAD_DEPTH + 1)).replace('"e"', '"f"')}]}`, false);
    expect(!read.ok && read.refusal.details?.map((detail) => detail.path)).toEqual(['events[0].payload', 'events[1].payload']);
  });
});

describe('queued payload text', () => {
  const envelope = (event: string) => `{"version":1,"event":${event},"ordering_key":"s","message_group_id":"g","accepted_at":"2026-12-02T12:00:00.000Z"}`;
  const fields = '"event_id":"e","tenant_id":"t","subscription_id":"s","type":"x"';

  it('reads a message written before payloads travelled as text (payload an object) as the text JSON.stringify gives it', () => {
    const read = readQueuedEvent(envelope(`{${fields},"payload":{"b":1,"2":[1.0,"\\u00e9"],"__proto__":{"p":1}}}`));
    expect('queued' in read && read.queued.event).toStrictEqual({ event_id: 'e', tenant_id: 't', subscription_id: 's', type: 'x', payload_json: '{"2":[1,"é"],"b":1,"__proto__":{"p":1}}' });
  });

  it('reads a payload text back exactly, and writes it again the same', () => {
    const text = '{"n":9007199254740993, "e":"\\u00e9"}';
    const body = envelope(`{${fields},"payload_json":${JSON.stringify(text)}}`);
    const read = readQueuedEvent(body);
    if (!('queued' in read)) throw new Error(read.reason);
    expect(read.queued.event.payload_json).toBe(text);
    expect(encodeQueuedEvent(read.queued)).toBe(body);
  });

  it.each([
    ['both', `"payload":{},"payload_json":"{}"`, /^event\.payload_json must be given, or else payload/],
    ['neither', '', /^event\.payload_json must be given, or else payload/],
    ['a text that is no JSON', '"payload_json":"{"', /^event\.payload_json must be JSON text/],
    ['a text of an array', '"payload_json":"[]"', /^event\.payload_json must be a JSON object/],
    ['a text nested too deep', `"payload_json":${JSON.stringify(nestedJson(MAX_PAYLOAD_DEPTH + 1))}`, /^event\.payload_json must nest .* at most 64 levels deep/],
  ])('refuses a queued event with %s as a reason', (_label, payloadFields, reason) => {
    const read = readQueuedEvent(envelope(`{${fields}${payloadFields === '' ? '' : ','}${payloadFields}}`));
    expect('reason' in read && read.reason).toMatch(reason);
  });
});

describe('parseEventsRequest', () => {
  it('reads one event', () => {
    const parsed = parseEventsRequest(event());
    expect(parsed.ok && parsed.value.events).toEqual([{ ...event(), payload_json: '{"id":1}' }]);
  });

  it('reads a batch in request order', () => {
    const parsed = parseEventsRequest({ events: [event({ event_id: 'a' }), event({ event_id: 'b' })] });
    expect(parsed.ok && parsed.value.events.map((e) => e.event_id)).toEqual(['a', 'b']);
  });

  it.each([
    { name: 'a missing field', value: { events: [event(), event({ event_id: 'e2', type: undefined })] }, path: 'events[1].type' },
    { name: 'an empty event_id', value: event({ event_id: '' }), path: 'event_id' },
    { name: 'an event_id with a space', value: event({ event_id: 'evt 1' }), path: 'event_id' },
    { name: 'a non-ASCII event_id', value: event({ event_id: 'évt' }), path: 'event_id' },
    { name: 'an event_id of 129 characters', value: event({ event_id: 'e'.repeat(129) }), path: 'event_id' },
    { name: 'a tenant_id of 129 characters', value: event({ tenant_id: 't'.repeat(129) }), path: 'tenant_id' },
    { name: 'a resource_id of 257 characters', value: event({ resource_id: 'r'.repeat(257) }), path: 'resource_id' },
    { name: 'an array payload', value: event({ payload: [1, 2] }), path: 'payload' },
    { name: 'a null payload', value: event({ payload: null }), path: 'payload' },
    { name: 'a numeric type', value: { events: [event({ type: 7 })] }, path: 'events[0].type' },
    { name: 'an unknown field', value: event({ paylod: {} }), path: '(body)' },
    { name: 'an empty batch', value: { events: [] }, path: 'events' },
    { name: 'a batch of 101', value: { events: Array.from({ length: 101 }, (_, i) => event({ event_id: `e${i}` })) }, path: 'events' },
    { name: 'events that is not an array', value: { events: {} }, path: 'events' },
    { name: 'a body that is an array', value: [event()], path: '(body)' },
    { name: 'a body that is a string', value: 'event', path: '(body)' },
    { name: 'a repeated event_id', value: { events: [event(), event()] }, path: 'events[1].event_id' },
  ])('refuses $name, naming $path', ({ value, path }) => {
    const { code, details = [] } = refusal(value);
    expect(code).toBe('invalid_request');
    expect(details.length).toBeGreaterThan(0);
    expect(details.map((d) => d.path)).toContain(path);
    for (const detail of details) expect(detail.message.length).toBeGreaterThan(0);
  });

  it('accepts the SQS id alphabet in event ids, and 100 events', () => {
    const punctuation = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
    expect(parseEventsRequest(event({ event_id: `Az09${punctuation}` })).ok).toBe(true);
    const hundred = { events: Array.from({ length: 100 }, (_, i) => event({ event_id: `e${i}` })) };
    expect(parseEventsRequest(hundred).ok).toBe(true);
  });
});

describe('payload depth', () => {
  it(`accepts a payload exactly ${MAX_PAYLOAD_DEPTH} levels deep`, () => {
    expect(readRequest(deepEventJson(MAX_PAYLOAD_DEPTH)).ok).toBe(true);
  });

  it(`refuses a payload ${MAX_PAYLOAD_DEPTH + 1} levels deep as invalid_request, naming the limit and the payload`, () => {
    const parsed = readRequest(deepEventJson(MAX_PAYLOAD_DEPTH + 1));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.refusal.code).toBe('invalid_request');
      expect(parsed.refusal.details).toEqual([
        { path: 'payload', message: `must nest objects and arrays at most ${MAX_PAYLOAD_DEPTH} levels deep (MAX_PAYLOAD_DEPTH)` },
      ]);
    }
  });

  it('refuses a payload 10,000 levels deep (objects or arrays) without overflowing the stack', () => {
    const arrays = `{"event_id":"e","tenant_id":"t","subscription_id":"s","type":"x","payload":{"a":${'['.repeat(9_999)}${']'.repeat(9_999)}}}`;
    for (const body of [deepEventJson(10_000), arrays]) {
      const parsed = readRequest(body);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.refusal).toMatchObject({ code: 'invalid_request', details: [{ path: 'payload' }] });
    }
  });

  it('locates a too-deep payload in a batch', () => {
    const parsed = readRequest(`{"events":[${deepEventJson(3)},${deepEventJson(10_000).replace('evt_1', 'evt_2')}]}`);
    expect(!parsed.ok && parsed.refusal.details?.map((d) => d.path)).toEqual(['events[1].payload']);
  });

  it('counts the depth of objects and arrays, not of scalars', () => {
    expect(isDeeperThan('x', 0)).toBe(false);
    expect(isDeeperThan({}, 0)).toBe(true);
    expect(isDeeperThan({ a: [1, { b: null }] }, 3)).toBe(false);
    expect(isDeeperThan({ a: [1, { b: {} }] }, 3)).toBe(true);
    expect(isDeeperThan(JSON.parse('{"__proto__":{"a":{}}}'), 2)).toBe(true);
  });

  it('refuses a queued event whose payload is too deep, as a reason rather than an exception', () => {
    const body = `{"version":1,"event":${deepEventJson(10_000)},"ordering_key":"sub_1","message_group_id":"g","accepted_at":"2026-12-02T12:00:00.000Z"}`;
    const read = readQueuedEvent(body);
    expect('reason' in read && read.reason).toMatch(/^event\.payload must nest .* at most 64 levels deep/);
  });
});

describe('payload own keys', () => {
  it('keeps own "__proto__", "constructor" and "prototype" keys, with no prototype change', () => {
    const parsed = readRequest(`{"event_id":"e","tenant_id":"t","subscription_id":"s","type":"x","payload":${ownKeysJson}}`);
    if (!parsed.ok) throw new Error('expected the event to be accepted');
    const payload = parsed.value.events[0]!.payload;
    expect(Object.keys(payload)).toEqual(['__proto__', 'constructor', 'prototype', 'id']);
    expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
    expect(JSON.stringify(payload)).toBe(ownKeysJson);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('keeps them in a batch and through the queued body, as the text posted', () => {
    const parsed = readRequest(`{"events":[{"event_id":"e","tenant_id":"t","subscription_id":"s","type":"x","payload":${ownKeysJson}}]}`);
    if (!parsed.ok) throw new Error('expected the event to be accepted');
    const [accepted] = parsed.value.events;
    if (accepted === undefined) throw new Error('expected one event');
    expect(accepted.payload_json).toBe(ownKeysJson);
    const body = encodeQueuedEvent({ version: 1, event: queuedEventFieldsOf({ ...accepted, subscription_id: 's' }), ordering_key: 's', message_group_id: 'g', accepted_at: '2026-12-02T12:00:00.000Z' });
    expect(body).toContain(`"payload_json":${JSON.stringify(ownKeysJson)}`);
    expect(body).not.toContain('"payload":');
    const read = readQueuedEvent(body);
    if (!('queued' in read)) throw new Error(read.reason);
    expect(read.queued.event.payload_json).toBe(ownKeysJson);
  });
});

/** SQS's characters, as its API reference writes them: #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD | #x10000–#x10FFFF. */
const SQS_CHARACTERS = /^[\t\n\r\u{20}-\u{D7FF}\u{E000}-\u{FFFD}\u{10000}-\u{10FFFF}]*$/u;
/** fauxqs 2.4.1's check (sqsTypes.js INVALID_MESSAGE_BODY_CHAR), code unit by code unit: nothing above U+FFFF. */
const FAUXQS_REFUSED = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]/;

/** A queued event carrying `text` in every string it can: its type, tenant, key, and payload's keys and values. */
const queuedWith = (text: string, eventId = 'evt_1') => ({
  version: 1 as const,
  event: { event_id: eventId, tenant_id: `tenant ${text}`, subscription_id: 'sub_1', type: `type ${text}`, payload_json: JSON.stringify({ text, [text]: [text] }) },
  ordering_key: `sub_1 ${text}`,
  message_group_id: 'g1',
  accepted_at: '2026-12-03T10:00:00.000Z',
});

/** Texts with characters SQS or fauxqs refuse as they are, and characters around them that they take. */
const AWKWARD_TEXTS = [
  ['an emoji (a surrogate pair)', '😀 party 🎉'],
  ['U+FFFE and U+FFFF', 'a\uFFFEb\uFFFFc'],
  ['a lone high surrogate', 'x\uD800y'],
  ['a lone low surrogate', 'x\uDFFFy'],
  ['a low surrogate before a high one', '\uDC00\uD800'],
  ['controls, DEL and C1 controls', '\u0000\u0001\t\n\r\u001F\u007F\u0085'],
  ['non-ASCII of the BMP', 'é 日本語 \uE000 \uFFFD \uD7FF'],
  ['a backslash before a u', '\\u00e9 \\'],
] as const;

describe('encodeQueuedEvent', () => {
  it.each(AWKWARD_TEXTS)('writes %s so that SQS and fauxqs take it and JSON.parse gives the same value back', (_label, text) => {
    const queued = queuedWith(text);
    const body = encodeQueuedEvent(queued);
    expect(body).toMatch(SQS_CHARACTERS);
    expect(FAUXQS_REFUSED.test(body)).toBe(false);
    expect(JSON.parse(body)).toStrictEqual(queued);
    const read = readQueuedEvent(body);
    expect('queued' in read && read.queued.event.payload_json).toBe(JSON.stringify({ text, [text]: [text] }));
  });

  it('keeps characters of the BMP that SQS takes as they are, not escaped', () => {
    const body = encodeQueuedEvent(queuedWith('é 日本語'));
    expect(body).toContain('é 日本語');
    expect(Buffer.byteLength(body, 'utf8')).toBe(Buffer.byteLength(JSON.stringify(queuedWith('é 日本語')), 'utf8'));
  });

  it('escapes an emoji as its two surrogates', () => {
    const body = encodeQueuedEvent(queuedWith('😀'));
    expect(body).toContain('"type":"type \\ud83d\\ude00"');
    expect(body).toContain('"payload_json":"{\\"text\\":\\"\\ud83d\\ude00\\"');
  });
});

describe('encodeQueuedMessage', () => {
  it('writes one event as the same text as encodeQueuedEvent', () => {
    const queued = queuedWith('😀 \uFFFF é');
    expect(encodeQueuedMessage([queued])).toBe(encodeQueuedEvent(queued));
  });

  it.each(AWKWARD_TEXTS)('writes a pack with %s so that SQS and fauxqs take it, each event its own text as when alone', (_label, text) => {
    const events = [queuedWith(text, 'a'), queuedWith('plain', 'b'), queuedWith(`${text}${text}`, 'c')] as const;
    const body = encodeQueuedMessage(events);
    expect(body).toMatch(SQS_CHARACTERS);
    expect(FAUXQS_REFUSED.test(body)).toBe(false);
    expect(body).toBe(`{"version":2,"events":[${events.map(encodeQueuedEvent).join(',')}]}`);
    expect(JSON.parse(body)).toStrictEqual({ version: 2, events });
  });
});

describe('readQueuedMessage', () => {
  it('reads a message of one event as one item', () => {
    const queued = queuedWith('é');
    expect(readQueuedMessage(encodeQueuedEvent(queued))).toStrictEqual({ items: [{ queued }] });
  });

  it.each(AWKWARD_TEXTS)('reads a pack with %s back into its events, in order', (_label, text) => {
    const events = [queuedWith(text, 'a'), queuedWith('plain', 'b'), queuedWith(`${text}${text}`, 'c')] as const;
    expect(readQueuedMessage(encodeQueuedMessage(events))).toStrictEqual({ items: events.map((queued) => ({ queued })) });
  });

  it('reads each item of a pack on its own: one that is no event gets its reason and text, the others their event', () => {
    const first = queuedWith('a', 'a');
    const third = queuedWith('c', 'c');
    const bad = { ...queuedWith('b', 'b'), accepted_at: 'yesterday' };
    const read = readQueuedMessage(JSON.stringify({ version: 2, events: [first, bad, third] }));
    expect(read).toStrictEqual({
      items: [{ queued: first }, { reason: expect.stringMatching(/^events\.1: accepted_at /), text: JSON.stringify(bad) }, { queued: third }],
    });
  });

  it('gives a reason for a pack of fewer than two events', () => {
    const one = JSON.stringify({ version: 2, events: [queuedWith('a')] });
    const none = JSON.stringify({ version: 2, events: [] });
    expect(readQueuedMessage(one)).toStrictEqual({ reason: expect.any(String) });
    expect(readQueuedMessage(none)).toStrictEqual({ reason: expect.any(String) });
  });

  it('gives a reason for a body that is not JSON', () => {
    expect(readQueuedMessage('{"version":2,"events":[')).toStrictEqual({ reason: 'body is not JSON' });
  });
});

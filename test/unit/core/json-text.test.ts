import { describe, expect, it } from 'vitest';
import { scanJsonText, type JsonPath } from '../../../lambda/core/json-text.js';
import { MAX_PAYLOAD_DEPTH } from '../../../lambda/core/limits.js';

/** Takes the payload of a single event and of each event of a batch, as `readEventsRequest` does. */
const isPayload = (path: JsonPath): boolean =>
  (path.length === 1 && path[0] === 'payload') || (path.length === 3 && path[0] === 'events' && typeof path[1] === 'number' && path[2] === 'payload');

/** The payload texts the scan finds in `body`, each with its path. */
const payloadsOf = (body: string) => scanJsonText(body, isPayload, 3).captured;

describe('scanJsonText', () => {
  it.each([
    ['an integer beyond 2^53', '9007199254740993'],
    ['numbers JSON.parse rounds or overflows', '{"f":1e400,"small":1e-400,"neg":-0,"one":1.0,"exp":1E+2}'],
    ['integer-like keys after others (JSON.parse moves them first)', '{"b":1,"2":2,"a":3,"1":4}'],
    ['escapes of characters that need none', '{"\\u00e9":"\\u00e9\\/","t":"\\t\\ud83d\\ude00"}'],
    ['strings holding quotes, backslashes, brackets and braces', '{"s":"a \\" } ] , : { [ \\\\","t":"\\\\\\""}'],
    ['unicode as it is', '{"日本":"😀 é \u2028 \uFFFD"}'],
    ['empty objects and arrays, nested', '{"o":{},"a":[],"n":[[],{},[{}]]}'],
    ['whitespace inside, kept', '{ "a" : [ 1 , 2 ] ,\n\t"b" : { } }'],
    ['an own "__proto__" key', '{"__proto__":{"polluted":true},"constructor":1}'],
    ['literals', '{"t":true,"f":false,"z":null}'],
    ['a scalar payload', '"just a string"'],
  ])('captures %s exactly as written', (_label, payload) => {
    expect(payloadsOf(`{"event_id":"e","payload":${payload},"type":"x"}`)).toEqual([{ path: ['payload'], text: payload }]);
  });

  it('captures each payload of a batch with its index, and nothing at other depths', () => {
    const body = ' { "events" : [ {"payload":{"n":1.50}} , {"id":"p","payload" :[1,{"payload":2}] }, {"payload":"payload"} ] } ';
    expect(payloadsOf(body)).toEqual([
      { path: ['events', 0, 'payload'], text: '{"n":1.50}' },
      { path: ['events', 1, 'payload'], text: '[1,{"payload":2}]' },
      { path: ['events', 2, 'payload'], text: '"payload"' },
    ]);
  });

  it('does not take a key named payload deeper down, nor a value that merely reads "payload"', () => {
    expect(payloadsOf('{"data":{"payload":1},"x":["payload"]}')).toEqual([]);
  });

  it.each<[string, string, JsonPath[]]>([
    ['no repeat', '{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}', []],
    ['a repeat at the top', '{"a":1,"a":2}', [['a']]],
    ['a repeat spelt with an escape', '{"a":1,"\\u0061":2}', [['a']]],
    ['a repeat of "__proto__"', '{"__proto__":1,"__proto__":{}}', [['__proto__']]],
    ['a repeat inside an array item', '{"events":[{"x":1},{"payload":{"k":1,"k":1}}]}', [['events', 1, 'payload', 'k']]],
    ['several, in text order', '{"o":{"b":1,"b":2,"b":3},"o":0}', [['o', 'b'], ['o', 'b'], ['o']]],
    ['keys equal to values are no repeat', '{"a":"a","b":["a","a"]}', []],
    ['the empty key twice', '{"":1,"":2}', [['']]],
  ])('finds repeated keys: %s', (_label, text, repeated) => {
    expect(JSON.parse(text)).toBeDefined();
    expect(scanJsonText(text).repeatedKeys).toEqual(repeated);
  });

  it('scans nesting far beyond the depth limit without recursion, capturing the deep payload whole', () => {
    const depth = Math.max(MAX_PAYLOAD_DEPTH, 100_000);
    const payload = '['.repeat(depth) + ']'.repeat(depth);
    const body = `{"payload":${payload},"k":1,"k":2}`;
    const scan = scanJsonText(body, isPayload, 3);
    expect(scan.captured).toEqual([{ path: ['payload'], text: payload }]);
    expect(scan.repeatedKeys).toEqual([['k']]);
  });

  it('captures nothing unless asked', () => {
    expect(scanJsonText('{"payload":{}}').captured).toEqual([]);
  });
});

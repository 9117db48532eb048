/**
 * JSON written with members whose text is given, not their value: a payload goes out as the text
 * it was posted with (docs/api.md#payloads-travel-as-posted), in a webhook body and in an answer of the API.
 * `JSON.rawJSON` takes primitives only, and a placeholder replaced after JSON.stringify could
 * match a string of the same answer; so one writer, which JSON.stringify writes every other value for.
 */
/** A JSON text that {@link stringifyJson} writes as it is: the caller vouches that it is JSON. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** Whether a value has its own `toJSON`, as a Date does: JSON.stringify writes what it returns. */
function hasToJson(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** A value's JSON, or undefined where JSON.stringify leaves it out (undefined, a function, a symbol). */
function write(value: unknown): string | undefined {
  if (value instanceof RawJson) return value.text;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  if (hasToJson(value)) return write(value.toJSON());
  if (Array.isArray(value)) return `[${value.map((item: unknown) => write(item) ?? 'null').join(',')}]`;
  // Object.entries keeps an own "__proto__" key, as JSON.stringify does.
  const members = Object.entries(value).flatMap(([key, member]) => {
    const text = write(member);
    return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
  });
  return `{${members.join(',')}}`;
}

/**
 * The JSON text of a value as JSON.stringify writes it (no indentation), except that each
 * {@link RawJson} is written as its text. It recurses: for values this service builds (answers,
 * webhook bodies), whose only deep parts are payloads, which are raw text here.
 */
export function stringifyJson(value: unknown): string {
  return write(value) ?? 'null';
}

/**
 * What JSON.parse does not say about a JSON text: where a value stands in it, and whether an object
 * repeats a key (JSON.parse keeps the last silently). A payload travels as its own text
 * (docs/api.md#payloads-travel-as-posted): every digit and key as posted, which a value parsed
 * and written again would not keep (`1.0`, `1e400`, `-0`, integers beyond 2^53, key order, `\u00e9`).
 */

/** A place in a JSON value: object keys and array indexes from the root (`[]` is the root). */
export type JsonPath = readonly (string | number)[];

/** What {@link scanJsonText} found. */
export interface JsonTextScan {
  /** Each key that repeats a key of its object (compared decoded, so `"a"` and `"\u0061"` are one), by its path, in text order. */
  readonly repeatedKeys: readonly JsonPath[];
  /** The exact source text of each value whose path was asked for, with the path it was found at. */
  readonly captured: readonly { readonly path: JsonPath; readonly text: string }[];
}

/** An object or array the scan is inside of. */
interface Frame {
  readonly isObject: boolean;
  /** The object's keys so far, decoded. */
  readonly keys: Set<string>;
  /** The key of the member being read (objects), or the index of the item (arrays). */
  place: string | number;
  /** Whether the next string is a key (objects only: after `{` and after `,`). */
  isKeyNext: boolean;
  /** Where the value this frame is began, when it was asked for. */
  readonly capturedFrom: number | undefined;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** The index just past the string that starts at `start` (its opening quote). */
function endOfString(text: string, start: number): number {
  let index = start + 1;
  for (;;) {
    const next = text.indexOf('"', index);
    if (next < 0) throw new Error('unterminated string: the text is not valid JSON');
    // A quote is escaped when an odd number of backslashes stand right before it.
    let backslashes = 0;
    while (text[next - 1 - backslashes] === '\\') backslashes += 1;
    if (backslashes % 2 === 0) return next + 1;
    index = next + 1;
  }
}

/** The index just past a number, `true`, `false` or `null` that starts at `start`. */
function endOfLiteral(text: string, start: number): number {
  let index = start;
  while (index < text.length && !WHITESPACE.has(text[index] ?? '') && text[index] !== ',' && text[index] !== '}' && text[index] !== ']') index += 1;
  return index;
}

/**
 * Scans a JSON text that JSON.parse accepted (it assumes so, and is undefined otherwise): the keys
 * that repeat one of their object, and the source text of the values at depth at most
 * `maxCaptureDepth` whose path `isCaptured` takes. One pass, no recursion (an explicit stack), so
 * no nesting JSON.parse takes can overflow it; a key is decoded only when it holds an escape.
 */
export function scanJsonText(text: string, isCaptured: (path: JsonPath) => boolean = () => false, maxCaptureDepth = 0): JsonTextScan {
  const repeatedKeys: JsonPath[] = [];
  const captured: { path: JsonPath; text: string }[] = [];
  const stack: Frame[] = [];
  const pathOf = (): JsonPath => stack.map((frame) => frame.place);
  /** Where the value starting here should be captured from, if it is asked for. */
  const captureStart = (start: number): number | undefined => (stack.length <= maxCaptureDepth && isCaptured(pathOf()) ? start : undefined);
  const capture = (from: number | undefined, to: number): void => {
    if (from !== undefined) captured.push({ path: pathOf(), text: text.slice(from, to) });
  };
  let index = 0;
  while (index < text.length) {
    const character = text[index] ?? '';
    const frame = stack[stack.length - 1];
    if (WHITESPACE.has(character) || character === ':') {
      index += 1;
    } else if (character === ',') {
      if (frame?.isObject === true) frame.isKeyNext = true;
      else if (frame !== undefined && typeof frame.place === 'number') frame.place += 1;
      index += 1;
    } else if (character === '{' || character === '[') {
      stack.push({ isObject: character === '{', keys: new Set(), place: 0, isKeyNext: character === '{', capturedFrom: captureStart(index) });
      index += 1;
    } else if (character === '}' || character === ']') {
      const closed = stack.pop();
      index += 1;
      capture(closed?.capturedFrom, index);
    } else if (character === '"') {
      const end = endOfString(text, index);
      if (frame?.isObject === true && frame.isKeyNext) {
        const raw = text.slice(index + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        frame.place = key;
        if (frame.keys.has(key)) repeatedKeys.push(pathOf());
        frame.keys.add(key);
        frame.isKeyNext = false;
      } else {
        capture(captureStart(index), end);
      }
      index = end;
    } else {
      const end = endOfLiteral(text, index);
      capture(captureStart(index), end);
      index = end;
    }
  }
  return { repeatedKeys, captured };
}

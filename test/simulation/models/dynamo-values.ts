/**
 * Attribute values of the DynamoDB model, in the shape the DocumentClient gives and takes: strings,
 * numbers, booleans, null, arrays (L), plain objects (M), `Set<string>` (SS), `Set<number>` (NS) and
 * `Uint8Array` (B) outside keys. Binary sets (BS) and binary keys are not modelled.
 *
 * Values cross the model's edge only through `importValue` (caller to model) and `exportValue`
 * (model to caller), which both copy: the model never shares an object with its callers, as the
 * real client never does (it marshals to JSON and back).
 */
import { DynamoDBServiceException, type AttributeValue } from '@aws-sdk/client-dynamodb';

/** One attribute value, as stored by the model. Sets are never empty (DynamoDB has no empty set). */
export type ModelValue = string | number | boolean | null | Uint8Array | ModelValue[] | ModelMap | ModelSet;

/** A string set (SS) or a number set (NS). */
export type ModelSet = ReadonlySet<string> | ReadonlySet<number>;

/** A map (M) value, and an item: attribute name to value. */
export interface ModelMap {
  [name: string]: ModelValue;
}

/** The DynamoDB type of a value, as `attribute_type` names it. */
export type ModelValueType = 'S' | 'N' | 'B' | 'BOOL' | 'NULL' | 'L' | 'M' | 'SS' | 'NS';

/** A model limitation was hit (binary values, mixed sets, a number the model cannot hold exactly): a fault of the test, never an AWS outcome. */
export class DynamoModelUnsupportedError extends Error {
  override readonly name = 'DynamoModelUnsupportedError';
}

/** An error as the SDK throws it for a DynamoDB error response of this name (`ValidationException`, …). */
export function createServiceError(name: string, message: string): DynamoDBServiceException {
  return new DynamoDBServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: 400 }, message });
}

/** DynamoDB's ValidationException, the answer to every malformed request. */
export function validationError(message: string): DynamoDBServiceException {
  return createServiceError('ValidationException', message);
}

/** Narrows to a map (M) value: an object that is neither a list nor a set. */
export function isModelMap(value: unknown): value is ModelMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Set) && !(value instanceof Uint8Array);
}

/** Narrows to a set value (`instanceof Set` does not narrow a `ReadonlySet`). */
export function isModelSet(value: unknown): value is ModelSet {
  return value instanceof Set;
}

/** Whether a caller's value is a plain object, as the marshaller takes for a map (class instances it refuses). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** The DynamoDB type of a value; a set's from its elements (never empty). */
export function typeOfValue(value: ModelValue): ModelValueType {
  if (typeof value === 'string') return 'S';
  if (typeof value === 'number') return 'N';
  if (typeof value === 'boolean') return 'BOOL';
  if (value === null) return 'NULL';
  if (value instanceof Uint8Array) return 'B';
  if (Array.isArray(value)) return 'L';
  if (isModelSet(value)) return typeOfSet(value);
  return 'M';
}

function typeOfSet(value: ReadonlySet<unknown>): 'SS' | 'NS' {
  for (const element of value) return typeof element === 'number' ? 'NS' : 'SS';
  return 'SS';
}

/**
 * Copies a caller's value into the model, with the checks and conversions lib-dynamodb's marshaller
 * applies with `removeUndefinedValues: true` (what `lambda/adapters/aws-clients.ts` configures):
 * undefined members of maps and lists are dropped; an empty set, NaN, ±Infinity and unsafe integers
 * are refused on the client, with the marshaller's own message, before any request is sent.
 * @returns undefined for an undefined value (the caller drops it)
 * @throws Error as the marshaller does; DynamoModelUnsupportedError for what the model does not hold
 */
export function importValue(value: unknown): ModelValue | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return importNumber(value);
  if (Array.isArray(value)) {
    const list: ModelValue[] = [];
    for (const element of value) {
      if (typeof element === 'function') continue;
      const imported = importValue(element);
      if (imported !== undefined) list.push(imported);
    }
    return list;
  }
  if (value instanceof Set) return importSet(value);
  if (isPlainObject(value)) return importMap(value);
  // A copy of the bytes, as the marshaller sends them (a Buffer is a Uint8Array, read back as one).
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) throw new DynamoModelUnsupportedError('binary values other than Uint8Array are not modelled');
  throw new Error(`Unsupported type passed: ${String(value)}. Pass options.convertClassInstanceToMap=true to marshall typeof object as map attribute.`);
}

/** Copies a caller's map (an item, a key, expression values) into the model. */
export function importMap(value: Record<string, unknown>): ModelMap {
  const map: ModelMap = {};
  for (const name of Object.keys(value)) {
    const member = value[name];
    if (typeof member === 'function') continue;
    const imported = importValue(member);
    if (imported !== undefined) map[name] = imported;
  }
  return map;
}

function importNumber(value: number): number {
  if (Number.isNaN(value) || !Number.isFinite(value)) throw new Error(`Special numeric value ${String(value)} is not allowed`);
  if (value > Number.MAX_SAFE_INTEGER) throw new Error(`Number ${String(value)} is greater than Number.MAX_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`);
  if (value < Number.MIN_SAFE_INTEGER) throw new Error(`Number ${String(value)} is lesser than Number.MIN_SAFE_INTEGER. Use NumberValue from @aws-sdk/lib-dynamodb.`);
  // -0 travels as "0".
  return value === 0 ? 0 : value;
}

function importSet(value: ReadonlySet<unknown>): ReadonlySet<string> | ReadonlySet<number> {
  const elements = [...value].filter((element) => element !== undefined);
  if (elements.length === 0) throw new Error('Pass a non-empty set, or options.convertEmptyValues=true.');
  if (elements.every((element): element is string => typeof element === 'string')) return new Set(elements);
  if (elements.every((element): element is number => typeof element === 'number')) return new Set(elements.map(importNumber));
  throw new DynamoModelUnsupportedError('only sets of strings or of numbers are modelled');
}

/** Copies a model value out to a caller. */
export function exportValue(value: ModelValue): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (Array.isArray(value)) return value.map(exportValue);
  if (isModelSet(value)) return new Set<unknown>(value);
  return exportMap(value);
}

/** Copies an item (or any map) out to a caller. */
export function exportMap(map: ModelMap): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const name of Object.keys(map)) {
    const member = map[name];
    if (member !== undefined) copy[name] = exportValue(member);
  }
  return copy;
}

/** A deep copy inside the model. */
export function cloneValue(value: ModelValue): ModelValue {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Uint8Array) return new Uint8Array(value);
  if (Array.isArray(value)) return value.map(cloneValue);
  if (isModelSet(value)) return copySet(value);
  return cloneMap(value);
}

/** A deep copy of an item (items are copied before an update changes them). */
export function cloneMap(map: ModelMap): ModelMap {
  const copy: ModelMap = {};
  for (const name of Object.keys(map)) {
    const member = map[name];
    if (member !== undefined) copy[name] = cloneValue(member);
  }
  return copy;
}

function copySet(set: ModelSet): ModelSet {
  return toSet([...set]) ?? new Set<string>();
}

/** A set of the elements' type; undefined for no elements (DynamoDB has no empty set). */
function toSet(elements: readonly (string | number)[]): ModelSet | undefined {
  if (elements.length === 0) return undefined;
  const numbers = elements.filter((element): element is number => typeof element === 'number');
  return numbers.length === elements.length ? new Set(numbers) : new Set(elements.filter((element): element is string => typeof element === 'string'));
}

/** Whether two sets are of one type (SS and SS, or NS and NS). */
export function isSameSetType(a: ModelSet, b: ModelSet): boolean {
  return typeOfSet(a) === typeOfSet(b);
}

/** ADD of a set: every element of either. */
export function unionSets(a: ModelSet, b: ModelSet): ModelSet {
  return toSet([...a, ...b]) ?? a;
}

/** DELETE of a set: the elements of `a` not in `b`, or undefined when none is left. */
export function subtractSets(a: ModelSet, b: ModelSet): ModelSet | undefined {
  const removed: ReadonlySet<unknown> = b;
  return toSet([...a].filter((element) => !removed.has(element)));
}

/**
 * The value in DynamoDB's wire format (`{S: 'x'}`, `{N: '1'}`, …). The DocumentClient does not
 * unmarshal the `Item` of a ConditionalCheckFailedException (https://github.com/aws/aws-sdk-js-v3/issues/6723; its
 * middleware only unmarshals successful outputs), so the model hands it over in this form.
 */
export function marshallValue(value: ModelValue): AttributeValue {
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (value instanceof Uint8Array) return { B: new Uint8Array(value) };
  if (value === null) return { NULL: true };
  if (Array.isArray(value)) return { L: value.map(marshallValue) };
  if (isModelSet(value)) {
    return typeOfSet(value) === 'NS' ? { NS: [...value].map(String) } : { SS: [...value].map(String) };
  }
  return { M: marshallMap(value) };
}

/** An item in DynamoDB's wire format, attribute by attribute. */
export function marshallMap(map: ModelMap): Record<string, AttributeValue> {
  const marshalled: Record<string, AttributeValue> = {};
  for (const name of Object.keys(map)) {
    const member = map[name];
    if (member !== undefined) marshalled[name] = marshallValue(member);
  }
  return marshalled;
}

/** DynamoDB equality: same type and same value; sets regardless of order, lists in order, maps by members. */
export function valuesEqual(a: ModelValue, b: ModelValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index += 1) {
      const left = a[index];
      const right = b[index];
      if (left === undefined || right === undefined || !valuesEqual(left, right)) return false;
    }
    return true;
  }
  if (isModelSet(a)) {
    if (!isModelSet(b) || a.size !== b.size || typeOfSet(a) !== typeOfSet(b)) return false;
    const members: ReadonlySet<unknown> = b;
    for (const element of a) if (!members.has(element)) return false;
    return true;
  }
  if (Array.isArray(b) || isModelSet(b)) return false;
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  for (const name of names) {
    const left = a[name];
    const right = b[name];
    if (left === undefined || right === undefined || !valuesEqual(left, right)) return false;
  }
  return true;
}

/**
 * Orders two strings as DynamoDB does, by their UTF-8 bytes. UTF-8 byte order is code point order;
 * UTF-16 code unit order differs from it only where a surrogate meets a unit at or above U+E000,
 * which this shifts into place.
 */
export function compareStrings(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    let left = a.charCodeAt(index);
    let right = b.charCodeAt(index);
    if (left === right) continue;
    if (left >= 0xd800) left += left >= 0xe000 ? -0x800 : 0x2000;
    if (right >= 0xd800) right += right >= 0xe000 ? -0x800 : 0x2000;
    return left - right;
  }
  return a.length - b.length;
}

/** Orders two key values of one type (S or N), as DynamoDB sorts a sort key. */
export function compareKeyValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return compareStrings(String(a), String(b));
}

/**
 * Orders two scalar values for `< <= > >= BETWEEN`: numbers numerically, strings by UTF-8 bytes.
 * @returns undefined when DynamoDB does not order them (different types, or not S or N): the comparison is false
 */
export function compareScalars(a: ModelValue | undefined, b: ModelValue | undefined): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return undefined;
}

const utf8 = new TextEncoder();

/** UTF-8 length of a string; ASCII strings (the usual case) are measured without encoding. */
export function utf8Length(text: string): number {
  let length = text.length;
  for (let index = 0; index < text.length; index += 1) {
    if (text.charCodeAt(index) > 0x7f) {
      length = utf8.encode(text).length;
      break;
    }
  }
  return length;
}

/** "About one byte per two significant digits, plus one byte" (DynamoDB item sizes and formats). */
function numberSize(value: number): number {
  const digits = Math.abs(value)
    .toExponential()
    .replace(/e.*$/, '')
    .replace('.', '')
    .replace(/0+$/, '');
  return 1 + Math.ceil(Math.max(1, digits.length) / 2);
}

/**
 * A value's size by DynamoDB's documented rules (item sizes and formats): strings by UTF-8 bytes,
 * numbers about one byte per two significant digits plus one, booleans and null one byte, lists
 * and maps three bytes plus one byte and the size of each element (a map's element counts its name).
 */
export function valueSize(value: ModelValue): number {
  if (typeof value === 'string') return utf8Length(value);
  if (typeof value === 'number') return numberSize(value);
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) {
    let size = 3;
    for (const element of value) size += 1 + valueSize(element);
    return size;
  }
  if (isModelSet(value)) {
    let size = 0;
    for (const element of value) size += typeof element === 'number' ? numberSize(element) : utf8Length(element);
    return size;
  }
  return 3 + Object.keys(value).length + itemSize(value);
}

/** An item's size: the UTF-8 length of each attribute name plus the size of its value. */
export function itemSize(item: ModelMap): number {
  let size = 0;
  for (const name of Object.keys(item)) {
    const value = item[name];
    if (value !== undefined) size += utf8Length(name) + valueSize(value);
  }
  return size;
}

interface ScaledDecimal {
  readonly digits: bigint;
  readonly scale: number;
}

function toScaledDecimal(value: number): ScaledDecimal {
  const [mantissa = '0', exponentText] = String(value).split('e');
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const scale = fraction.length - exponent;
  const digits = BigInt(`${whole}${fraction}`);
  return scale >= 0 ? { digits, scale } : { digits: digits * 10n ** BigInt(-scale), scale: 0 };
}

/**
 * `a + b` as DynamoDB computes it: in decimal, so 0.1 + 0.2 is 0.3 (JavaScript's doubles would give
 * 0.30000000000000004). Integers take the fast path.
 * @throws DynamoModelUnsupportedError when the sum is an integer beyond 2^53, which the DocumentClient would read as a bigint
 */
export function addNumbers(a: number, b: number): number {
  let sum: number;
  if (Number.isInteger(a) && Number.isInteger(b)) {
    sum = a + b;
  } else {
    const left = toScaledDecimal(a);
    const right = toScaledDecimal(b);
    const scale = Math.max(left.scale, right.scale);
    const total = left.digits * 10n ** BigInt(scale - left.scale) + right.digits * 10n ** BigInt(scale - right.scale);
    const negative = total < 0n;
    const text = (negative ? -total : total).toString().padStart(scale + 1, '0');
    sum = Number(`${negative ? '-' : ''}${text.slice(0, text.length - scale)}.${text.slice(text.length - scale) || '0'}`);
  }
  if (!Number.isSafeInteger(sum) && Number.isInteger(sum)) throw new DynamoModelUnsupportedError(`the sum ${String(sum)} is beyond the integers the model holds exactly`);
  return sum === 0 ? 0 : sum;
}

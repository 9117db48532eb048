/**
 * DynamoDB's capacity arithmetic, as AWS documents it, for items in the document client's form
 * (plain strings, numbers, booleans, arrays, objects, Sets, Uint8Arrays): the size of an item,
 * the write and read units one request consumes, and the writes a global secondary index adds.
 * The benchmark applies it to the items it observes, since dynalite reports no index units and
 * nothing for a refused conditional write, which AWS bills all the same.
 *
 * Sources: item sizes, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html;
 * index writes, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes
 */

/** An item as the document client reads and writes it. */
export type Item = Readonly<Record<string, unknown>>;

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A number's size: one byte per two significant digits, plus one. */
export function numberSize(value: number | bigint): number {
  const digits = String(value)
    .replace(/^-/, '')
    .replace(/e.*$/i, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

/** The size in bytes of one attribute value (without its name). */
export function valueSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let size = 0;
    for (const member of value) size += valueSize(member);
    return size;
  }
  // Lists and maps: 3 bytes of overhead, and 1 byte per element.
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, member: unknown) => sum + 1 + valueSize(member), 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value).reduce((sum, [name, member]) => sum + 1 + utf8Bytes(name) + valueSize(member), 0);
  }
  return utf8Bytes(String(value));
}

/** The size in bytes of an item: each attribute's name and value. */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => (value === undefined ? sum : sum + utf8Bytes(name) + valueSize(value)), 0);
}

/** Write units of one standard write of an item of `bytes`: 1 per KB started, at least 1. */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

/** Read units of reading `bytes`: 1 per 4 KB started (at least 1), halved when eventually consistent. */
export function readUnits(bytes: number, isConsistent: boolean): number {
  const units = Math.max(1, Math.ceil(bytes / 4096));
  return isConsistent ? units : units / 2;
}

/**
 * Write units of a PutItem, UpdateItem or DeleteItem on the table itself: the larger of the item
 * before and after (a refused conditional write is billed on the item as it stands).
 */
export function tableWriteUnits(before: Item | undefined, after: Item | undefined): number {
  return writeUnits(Math.max(before === undefined ? 0 : itemSize(before), after === undefined ? 0 : itemSize(after)));
}

/**
 * A global secondary index, as the unit arithmetic needs it: its key, what it projects, and the
 * table's key attributes (which every index holds).
 */
export interface IndexKeys {
  readonly partitionKey: string;
  readonly sortKey?: string;
  /** `ALL`: the whole item; `KEYS_ONLY`: the table's and the index's key attributes alone. Default `ALL` (a checkout from before projections were declared). */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
  /** The table's key attributes; needed for `KEYS_ONLY`. */
  readonly tableKeys?: readonly string[];
}

const isIndexed = (item: Item | undefined, index: IndexKeys): item is Item =>
  item !== undefined && item[index.partitionKey] !== undefined && (index.sortKey === undefined || item[index.sortKey] !== undefined);

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** What the index holds of an item. */
function projectedItem(item: Item, index: IndexKeys): Item {
  if (index.projection !== 'KEYS_ONLY') return item;
  const names = [...(index.tableKeys ?? []), index.partitionKey, ...(index.sortKey === undefined ? [] : [index.sortKey])];
  return Object.fromEntries(names.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]));
}

/**
 * Write units a write adds on one index, by AWS's rules: an item entering the index is one put,
 * one leaving it one delete, a changed index key a delete and a put, a change of an attribute the
 * index holds one put; a change of attributes the index does not hold (all but the keys, for
 * `KEYS_ONLY`) costs the index nothing. Each is billed on the size of what the index holds.
 */
export function indexWriteUnits(before: Item | undefined, after: Item | undefined, index: IndexKeys): number {
  const wasIn = isIndexed(before, index);
  const isIn = isIndexed(after, index);
  if (!wasIn && !isIn) return 0;
  if (!wasIn && isIn) return writeUnits(itemSize(projectedItem(after, index)));
  if (wasIn && !isIn) return writeUnits(itemSize(projectedItem(before, index)));
  if (!wasIn || !isIn) return 0;
  const held = { before: projectedItem(before, index), after: projectedItem(after, index) };
  const keys = [index.partitionKey, ...(index.sortKey === undefined ? [] : [index.sortKey])];
  if (keys.some((key) => !sameValue(before[key], after[key]))) return writeUnits(itemSize(held.before)) + writeUnits(itemSize(held.after));
  const names = new Set([...Object.keys(held.before), ...Object.keys(held.after)]);
  for (const name of names) if (!sameValue(held.before[name], held.after[name])) return writeUnits(itemSize(held.after));
  return 0;
}

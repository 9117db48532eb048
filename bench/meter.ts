/**
 * Counts every AWS SDK call a local stack makes, in the bench worker's process only, without a
 * hook in the code under test (a baseline checkout has none): `send` of the SDK's base client
 * class is wrapped, in the copy the checkout's own node_modules load, and each call is attributed
 * to the function it would run in on AWS.
 *
 * Attribution: an AsyncLocalStorage context. Requests to the HTTP API run in the context of the
 * function their route belongs to (node:http's `request` event is wrapped); the bench's own calls
 * run in `bench` and are not counted; everything else the stack started (the pollers and the
 * consumer they invoke) runs in `background`, where the synchronous stack at `send` tells Lambda's
 * poller (local/event-source-mapping.ts) from the consumer (lambda/).
 *
 * Units (only when `measureUnits` is on, since they cost extra round trips): reads from the
 * ConsumedCapacity dynalite returns when asked; writes from the item before and after, read by
 * the bench around the write, by AWS's rules (dynamo-units.ts), index replication included.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { indexWriteUnits, itemSize, readUnits, tableWriteUnits, type IndexKeys, type Item } from './dynamo-units.js';
import { EMPTY_RECEIVE, type CallCount, type Caller, type HotItem } from './usage.js';

/** Who is running: a function of the stack, the stack's background work, or the bench itself. */
export type Context = Caller | 'background' | 'bench';

/** The context of the code running now. */
export const benchContext = new AsyncLocalStorage<Context>();

/** What the meter needs to know of a table: its key and its indexes. */
export interface TableShape {
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly indexes?: readonly IndexKeys[];
}

/** Reads one item as it stands, for the unit arithmetic; runs in the `bench` context. */
export type ShadowGet = (table: string, key: Item) => Promise<Item | undefined>;

/** A record of an object's own string-keyed fields, or undefined when it is not an object. */
function fields(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** The name of an object's class, or '' for anything else. */
function classNameOf(value: unknown): string {
  const constructor: unknown = typeof value === 'object' && value !== null ? Reflect.get(value, 'constructor') : undefined;
  return typeof constructor === 'function' ? constructor.name : '';
}

const DOCUMENT_OPERATIONS: Readonly<Record<string, string>> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactGet: 'TransactGetItems',
  TransactWrite: 'TransactWriteItems',
};

/** `GetCommand` → `GetItem`, `SendMessageBatchCommand` → `SendMessageBatch`. */
export function operationOf(commandName: string): string {
  const bare = commandName.replace(/Command$/, '');
  return DOCUMENT_OPERATIONS[bare] ?? bare;
}

/** `DynamoDBDocumentClient` → `DynamoDB`, `SQSClient` → `SQS`. */
export function serviceOf(clientName: string): string {
  return clientName.replace(/(Document)?Client$/, '');
}

/** The function a route of the HTTP API belongs to (lambda/routes.ts), or `bench` for other servers. */
export function callerOfPath(path: string): Context {
  if (path === '/v1/events' || path === '/health' || path === '/openapi.json') return 'ingest';
  if (path.startsWith('/v1/subscriptions')) return 'subscriptions';
  if (path.startsWith('/v1/')) return 'operations';
  return 'bench';
}

/**
 * The caller of a call made in the `background` context, from the synchronous stack at `send`:
 * the topmost frame in the project's own code says whose call it is.
 */
export function callerOfStack(stack: string): Caller {
  for (const line of stack.split('\n')) {
    if (line.includes('node_modules') || line.includes('/bench/')) continue;
    if (line.includes('event-source-mapping')) return 'poller';
    if (line.includes('/lambda/')) return 'consumer';
  }
  return 'consumer';
}

/** SQS requests billed for `bytes` of payload: one per 64 KB chunk started, at least one. */
export function sqsBilledRequests(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / (64 * 1024)));
}

function messageBytes(message: unknown): number {
  const fieldsOf = fields(message);
  if (fieldsOf === undefined) return 0;
  const body = typeof fieldsOf.MessageBody === 'string' ? fieldsOf.MessageBody : typeof fieldsOf.Body === 'string' ? fieldsOf.Body : '';
  const attributes = JSON.stringify(fieldsOf.MessageAttributes ?? {});
  return Buffer.byteLength(body, 'utf8') + (attributes === '{}' ? 0 : Buffer.byteLength(attributes, 'utf8'));
}

/** The running totals of a meter. */
interface Totals {
  calls: Map<string, CallCount>;
  items: Map<string, Map<string, { read: number; write: number }>>;
  consumerInvocations: number;
  longestGroupRuns: number;
  logBytes: Record<string, number>;
  logLines: Record<string, number>;
  warnings: string[];
}

/**
 * The events a message body holds: a pack's (`{"version": 2, "events": [...]}`), or one. Read
 * here rather than with the consumer's reader, so that the meter counts a baseline's messages too.
 */
function eventsIn(body: unknown): number {
  if (typeof body !== 'string') return 1;
  try {
    const events = fields(JSON.parse(body))?.events;
    return Array.isArray(events) ? events.length : 1;
  } catch {
    return 1;
  }
}

const emptyTotals = (): Totals => ({ calls: new Map(), items: new Map(), consumerInvocations: 0, longestGroupRuns: 0, logBytes: {}, logLines: {}, warnings: [] });

/** What a meter counted since its last reset. */
export interface MeterSnapshot {
  readonly calls: CallCount[];
  readonly hotItems: HotItem[];
  readonly consumerInvocations: number;
  readonly meanLongestGroupRun: number;
  readonly logBytes: Record<string, number>;
  readonly logLines: Record<string, number>;
  /** Warning and error lines the stack printed (the first few). */
  readonly warnings: string[];
}

/** The meter installed in a worker process: one per process, reset before each run. */
export interface Meter {
  /** Starts counting afresh. */
  readonly reset: () => void;
  readonly snapshot: (events: number) => MeterSnapshot;
  /** Whether write and read units are measured (extra reads around each write). */
  measureUnits: boolean;
  /** Tables by name, for keys and indexes; and the reader of items as they stand. */
  configureTables: (tables: ReadonlyMap<string, TableShape>, shadowGet: ShadowGet) => void;
}

const SDK_PACKAGES = ['@aws-sdk/client-sqs', '@aws-sdk/client-dynamodb', '@aws-sdk/client-s3', '@aws-sdk/lib-dynamodb'];
const PATCHED = Symbol.for('ordered-webhooks.bench.patched');
const MAX_WARNINGS = 20;

type Send = (this: unknown, command: unknown, ...rest: unknown[]) => unknown;

/** The prototypes that define `send` at the base of each exported client class of the checkout's SDK. */
function basePrototypesWithSend(root: string): object[] {
  const requireFromRoot = createRequire(join(root, 'package.json'));
  const found = new Set<object>();
  for (const name of SDK_PACKAGES) {
    const exported = fields(requireFromRoot(name)) ?? {};
    for (const [exportName, value] of Object.entries(exported)) {
      if (!exportName.endsWith('Client') || typeof value !== 'function') continue;
      let base: object | undefined;
      const prototype: unknown = Reflect.get(value, 'prototype');
      for (let proto: unknown = prototype; fields(proto) !== undefined; proto = Object.getPrototypeOf(proto)) {
        if (Object.prototype.hasOwnProperty.call(proto, 'send') && proto !== Object.prototype) base = proto as object;
      }
      if (base !== undefined) found.add(base);
    }
  }
  return [...found];
}

/**
 * Installs the meter in this process: wraps `send` of the SDK loaded from `root`'s node_modules,
 * node:http's request event, and process.stdout/stderr (log lines are counted, not printed).
 */
export function installMeter(root: string): Meter {
  Error.stackTraceLimit = Math.max(Error.stackTraceLimit, 60);
  let totals = emptyTotals();
  let tables: ReadonlyMap<string, TableShape> = new Map();
  let shadowGet: ShadowGet = async () => undefined;

  const record = (caller: Caller, service: string, operation: string, table: string, add: Partial<Pick<CallCount, 'calls' | 'billedRequests' | 'readUnits' | 'writeUnits' | 'indexWriteUnits'>>): void => {
    const key = `${caller}|${service}|${operation}|${table}`;
    const count = totals.calls.get(key) ?? { caller, service, operation, table, calls: 0, billedRequests: 0, readUnits: 0, writeUnits: 0, indexWriteUnits: 0 };
    count.calls += add.calls ?? 0;
    count.billedRequests += add.billedRequests ?? 0;
    count.readUnits += add.readUnits ?? 0;
    count.writeUnits += add.writeUnits ?? 0;
    count.indexWriteUnits += add.indexWriteUnits ?? 0;
    totals.calls.set(key, count);
  };
  const touchItem = (table: string, key: Item, read: number, write: number): void => {
    const items = totals.items.get(table) ?? new Map<string, { read: number; write: number }>();
    const id = JSON.stringify(key);
    const item = items.get(id) ?? { read: 0, write: 0 };
    item.read += read;
    item.write += write;
    items.set(id, item);
    totals.items.set(table, items);
  };
  const keyOf = (table: string, item: Item): Item => {
    const shape = tables.get(table);
    if (shape === undefined) return item;
    return shape.sortKey === undefined ? { [shape.partitionKey]: item[shape.partitionKey] } : { [shape.partitionKey]: item[shape.partitionKey], [shape.sortKey]: item[shape.sortKey] };
  };

  /** Units of one single-item write, from the item before and after it. */
  const meterWrite = async (caller: Caller, operation: string, table: string, key: Item, write: () => Promise<unknown>): Promise<unknown> => {
    const before = await benchContext.run('bench', () => shadowGet(table, key));
    let failed = false;
    try {
      return await write();
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const after = failed ? before : await benchContext.run('bench', () => shadowGet(table, key));
      // A refused condition is billed on the item as it stands; the write changed nothing.
      const units = failed ? tableWriteUnits(before, undefined) : tableWriteUnits(before, after);
      const indexUnits = failed ? 0 : (tables.get(table)?.indexes ?? []).reduce((sum, index) => sum + indexWriteUnits(before, after, index), 0);
      record(caller, 'DynamoDB', operation, table, { writeUnits: units, indexWriteUnits: indexUnits });
      touchItem(table, key, 0, units);
    }
  };

  const meterDynamo = async (caller: Caller, operation: string, input: Record<string, unknown>, send: () => Promise<unknown>): Promise<unknown> => {
    const table = typeof input.TableName === 'string' ? input.TableName : '';
    const requestItems = fields(input.RequestItems) ?? {};
    const tablesOfCall = table !== '' ? [table] : Object.keys(requestItems);
    tablesOfCall.forEach((name, index) => record(caller, 'DynamoDB', operation, name, { calls: index === 0 ? 1 : 0 }));
    if (!meter.measureUnits) return send();
    const item = fields(input.Item);
    const key = fields(input.Key);
    if ((operation === 'PutItem' || operation === 'UpdateItem' || operation === 'DeleteItem') && (key ?? item) !== undefined) {
      return meterWrite(caller, operation, table, keyOf(table, key ?? item ?? {}), send);
    }
    if (operation === 'BatchWriteItem') {
      const writes = Object.entries(requestItems).flatMap(([name, requests]) =>
        (Array.isArray(requests) ? requests : []).map((request: unknown) => {
          const put = fields(fields(request)?.PutRequest);
          const remove = fields(fields(request)?.DeleteRequest);
          return { name, key: keyOf(name, fields(put?.Item) ?? fields(remove?.Key) ?? {}) };
        }),
      );
      const befores = await Promise.all(writes.map((write) => benchContext.run('bench', () => shadowGet(write.name, write.key))));
      const output = await send();
      const afters = await Promise.all(writes.map((write) => benchContext.run('bench', () => shadowGet(write.name, write.key))));
      writes.forEach((write, index) => {
        const units = tableWriteUnits(befores[index], afters[index]);
        const indexUnits = (tables.get(write.name)?.indexes ?? []).reduce((sum, shape) => sum + indexWriteUnits(befores[index], afters[index], shape), 0);
        record(caller, 'DynamoDB', operation, write.name, { writeUnits: units, indexWriteUnits: indexUnits });
        touchItem(write.name, write.key, 0, units);
      });
      return output;
    }
    // Reads: dynalite reports their units when asked, by AWS's rules for the whole item.
    input.ReturnConsumedCapacity = 'TOTAL';
    const output = fields(await send()) ?? {};
    const consumed = Array.isArray(output.ConsumedCapacity) ? output.ConsumedCapacity : output.ConsumedCapacity === undefined ? [] : [output.ConsumedCapacity];
    let reported = false;
    for (const capacity of consumed) {
      const fieldsOf = fields(capacity);
      if (typeof fieldsOf?.CapacityUnits !== 'number') continue;
      const name = typeof fieldsOf.TableName === 'string' ? fieldsOf.TableName : table;
      reported = true;
      record(caller, 'DynamoDB', operation, name, { readUnits: fieldsOf.CapacityUnits });
      if (operation === 'GetItem' && key !== undefined) touchItem(name, key, fieldsOf.CapacityUnits, 0);
    }
    if (!reported && operation === 'GetItem') {
      const found = fields(output.Item);
      const units = readUnits(found === undefined ? 0 : itemSize(found), input.ConsistentRead === true);
      record(caller, 'DynamoDB', operation, table, { readUnits: units });
      if (key !== undefined) touchItem(table, key, units, 0);
    }
    return output;
  };

  const meterSqs = async (caller: Caller, operation: string, input: Record<string, unknown>, send: () => Promise<unknown>): Promise<unknown> => {
    if (operation === 'SendMessage' || operation === 'SendMessageBatch') {
      const entries = Array.isArray(input.Entries) ? input.Entries : [input];
      record(caller, 'SQS', operation, '', { calls: 1, billedRequests: sqsBilledRequests(entries.reduce((sum: number, entry: unknown) => sum + messageBytes(entry), 0)) });
      return send();
    }
    if (operation !== 'ReceiveMessage') {
      record(caller, 'SQS', operation, '', { calls: 1, billedRequests: 1 });
      return send();
    }
    const output = fields(await send()) ?? {};
    const messages: unknown[] = Array.isArray(output.Messages) ? output.Messages : [];
    // The poller's empty receives depend on idle time, not on events: apart, and out of the cost per event.
    record(caller, 'SQS', caller === 'poller' && messages.length === 0 ? EMPTY_RECEIVE : operation, '', { calls: 1, billedRequests: sqsBilledRequests(messages.reduce((sum: number, message) => sum + messageBytes(message), 0)) });
    if (caller === 'poller' && messages.length > 0) {
      const runs = new Map<string, number>();
      for (const message of messages) {
        const group = fields(fields(message)?.Attributes)?.MessageGroupId;
        const id = typeof group === 'string' ? group : '';
        runs.set(id, (runs.get(id) ?? 0) + eventsIn(fields(message)?.Body));
      }
      totals.consumerInvocations += 1;
      totals.longestGroupRuns += Math.max(...runs.values());
    }
    return output;
  };

  const meter: Meter = {
    measureUnits: false,
    reset: () => {
      totals = emptyTotals();
    },
    configureTables: (shapes, get) => {
      tables = shapes;
      shadowGet = get;
    },
    snapshot: (events) => ({
      calls: [...totals.calls.values()].filter((count) => count.calls > 0 || count.readUnits > 0 || count.writeUnits > 0),
      hotItems: [...totals.items].map(([table, items]) => {
        const busiest = [...items.values()].sort((a, b) => b.read + b.write - (a.read + a.write))[0] ?? { read: 0, write: 0 };
        const perEvent = Math.max(events, 1);
        return { table, distinctItems: items.size, readUnitsPerEvent: busiest.read / perEvent, writeUnitsPerEvent: busiest.write / perEvent };
      }),
      consumerInvocations: totals.consumerInvocations,
      meanLongestGroupRun: totals.consumerInvocations === 0 ? 0 : totals.longestGroupRuns / totals.consumerInvocations,
      logBytes: { ...totals.logBytes },
      logLines: { ...totals.logLines },
      warnings: [...totals.warnings],
    }),
  };

  for (const proto of basePrototypesWithSend(root)) {
    const target = proto as Record<string | symbol, unknown>;
    if (target[PATCHED] === true) continue;
    const original = target.send;
    if (typeof original !== 'function') continue;
    const originalSend = original as Send;
    target[PATCHED] = true;
    target.send = function meteredSend(this: unknown, command: unknown, ...rest: unknown[]): unknown {
      const context = benchContext.getStore();
      if (context === 'bench') return originalSend.call(this, command, ...rest);
      // Captured now, while the caller's frames are still on the stack.
      const caller: Caller = context === undefined || context === 'background' ? callerOfStack(new Error().stack ?? '') : context;
      const service = serviceOf(classNameOf(this));
      const operation = operationOf(classNameOf(command));
      const input = fields(fields(command)?.input) ?? {};
      const send = (): Promise<unknown> => Promise.resolve(originalSend.call(this, command, ...rest));
      if (service === 'DynamoDB') return meterDynamo(caller, operation, input, send);
      if (service === 'SQS') return meterSqs(caller, operation, input, send);
      record(caller, service, operation, '', { calls: 1, billedRequests: 1 });
      return send();
    };
  }

  // Each request to the HTTP API runs in the context of its route's function.
  const originalEmit = Server.prototype.emit;
  Server.prototype.emit = function emitInContext(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    const [request] = args;
    if (event === 'request' && request instanceof IncomingMessage) {
      const path = new URL(request.url ?? '/', 'http://local').pathname;
      return benchContext.run(callerOfPath(path), () => Reflect.apply(originalEmit, this, [event, ...args]) as boolean);
    }
    return Reflect.apply(originalEmit, this, [event, ...args]) as boolean;
  };

  // Log lines are counted by the function that printed them, and kept off the terminal.
  const countOutput = (chunk: unknown): void => {
    const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const column = /^\d\d:\d\d:\d\d\.\d{3} (\w+)\s+(\S+)/.exec(line);
      const context = benchContext.getStore();
      const byService: Readonly<Record<string, Caller>> = { consumer: 'consumer', 'event-source': 'poller', lag: 'lagJob', ingest: 'ingest' };
      const caller = (column?.[2] === undefined ? undefined : byService[column[2]]) ?? (context === undefined || context === 'background' ? 'consumer' : context);
      totals.logBytes[caller] = (totals.logBytes[caller] ?? 0) + Buffer.byteLength(line, 'utf8') + 1;
      totals.logLines[caller] = (totals.logLines[caller] ?? 0) + 1;
      if ((column === null ? !line.startsWith('{') : column[1] === 'WARN' || column[1] === 'ERROR') && totals.warnings.length < MAX_WARNINGS) totals.warnings.push(line.slice(0, 300));
    }
  };
  for (const stream of [process.stdout, process.stderr]) {
    stream.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
      countOutput(chunk);
      const callback = rest.find((arg): arg is () => void => typeof arg === 'function');
      callback?.();
      return true;
    }) as typeof stream.write;
  }
  return meter;
}

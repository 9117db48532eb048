/**
 * An in-memory model of DynamoDB as lib-dynamodb's DocumentClient sees it, for the deterministic
 * simulation: the project's real adapters send their real commands to it through
 * `createModelDocumentClient`, synchronously and without I/O, so a seed replays exactly and
 * thousands of seeds run in a minute. `dynamo-model.test.ts` runs the same requests against
 * dynalite and holds the two to equal outputs and equal error names.
 */
import { ConditionalCheckFailedException, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import {
  applyUpdate,
  checkValues,
  evaluateCondition,
  ExpressionParser,
  findPathClash,
  projectPaths,
  resolvePath,
  type ConditionNode,
  type ConditionOperand,
  type ExpressionContext,
  type ParsedCondition,
  type ParsedProjection,
  type ParsedUpdate,
  type ResolvedPath,
} from './dynamo-expressions.js';
import {
  cloneValue,
  compareKeyValues,
  compareStrings,
  DynamoModelUnsupportedError,
  exportMap,
  importMap,
  isPlainObject,
  itemSize,
  marshallMap,
  typeOfValue,
  validationError,
  type ModelMap,
  type ModelValue,
} from './dynamo-values.js';

export { DynamoModelUnsupportedError } from './dynamo-values.js';
export { ExpressionParser } from './dynamo-expressions.js';

/** A sort key: its attribute and its type. */
export interface ModelSortKey {
  readonly name: string;
  readonly type: 'S' | 'N';
}

/**
 * A global secondary index; sparse: an item is in it only when it has the index's key attributes.
 * It holds every attribute (`ALL`), or the table's and the index's key attributes alone
 * (`KEYS_ONLY`): a Query or Scan of it answers, filters and projects with those alone.
 */
export interface ModelIndexDefinition {
  readonly name: string;
  /** String partition key. */
  readonly partitionKey: string;
  readonly sortKey?: ModelSortKey;
  /** @default 'ALL' */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
}

/** A table of the model: a string partition key, an optional sort key, global secondary indexes. */
export interface ModelTableDefinition {
  readonly name: string;
  /** String partition key. */
  readonly partitionKey: string;
  readonly sortKey?: ModelSortKey;
  readonly indexes?: readonly ModelIndexDefinition[];
  /**
   * The table's TTL attribute (UpdateTimeToLive), as deployed: an item whose value there is a
   * Number of epoch seconds before now is expired, and removed by `sweepExpired` (see there).
   */
  readonly ttlAttribute?: string;
}

/** An item past its TTL, seen by `expiredItems` or removed by `sweepExpired`. */
export interface ExpiredItemView {
  readonly table: string;
  /** The item's primary key, as one string (see `primaryKeyOf`): stable across its writes. */
  readonly primaryKey: string;
  /** Its TTL attribute's value, epoch seconds. */
  readonly expiresAtSeconds: number;
  /** When `sweepExpired` removed it (epoch ms); absent while it is still in its table. */
  readonly removedAtMs?: number;
}

/** The operations the model answers, named as lib-dynamodb's commands without `Command`. */
export const ModelOperation = {
  get: 'Get',
  put: 'Put',
  update: 'Update',
  delete: 'Delete',
  query: 'Query',
  scan: 'Scan',
  batchGet: 'BatchGet',
  batchWrite: 'BatchWrite',
} as const;
export type ModelOperation = (typeof ModelOperation)[keyof typeof ModelOperation];

export interface DynamoModelOptions {
  /** Parses and remembers expressions; share one between the models of many seeds to parse each string once. Default: one per model. */
  readonly parser?: ExpressionParser;
}

/** DynamoDB's limits, each with its documented number. */
const MAX_ITEM_BYTES = 400 * 1024;
/** Query and Scan read at most 1 MB per page. */
const MAX_PAGE_BYTES = 1024 * 1024;
const MAX_BATCH_GET_KEYS = 100;
const MAX_BATCH_WRITE_REQUESTS = 25;

/** Where a Query or Scan reads: the table's own key, or an index's. */
interface KeySchema {
  readonly indexName?: string;
  readonly partitionKey: string;
  readonly sortKey?: ModelSortKey;
  /** An index's projection; the table's own key schema has none. */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
}

/** Items by partition value, then by primary key: a table's storage, or an index's. */
type Partitions = Map<string, Map<string, ModelMap>>;

class TableState {
  readonly items = new Map<string, ModelMap>();
  readonly partitions: Partitions = new Map();
  readonly indexPartitions = new Map<string, Partitions>();
  readonly schema: KeySchema;

  constructor(readonly definition: ModelTableDefinition) {
    this.schema = { partitionKey: definition.partitionKey, sortKey: definition.sortKey };
    for (const index of definition.indexes ?? []) this.indexPartitions.set(index.name, new Map());
  }

  indexSchema(name: string): KeySchema | undefined {
    const index = this.definition.indexes?.find((candidate) => candidate.name === name);
    return index === undefined ? undefined : { indexName: index.name, partitionKey: index.partitionKey, sortKey: index.sortKey, projection: index.projection ?? 'ALL' };
  }

  /** The item's primary key as one string (a sort key's type is fixed per table, so values never collide). */
  primaryKeyOf(item: ModelMap): string {
    const partition = item[this.definition.partitionKey];
    const sortKey = this.definition.sortKey;
    return sortKey === undefined ? String(partition) : JSON.stringify([partition, item[sortKey.name]]);
  }

  write(primaryKey: string, item: ModelMap | undefined): void {
    const old = this.items.get(primaryKey);
    if (old !== undefined) {
      removeFrom(this.partitions, String(old[this.definition.partitionKey]), primaryKey);
      for (const index of this.definition.indexes ?? []) {
        const partition = old[index.partitionKey];
        if (typeof partition === 'string') removeFrom(this.indexPartitions.get(index.name), partition, primaryKey);
      }
    }
    if (item === undefined) {
      this.items.delete(primaryKey);
      return;
    }
    this.items.set(primaryKey, item);
    addTo(this.partitions, String(item[this.definition.partitionKey]), primaryKey, item);
    for (const index of this.definition.indexes ?? []) {
      const partition = item[index.partitionKey];
      if (typeof partition === 'string' && (index.sortKey === undefined || item[index.sortKey.name] !== undefined)) {
        addTo(this.indexPartitions.get(index.name), partition, primaryKey, index.projection === 'KEYS_ONLY' ? this.keysOf(item, index) : item);
      }
    }
  }

  /** What a key-only index holds of an item: the table's key and the index's key attributes. */
  private keysOf(item: ModelMap, index: ModelIndexDefinition): ModelMap {
    const names = [this.definition.partitionKey, this.definition.sortKey?.name, index.partitionKey, index.sortKey?.name];
    const keys: ModelMap = {};
    for (const name of names) {
      const value = name === undefined ? undefined : item[name];
      if (name !== undefined && value !== undefined) keys[name] = value;
    }
    return keys;
  }

  partitionsOf(schema: KeySchema): Partitions {
    return schema.indexName === undefined ? this.partitions : (this.indexPartitions.get(schema.indexName) ?? new Map());
  }
}

function removeFrom(partitions: Partitions | undefined, partition: string, primaryKey: string): void {
  const members = partitions?.get(partition);
  if (members === undefined) return;
  members.delete(primaryKey);
  if (members.size === 0) partitions?.delete(partition);
}

function addTo(partitions: Partitions | undefined, partition: string, primaryKey: string, item: ModelMap): void {
  if (partitions === undefined) return;
  let members = partitions.get(partition);
  if (members === undefined) {
    members = new Map();
    partitions.set(partition, members);
  }
  members.set(primaryKey, item);
}

type Request = Readonly<Record<string, unknown>>;

function asRequest(input: unknown, what: string): Request {
  if (!isPlainObject(input)) throw validationError(`${what} must be an object`);
  return input;
}

function optionalString(request: Request, member: string): string | undefined {
  const value = request[member];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw validationError(`${member} must be a string`);
  return value;
}

function requiredString(request: Request, member: string): string {
  const value = optionalString(request, member);
  if (value === undefined) throw validationError(`1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`);
  return value;
}

function requiredMap(request: Request, member: string): ModelMap {
  const value = request[member];
  if (value === undefined) throw validationError(`1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`);
  if (!isPlainObject(value)) throw validationError(`${member} must be a map`);
  return importMap(value);
}

function optionalEnum<T extends string>(request: Request, member: string, allowed: readonly T[], fallback: T): T {
  const value = request[member];
  if (value === undefined) return fallback;
  const match = allowed.find((candidate) => candidate === value);
  if (match === undefined) throw validationError(`1 validation error detected: Value '${String(value)}' at '${member}' failed to satisfy constraint: Member must satisfy enum value set: [${allowed.join(', ')}]`);
  return match;
}

/** Members of the legacy (pre-expression) API and of features the model does not have. */
const UNSUPPORTED_MEMBERS = ['Expected', 'AttributesToGet', 'KeyConditions', 'QueryFilter', 'ScanFilter', 'AttributeUpdates', 'ConditionalOperator', 'Segment', 'TotalSegments'];

function refuseUnsupported(request: Request): void {
  for (const member of UNSUPPORTED_MEMBERS) {
    if (request[member] !== undefined) throw new DynamoModelUnsupportedError(`${member} is not modelled; use expressions`);
  }
  const capacity = request.ReturnConsumedCapacity;
  if (capacity !== undefined && capacity !== 'NONE') throw new DynamoModelUnsupportedError('ReturnConsumedCapacity is not modelled');
  const metrics = request.ReturnItemCollectionMetrics;
  if (metrics !== undefined && metrics !== 'NONE') throw new DynamoModelUnsupportedError('ReturnItemCollectionMetrics is not modelled');
}

/** The expressions of one request, and the names and values they use. */
interface RequestExpressions {
  readonly condition?: ParsedCondition;
  readonly filter?: ParsedCondition;
  readonly keyCondition?: ParsedCondition;
  readonly update?: ParsedUpdate;
  /** The ProjectionExpression's paths, resolved once for every item the request returns. */
  readonly projection?: readonly ResolvedPath[];
  readonly context: ExpressionContext;
}

const NO_CONTEXT: ExpressionContext = { names: {}, values: {} };

/**
 * An in-memory DynamoDB, as the DocumentClient sees it: plain JavaScript values in and out (sets as
 * `Set<string>` / `Set<number>`), each deep-copied, so no caller shares an object with the model.
 *
 * `execute` is synchronous and answers one request completely (a write is atomic, as on AWS), so a
 * simulation decides where time passes and faults strike around a call, never inside one.
 * Reads are always strongly consistent, including on indexes: on AWS a global secondary index is
 * eventually consistent (a query may miss a recent write, or see it before a later read of the
 * table does); a simulation that needs that staleness must add it around the model.
 */
export class DynamoModel {
  private readonly tables = new Map<string, TableState>();
  private readonly parser: ExpressionParser;
  private readonly ttlRemovals: ExpiredItemView[] = [];

  constructor(tables: readonly ModelTableDefinition[], options: DynamoModelOptions = {}) {
    for (const definition of tables) this.tables.set(definition.name, new TableState(definition));
    this.parser = options.parser ?? new ExpressionParser();
  }

  /**
   * The items past their TTL now and still in their tables. DynamoDB's TTL marks an item expired
   * once the epoch seconds in its TTL attribute (a Number; any other type is ignored) are before
   * the current time, and deletes it later in the background, "typically within two days" (or "a
   * few days"); until then "items that have expired and not been deleted will still show up in
   * reads, queries, and scans", and in conditions: the model's reads never filter them.
   * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ttl-expired-items.html,
   * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html
   */
  expiredItems(nowMs: number): ExpiredItemView[] {
    const expired: ExpiredItemView[] = [];
    for (const [name, table] of this.tables) {
      const attribute = table.definition.ttlAttribute;
      if (attribute === undefined) continue;
      for (const [primaryKey, item] of table.items) {
        const value = item[attribute];
        if (typeof value === 'number' && value * 1000 < nowMs) expired.push({ table: name, primaryKey, expiresAtSeconds: value });
      }
    }
    return expired;
  }

  /**
   * TTL's background deletion: removes every expired item (see `expiredItems`) for which `isDue`
   * answers true, from its table and its indexes, as a delete would, and returns what it removed.
   * When is the caller's choice (DynamoDB promises no moment): an item written again meanwhile with
   * a later TTL is not expired any more, and stays.
   */
  sweepExpired(nowMs: number, isDue: (item: ExpiredItemView) => boolean): ExpiredItemView[] {
    const removed: ExpiredItemView[] = [];
    for (const view of this.expiredItems(nowMs)) {
      if (!isDue(view)) continue;
      this.table(view.table).write(view.primaryKey, undefined);
      removed.push({ ...view, removedAtMs: nowMs });
    }
    this.ttlRemovals.push(...removed);
    return removed;
  }

  /** Every item `sweepExpired` removed, in order. */
  removedByTtl(): readonly ExpiredItemView[] {
    return [...this.ttlRemovals];
  }

  /**
   * Answers one request: `operation` is one of ModelOperation (`Get`, `Put`, `Update`, `Delete`,
   * `Query`, `Scan`, `BatchGet`, `BatchWrite`; lib-dynamodb's command names without `Command`),
   * `input` the command's input. The output has the members the DocumentClient's output has, without
   * `$metadata`.
   * @throws errors named as DynamoDB's (`ValidationException`, `ConditionalCheckFailedException`,
   *   `ResourceNotFoundException`), Error as lib-dynamodb's marshaller throws on the client, and
   *   DynamoModelUnsupportedError for what the model does not do
   */
  execute(operation: string, input: unknown): unknown {
    const request = asRequest(input, 'input');
    refuseUnsupported(request);
    switch (operation) {
      case ModelOperation.get:
        return this.get(request);
      case ModelOperation.put:
        return this.put(request);
      case ModelOperation.update:
        return this.update(request);
      case ModelOperation.delete:
        return this.delete(request);
      case ModelOperation.query:
        return this.query(request);
      case ModelOperation.scan:
        return this.scan(request);
      case ModelOperation.batchGet:
        return this.batchGet(request);
      case ModelOperation.batchWrite:
        return this.batchWrite(request);
      default:
        throw new DynamoModelUnsupportedError(`operation ${operation} is not modelled`);
    }
  }

  private table(name: string): TableState {
    const table = this.tables.get(name);
    if (table === undefined) throw new ResourceNotFoundException({ message: 'Requested resource not found', $metadata: { httpStatusCode: 400 } });
    return table;
  }

  /**
   * Parses a request's expressions and binds its names and values, with DynamoDB's checks: every
   * placeholder used is defined, every one defined is used, values have the types the expressions need.
   */
  private expressions(request: Request, members: { condition?: string; filter?: string; keyCondition?: string; update?: string; projection?: string }): RequestExpressions {
    const text = (member: string | undefined): string | undefined => (member === undefined ? undefined : optionalString(request, member));
    const conditionText = text(members.condition);
    const filterText = text(members.filter);
    const keyConditionText = text(members.keyCondition);
    const updateText = text(members.update);
    const projectionText = text(members.projection);
    const condition = conditionText === undefined ? undefined : this.parser.condition('ConditionExpression', conditionText);
    const filter = filterText === undefined ? undefined : this.parser.condition('FilterExpression', filterText);
    const keyCondition = keyConditionText === undefined ? undefined : this.parser.condition('KeyConditionExpression', keyConditionText);
    const update = updateText === undefined ? undefined : this.parser.update(updateText);
    const projection = projectionText === undefined ? undefined : this.parser.projection(projectionText);
    const parsed = [condition, filter, keyCondition, update, projection].filter((expression) => expression !== undefined);

    const rawNames = request.ExpressionAttributeNames;
    const rawValues = request.ExpressionAttributeValues;
    if (rawNames === undefined && rawValues === undefined && parsed.every((expression) => expression.names.size === 0 && expression.values.size === 0)) {
      return { condition, filter, keyCondition, update, projection: resolveProjection(projection, NO_CONTEXT), context: NO_CONTEXT };
    }
    const names = this.names(rawNames, parsed.length > 0);
    const values = this.values(rawValues, parsed.some((expression) => expression !== projection));
    const usedNames = new Set(parsed.flatMap((expression) => [...expression.names]));
    const usedValues = new Set(parsed.flatMap((expression) => [...expression.values]));
    for (const name of usedNames) {
      if (names[name] === undefined) throw validationError(`Invalid expression: An expression attribute name used in the document path is not defined; attribute name: ${name}`);
    }
    for (const value of usedValues) {
      if (values[value] === undefined) throw validationError(`Invalid expression: An expression attribute value used in expression is not defined; attribute value: ${value}`);
    }
    const unusedNames = Object.keys(names).filter((name) => !usedNames.has(name));
    if (unusedNames.length > 0) throw validationError(`Value provided in ExpressionAttributeNames unused in expressions: keys: {${unusedNames.join(', ')}}`);
    const unusedValues = Object.keys(values).filter((value) => !usedValues.has(value));
    if (unusedValues.length > 0) throw validationError(`Value provided in ExpressionAttributeValues unused in expressions: keys: {${unusedValues.join(', ')}}`);
    const context = { names, values };
    if (condition !== undefined) checkValues('ConditionExpression', condition.checks, context);
    if (filter !== undefined) checkValues('FilterExpression', filter.checks, context);
    if (keyCondition !== undefined) checkValues('KeyConditionExpression', keyCondition.checks, context);
    if (update !== undefined) checkValues('UpdateExpression', update.checks, context);
    return { condition, filter, keyCondition, update, projection: resolveProjection(projection, context), context };
  }

  private names(raw: unknown, hasExpressions: boolean): Record<string, string> {
    if (raw === undefined) return {};
    if (!hasExpressions) throw validationError('ExpressionAttributeNames can only be specified when using expressions');
    if (!isPlainObject(raw)) throw validationError('ExpressionAttributeNames must be a map');
    const names: Record<string, string> = {};
    for (const [placeholder, name] of Object.entries(raw)) {
      if (name === undefined) continue;
      if (typeof name !== 'string') throw validationError(`ExpressionAttributeNames contains a non-string name for ${placeholder}`);
      names[placeholder] = name;
    }
    if (Object.keys(names).length === 0) throw validationError('ExpressionAttributeNames must not be empty');
    return names;
  }

  private values(raw: unknown, hasValueExpressions: boolean): ModelMap {
    if (raw === undefined) return {};
    if (!hasValueExpressions) throw validationError('ExpressionAttributeValues can only be specified when using expressions: UpdateExpression, ConditionExpression, FilterExpression or KeyConditionExpression');
    if (!isPlainObject(raw)) throw validationError('ExpressionAttributeValues must be a map');
    const values = importMap(raw);
    if (Object.keys(values).length === 0) throw validationError('ExpressionAttributeValues must not be empty');
    return values;
  }

  private get(request: Request): unknown {
    const expressions = this.expressions(request, { projection: 'ProjectionExpression' });
    const table = this.table(requiredString(request, 'TableName'));
    const key = requiredMap(request, 'Key');
    validateKey(table, key);
    const item = table.items.get(table.primaryKeyOf(key));
    if (item === undefined) return {};
    return { Item: exportMap(project(item, expressions)) };
  }

  private put(request: Request): unknown {
    const expressions = this.expressions(request, { condition: 'ConditionExpression' });
    const returnValues = optionalEnum(request, 'ReturnValues', ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'], 'NONE');
    if (returnValues !== 'NONE' && returnValues !== 'ALL_OLD') throw validationError('ReturnValues can only be ALL_OLD or NONE');
    const onFailure = optionalEnum(request, 'ReturnValuesOnConditionCheckFailure', ['NONE', 'ALL_OLD'], 'NONE');
    const table = this.table(requiredString(request, 'TableName'));
    const item = requiredMap(request, 'Item');
    validateItem(table, item, 'Item size has exceeded the maximum allowed size');
    const primaryKey = table.primaryKeyOf(item);
    const old = table.items.get(primaryKey);
    checkCondition(expressions, old, onFailure);
    table.write(primaryKey, item);
    return returnValues === 'ALL_OLD' && old !== undefined ? { Attributes: exportMap(old) } : {};
  }

  private delete(request: Request): unknown {
    const expressions = this.expressions(request, { condition: 'ConditionExpression' });
    // DeleteItem "does not recognize any values other than NONE or ALL_OLD": it ignores them (dynalite too), where PutItem refuses them.
    const returnValues = optionalEnum(request, 'ReturnValues', ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'], 'NONE');
    const onFailure = optionalEnum(request, 'ReturnValuesOnConditionCheckFailure', ['NONE', 'ALL_OLD'], 'NONE');
    const table = this.table(requiredString(request, 'TableName'));
    const key = requiredMap(request, 'Key');
    validateKey(table, key);
    const primaryKey = table.primaryKeyOf(key);
    const old = table.items.get(primaryKey);
    checkCondition(expressions, old, onFailure);
    if (old !== undefined) table.write(primaryKey, undefined);
    return returnValues === 'ALL_OLD' && old !== undefined ? { Attributes: exportMap(old) } : {};
  }

  private update(request: Request): unknown {
    const expressions = this.expressions(request, { condition: 'ConditionExpression', update: 'UpdateExpression' });
    const returnValues = optionalEnum(request, 'ReturnValues', ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'], 'NONE');
    const onFailure = optionalEnum(request, 'ReturnValuesOnConditionCheckFailure', ['NONE', 'ALL_OLD'], 'NONE');
    const table = this.table(requiredString(request, 'TableName'));
    const key = requiredMap(request, 'Key');
    validateKey(table, key);
    const { update, context } = expressions;
    const actions = (update?.actions ?? []).map((action) => ({ action, path: resolvePath(action.path, context.names) }));
    const paths = actions.map(({ path }) => path);
    const clash = findPathClash(paths);
    if (clash !== undefined) throw validationError(`Invalid UpdateExpression: ${clash}`);
    for (const path of paths) {
      const head = path[0];
      if (head === table.definition.partitionKey || head === table.definition.sortKey?.name) {
        throw validationError(`One or more parameter values were invalid: Cannot update attribute ${String(head)}. This attribute is part of the key`);
      }
    }
    const primaryKey = table.primaryKeyOf(key);
    const old = table.items.get(primaryKey);
    checkCondition(expressions, old, onFailure);
    const item = applyUpdate({ actions }, old ?? key, context);
    validateItem(table, item, 'Item size to update has exceeded the maximum allowed size');
    table.write(primaryKey, item);
    switch (returnValues) {
      case 'ALL_OLD':
        return old === undefined ? {} : { Attributes: exportMap(old) };
      case 'UPDATED_OLD':
        return old === undefined ? {} : { Attributes: exportMap(projectPaths(old, paths)) };
      case 'ALL_NEW':
        return { Attributes: exportMap(item) };
      case 'UPDATED_NEW':
        return { Attributes: exportMap(projectPaths(item, paths)) };
      case 'NONE':
        return {};
    }
  }

  private query(request: Request): unknown {
    const expressions = this.expressions(request, { keyCondition: 'KeyConditionExpression', filter: 'FilterExpression', projection: 'ProjectionExpression' });
    const table = this.table(requiredString(request, 'TableName'));
    const schema = this.readSchema(table, request);
    const { keyCondition, context } = expressions;
    if (keyCondition === undefined) throw validationError('Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.');
    const keys = analyzeKeyCondition(keyCondition.root, schema, context);
    if (expressions.filter !== undefined) {
      for (const head of expressions.filter.heads) {
        const name = resolvePath([head], context.names)[0];
        if (name === schema.partitionKey || name === schema.sortKey?.name) {
          throw validationError(`Filter Expression can only contain non-primary key attributes: Primary key attribute: ${String(name)}`);
        }
      }
    }
    const isForward = request.ScanIndexForward !== false;
    const order = itemOrder(table, schema);
    const candidates = [...(table.partitionsOf(schema).get(keys.partition)?.values() ?? [])].filter((item) => keys.matchesSort(item));
    candidates.sort(order);
    if (!isForward) candidates.reverse();
    const startKey = this.readStartKey(table, schema, request);
    let start = 0;
    if (startKey !== undefined) {
      if (startKey[schema.partitionKey] !== keys.partition) throw validationError('The provided starting key is outside query boundaries based on provided conditions');
      if (!keys.matchesSort(startKey)) throw validationError('The provided starting key does not match the range key predicate');
      while (start < candidates.length && isAtOrBefore(order(candidates[start] ?? {}, startKey), isForward)) start += 1;
    }
    return readPage(table, schema, candidates, start, request, expressions);
  }

  private scan(request: Request): unknown {
    const expressions = this.expressions(request, { filter: 'FilterExpression', projection: 'ProjectionExpression' });
    const table = this.table(requiredString(request, 'TableName'));
    const schema = this.readSchema(table, request);
    const inPartition = itemOrder(table, schema);
    const order = (a: ModelMap, b: ModelMap): number => compareStrings(String(a[schema.partitionKey]), String(b[schema.partitionKey])) || inPartition(a, b);
    const candidates = [...table.partitionsOf(schema).values()].flatMap((members) => [...members.values()]);
    candidates.sort(order);
    const startKey = this.readStartKey(table, schema, request);
    let start = 0;
    if (startKey !== undefined) while (start < candidates.length && order(candidates[start] ?? {}, startKey) <= 0) start += 1;
    return readPage(table, schema, candidates, start, request, expressions);
  }

  /** The key schema a Query or Scan reads, with the checks DynamoDB makes on IndexName, ConsistentRead and Select. */
  private readSchema(table: TableState, request: Request): KeySchema {
    const indexName = optionalString(request, 'IndexName');
    const select = optionalEnum(request, 'Select', ['ALL_ATTRIBUTES', 'ALL_PROJECTED_ATTRIBUTES', 'SPECIFIC_ATTRIBUTES', 'COUNT'], 'ALL_ATTRIBUTES');
    const hasProjection = request.ProjectionExpression !== undefined;
    if (hasProjection && (select === 'ALL_ATTRIBUTES' || select === 'ALL_PROJECTED_ATTRIBUTES' || select === 'COUNT') && request.Select !== undefined) {
      throw validationError(`Cannot specify the ProjectionExpression when choosing to get ${select}`);
    }
    if (select === 'SPECIFIC_ATTRIBUTES' && !hasProjection) throw validationError('Must specify the ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES');
    const limit = request.Limit;
    if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)) {
      throw validationError(`1 validation error detected: Value '${String(limit)}' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1`);
    }
    if (indexName === undefined) {
      if (select === 'ALL_PROJECTED_ATTRIBUTES') throw validationError('ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName');
      return table.schema;
    }
    const schema = table.indexSchema(indexName);
    if (schema === undefined) throw validationError(`The table does not have the specified index: ${indexName}`);
    if (request.ConsistentRead === true) throw validationError('Consistent reads are not supported on global secondary indexes');
    // A global secondary index cannot fetch from the table what it does not hold (dynalite does,
    // as for a local secondary index): not modelled rather than answered wrongly.
    if (select === 'ALL_ATTRIBUTES' && request.Select !== undefined && schema.projection !== 'ALL') {
      throw new DynamoModelUnsupportedError('Select ALL_ATTRIBUTES on an index that does not project all attributes is not modelled');
    }
    return schema;
  }

  /** ExclusiveStartKey: exactly the table's key, plus the index's key when reading an index. */
  private readStartKey(table: TableState, schema: KeySchema, request: Request): ModelMap | undefined {
    if (request.ExclusiveStartKey === undefined) return undefined;
    const startKey = requiredMap(request, 'ExclusiveStartKey');
    const names = startKeyNames(table, schema);
    if (Object.keys(startKey).length !== names.length) throw validationError('The provided starting key is invalid');
    for (const [name, type] of keyTypes(table, schema)) {
      const value = startKey[name];
      if (value === undefined || typeOfValue(value) !== type) throw validationError('The provided starting key is invalid');
    }
    return startKey;
  }

  private batchGet(request: Request): unknown {
    const requestItems = request.RequestItems;
    if (!isPlainObject(requestItems) || Object.keys(requestItems).length === 0) throw validationError('1 validation error detected: Value null at \'requestItems\' failed to satisfy constraint: Member must have length greater than or equal to 1');
    const reads: { table: TableState; name: string; keys: ModelMap[]; expressions: RequestExpressions }[] = [];
    let total = 0;
    for (const [name, raw] of Object.entries(requestItems)) {
      const tableRequest = asRequest(raw, `RequestItems.${name}`);
      refuseUnsupported(tableRequest);
      const expressions = this.expressions(tableRequest, { projection: 'ProjectionExpression' });
      const rawKeys = tableRequest.Keys;
      if (!Array.isArray(rawKeys) || rawKeys.length === 0) throw validationError('1 validation error detected: Value null at \'requestItems.keys\' failed to satisfy constraint: Member must have length greater than or equal to 1');
      total += rawKeys.length;
      if (total > MAX_BATCH_GET_KEYS) throw validationError(`Too many items requested for the BatchGetItem call`);
      const table = this.table(name);
      const keys = rawKeys.map((key) => importMap(asRequest(key, 'Key')));
      const seen = new Set<string>();
      for (const key of keys) {
        validateKey(table, key);
        const primaryKey = table.primaryKeyOf(key);
        if (seen.has(primaryKey)) throw validationError('Provided list of item keys contains duplicates');
        seen.add(primaryKey);
      }
      reads.push({ table, name, keys, expressions });
    }
    const responses: Record<string, unknown[]> = {};
    for (const { table, name, keys, expressions } of reads) {
      const items: unknown[] = [];
      for (const key of keys) {
        const item = table.items.get(table.primaryKeyOf(key));
        if (item !== undefined) items.push(exportMap(project(item, expressions)));
      }
      responses[name] = items;
    }
    // A response holds at most 16 MB; the model never answers with UnprocessedKeys.
    return { Responses: responses, UnprocessedKeys: {} };
  }

  private batchWrite(request: Request): unknown {
    const requestItems = request.RequestItems;
    if (!isPlainObject(requestItems) || Object.keys(requestItems).length === 0) throw validationError('1 validation error detected: Value null at \'requestItems\' failed to satisfy constraint: Member must have length greater than or equal to 1');
    const writes: { table: TableState; primaryKey: string; item: ModelMap | undefined }[] = [];
    for (const [name, raw] of Object.entries(requestItems)) {
      if (!Array.isArray(raw) || raw.length === 0) throw validationError('1 validation error detected: Value at \'requestItems\' failed to satisfy constraint: Member must have length greater than or equal to 1');
      const table = this.table(name);
      const seen = new Set<string>();
      for (const entry of raw) {
        const writeRequest = asRequest(entry, 'WriteRequest');
        const put = writeRequest.PutRequest;
        const remove = writeRequest.DeleteRequest;
        if ((put === undefined) === (remove === undefined)) throw validationError('Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes');
        let item: ModelMap | undefined;
        let key: ModelMap;
        if (put !== undefined) {
          item = requiredMap(asRequest(put, 'PutRequest'), 'Item');
          validateItem(table, item, 'Item size has exceeded the maximum allowed size');
          key = item;
        } else {
          key = requiredMap(asRequest(remove, 'DeleteRequest'), 'Key');
          validateKey(table, key);
        }
        const primaryKey = table.primaryKeyOf(key);
        if (seen.has(primaryKey)) throw validationError('Provided list of item keys contains duplicates');
        seen.add(primaryKey);
        writes.push({ table, primaryKey, item });
      }
    }
    if (writes.length > MAX_BATCH_WRITE_REQUESTS) {
      throw validationError(`1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to ${MAX_BATCH_WRITE_REQUESTS}]`);
    }
    for (const { table, primaryKey, item } of writes) table.write(primaryKey, item);
    return { UnprocessedItems: {} };
  }
}

/** A ProjectionExpression's paths, resolved; DynamoDB refuses two paths that overlap. */
function resolveProjection(projection: ParsedProjection | undefined, context: ExpressionContext): ResolvedPath[] | undefined {
  if (projection === undefined) return undefined;
  const paths = projection.paths.map((path) => resolvePath(path, context.names));
  const clash = findPathClash(paths);
  if (clash !== undefined) throw validationError(`Invalid ProjectionExpression: ${clash}`);
  return paths;
}

function project(item: ModelMap, expressions: RequestExpressions): ModelMap {
  return expressions.projection === undefined ? item : projectPaths(item, expressions.projection);
}

/**
 * Fails the write when its condition does not hold on the item as it is (an absent item is `{}`).
 * Nothing has been written at this point.
 */
function checkCondition(expressions: RequestExpressions, old: ModelMap | undefined, onFailure: 'NONE' | 'ALL_OLD'): void {
  const { condition, context } = expressions;
  if (condition === undefined || evaluateCondition(condition.root, old ?? {}, context)) return;
  throw new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: { httpStatusCode: 400 },
    ...(onFailure === 'ALL_OLD' && old !== undefined ? { Item: marshallMap(old) } : {}),
  });
}

function keyAttributes(table: TableState): [string, 'S' | 'N'][] {
  const { partitionKey, sortKey } = table.definition;
  return sortKey === undefined ? [[partitionKey, 'S']] : [[partitionKey, 'S'], [sortKey.name, sortKey.type]];
}

function keyTypes(table: TableState, schema: KeySchema): [string, 'S' | 'N'][] {
  const types = keyAttributes(table);
  if (schema.indexName !== undefined) {
    if (!types.some(([name]) => name === schema.partitionKey)) types.push([schema.partitionKey, 'S']);
    if (schema.sortKey !== undefined && !types.some(([name]) => name === schema.sortKey?.name)) types.push([schema.sortKey.name, schema.sortKey.type]);
  }
  return types;
}

function startKeyNames(table: TableState, schema: KeySchema): string[] {
  return keyTypes(table, schema).map(([name]) => name);
}

/** A Get, Update or Delete key: exactly the table's key attributes, of their types, strings not empty. */
function validateKey(table: TableState, key: ModelMap): void {
  const attributes = keyAttributes(table);
  if (Object.keys(key).length !== attributes.length) throw validationError('The provided key element does not match the schema');
  for (const [name, type] of attributes) {
    const value = key[name];
    if (value === undefined || typeOfValue(value) !== type) throw validationError('The provided key element does not match the schema');
    if (value === '') throw validationError(`One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${name}`);
  }
}

/** An item to store: its key, its index keys (when present) of their types and not empty, its size at most 400 KB. */
function validateItem(table: TableState, item: ModelMap, sizeMessage: string): void {
  for (const [name, type] of keyAttributes(table)) {
    const value = item[name];
    if (value === undefined) throw validationError(`One or more parameter values were invalid: Missing the key ${name} in the item`);
    if (typeOfValue(value) !== type) throw validationError(`One or more parameter values were invalid: Type mismatch for key ${name} expected: ${type} actual: ${typeOfValue(value)}`);
    if (value === '') throw validationError(`One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: ${name}`);
  }
  for (const index of table.definition.indexes ?? []) {
    const indexKeys: [string, 'S' | 'N'][] = [[index.partitionKey, 'S'], ...(index.sortKey === undefined ? [] : [[index.sortKey.name, index.sortKey.type] as [string, 'S' | 'N']])];
    for (const [name, type] of indexKeys) {
      const value = item[name];
      if (value === undefined) continue;
      if (typeOfValue(value) !== type) {
        throw validationError(`One or more parameter values were invalid: Type mismatch for Index Key ${name} Expected: ${type} Actual: ${typeOfValue(value)} IndexName: ${index.name}`);
      }
      if (value === '') {
        throw validationError(`One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: ${index.name}, IndexKey: ${name}`);
      }
    }
  }
  if (itemSize(item) > MAX_ITEM_BYTES) throw validationError(sizeMessage);
}

/**
 * Orders the items of one partition of `schema`: by its sort key, then (for an index, where many
 * items may share an index key) by the table's key, so every item has one place to resume from.
 */
function itemOrder(table: TableState, schema: KeySchema): (a: ModelMap, b: ModelMap) => number {
  const steps: string[] = [];
  if (schema.sortKey !== undefined) steps.push(schema.sortKey.name);
  if (schema.indexName !== undefined) {
    steps.push(table.definition.partitionKey);
    if (table.definition.sortKey !== undefined) steps.push(table.definition.sortKey.name);
  }
  return (a, b) => {
    for (const name of steps) {
      const left = a[name];
      const right = b[name];
      if ((typeof left === 'string' || typeof left === 'number') && (typeof right === 'string' || typeof right === 'number')) {
        const order = compareKeyValues(left, right);
        if (order !== 0) return order;
      }
    }
    return 0;
  };
}

function isAtOrBefore(order: number, isForward: boolean): boolean {
  return isForward ? order <= 0 : order >= 0;
}

/**
 * One page of a Query or Scan: items are evaluated in order until Limit items were evaluated or
 * 1 MB was read (both before the filter, as DynamoDB counts them), then filtered; LastEvaluatedKey
 * names the last item evaluated whenever a limit stopped the page.
 */
function readPage(table: TableState, schema: KeySchema, candidates: readonly ModelMap[], start: number, request: Request, expressions: RequestExpressions): unknown {
  const limit = typeof request.Limit === 'number' ? request.Limit : Number.POSITIVE_INFINITY;
  const { filter, context } = expressions;
  const matched: ModelMap[] = [];
  let scanned = 0;
  let bytes = 0;
  let last: ModelMap | undefined;
  for (let position = start; position < candidates.length; position += 1) {
    if (scanned >= limit || bytes >= MAX_PAGE_BYTES) break;
    const item = candidates[position];
    if (item === undefined) break;
    scanned += 1;
    bytes += itemSize(item);
    last = item;
    if (filter === undefined || evaluateCondition(filter.root, item, context)) matched.push(item);
  }
  const output: Record<string, unknown> = { Count: matched.length, ScannedCount: scanned };
  if (request.Select !== 'COUNT') output.Items = matched.map((item) => exportMap(project(item, expressions)));
  if (last !== undefined && (scanned >= limit || bytes >= MAX_PAGE_BYTES)) {
    const key: ModelMap = {};
    for (const name of startKeyNames(table, schema)) {
      const value = last[name];
      if (value !== undefined) key[name] = cloneValue(value);
    }
    output.LastEvaluatedKey = exportMap(key);
  }
  return output;
}

/** A Query's key condition, read: the partition to read and the test of its sort key. */
interface KeyConditions {
  readonly partition: string;
  readonly matchesSort: (item: ModelMap) => boolean;
}

function invalidKeyCondition(problem: string): Error {
  return validationError(`Invalid KeyConditionExpression: ${problem}`);
}

/**
 * Reads a KeyConditionExpression: `partition = :v`, optionally AND one condition on the sort key
 * (`= < <= > >=`, BETWEEN, begins_with), each on a top-level key attribute and a value of its type.
 */
function analyzeKeyCondition(root: ConditionNode, schema: KeySchema, context: ExpressionContext): KeyConditions {
  const parts = root.kind === 'and' ? [root.left, root.right] : [root];
  let partition: string | undefined;
  let matchesSort: ((item: ModelMap) => boolean) | undefined;
  for (const part of parts) {
    const { name, test } = keyTest(part, context);
    if (name === schema.partitionKey) {
      if (part.kind !== 'compare' || part.comparator !== '=') throw validationError('Query key condition not supported');
      const value = keyValue(part.right, context);
      if (typeof value !== 'string') throw validationError('One or more parameter values were invalid: Condition parameter type does not match schema type');
      if (partition !== undefined) throw invalidKeyCondition('KeyConditionExpressions must only contain one condition per key');
      partition = value;
    } else if (name === schema.sortKey?.name) {
      if (matchesSort !== undefined) throw invalidKeyCondition('KeyConditionExpressions must only contain one condition per key');
      const operands = part.kind === 'compare' ? [part.right] : part.kind === 'between' ? [part.low, part.high] : part.kind === 'function' ? part.args.slice(1) : [];
      const type = schema.sortKey.type;
      for (const operand of operands) {
        if (typeOfValue(keyValue(operand, context)) !== type) throw validationError('One or more parameter values were invalid: Condition parameter type does not match schema type');
      }
      if (part.kind === 'function' && type !== 'S') throw invalidKeyCondition(`Incorrect operand type for operator or function; operator or function: begins_with, operand type: ${type}`);
      matchesSort = test;
    } else {
      throw validationError(`Query condition missed key schema element: ${schema.partitionKey}`);
    }
  }
  if (partition === undefined) throw validationError(`Query condition missed key schema element: ${schema.partitionKey}`);
  return { partition, matchesSort: matchesSort ?? (() => true) };
}

function keyValue(operand: ConditionOperand | undefined, context: ExpressionContext): ModelValue {
  if (operand?.kind !== 'value') throw validationError('Query key condition not supported');
  const value = context.values[operand.name];
  if (value === undefined) throw validationError(`An expression attribute value used in expression is not defined; attribute value: ${operand.name}`);
  return value;
}

function keyTest(part: ConditionNode, context: ExpressionContext): { name: string; test: (item: ModelMap) => boolean } {
  let subject: ConditionOperand | undefined;
  if (part.kind === 'compare') {
    if (part.comparator === '<>') throw invalidKeyCondition('Invalid operator used in KeyConditionExpression: <>');
    subject = part.left;
  } else if (part.kind === 'between') {
    subject = part.operand;
  } else if (part.kind === 'function') {
    if (part.name !== 'begins_with') throw invalidKeyCondition(`Invalid operator used in KeyConditionExpression: ${part.name}`);
    subject = part.args[0];
  } else {
    throw invalidKeyCondition(`Invalid operator used in KeyConditionExpression: ${part.kind.toUpperCase()}`);
  }
  if (subject?.kind !== 'path') throw validationError('Query key condition not supported');
  const path: ResolvedPath = resolvePath(subject.path, context.names);
  const [name] = path;
  if (path.length !== 1 || typeof name !== 'string') throw validationError('Query key condition not supported');
  return { name, test: (item) => evaluateCondition(part, item, context) };
}

/**
 * Wraps a call to the model, as the simulation sees fit: it may add latency before `apply`, fail
 * instead of applying, apply and then fail (a lost response), or never settle (a crash).
 */
export type CallGate = <T>(call: { readonly service: string; readonly operation: string; readonly input: unknown }, apply: () => T) => Promise<T>;

const COMMANDS = [
  [GetCommand, ModelOperation.get],
  [PutCommand, ModelOperation.put],
  [UpdateCommand, ModelOperation.update],
  [DeleteCommand, ModelOperation.delete],
  [QueryCommand, ModelOperation.query],
  [ScanCommand, ModelOperation.scan],
  [BatchGetCommand, ModelOperation.batchGet],
  [BatchWriteCommand, ModelOperation.batchWrite],
] as const;

/** The operation a lib-dynamodb command asks for, and its input. */
function readCommand(command: unknown): { readonly operation: ModelOperation; readonly input: unknown } {
  for (const [commandClass, operation] of COMMANDS) if (command instanceof commandClass) return { operation, input: command.input };
  const name = typeof command === 'object' && command !== null ? command.constructor.name : typeof command;
  throw new DynamoModelUnsupportedError(`${name} is not modelled`);
}

const applyAtOnce: CallGate = async (_call, apply) => apply();

/**
 * A DocumentClient whose `send` answers lib-dynamodb commands (GetCommand, UpdateCommand, …) from
 * `model`, through `gate`: `gate({service: 'dynamodb', operation, input}, apply)` where `apply`
 * runs the request on the model. Outputs carry a `$metadata` like the SDK's. Only `send` exists:
 * the adapters use nothing else.
 */
export function createModelDocumentClient(model: DynamoModel, gate: CallGate = applyAtOnce): DynamoDBDocumentClient {
  const client = {
    send: async (command: unknown): Promise<unknown> => {
      const { operation, input } = readCommand(command);
      return gate({ service: 'dynamodb', operation, input }, () => {
        const output = model.execute(operation, input);
        return { ...(isPlainObject(output) ? output : {}), $metadata: { httpStatusCode: 200, attempts: 1, totalRetryDelay: 0 } };
      });
    },
    destroy: (): void => undefined,
  };
  // The adapters only call send(); the rest of the client's surface is never reached.
  return client as unknown as DynamoDBDocumentClient;
}

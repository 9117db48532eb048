/**
 * DynamoDB's expression languages for the model: condition (ConditionExpression, FilterExpression,
 * KeyConditionExpression), update and projection expressions. An expression is parsed once per
 * distinct string into a tree whose placeholders are still unresolved, so the tree serves every
 * request that uses the string; names and values are bound per request.
 *
 * Precedence is DynamoDB's (Developer Guide, "Precedence in conditions"): comparators, IN, BETWEEN
 * and functions bind tightest, then NOT, then AND, then OR; parentheses group.
 */
import { isReservedWord } from './dynamo-reserved-words.js';
import {
  addNumbers,
  cloneMap,
  cloneValue,
  isSameSetType,
  subtractSets,
  unionSets,
  compareScalars,
  isModelMap,
  isModelSet,
  typeOfValue,
  validationError,
  valuesEqual,
  type ModelMap,
  type ModelValue,
} from './dynamo-values.js';

/** One step of a document path: an attribute or map member (by name or `#placeholder`), or a list index. */
export type PathStep = { readonly name: string; readonly isPlaceholder: boolean } | number;

/** A document path as written, placeholders unresolved. */
export type DocumentPath = readonly PathStep[];

/** A document path with its placeholders resolved to attribute names. */
export type ResolvedPath = readonly (string | number)[];

/** The comparators of a condition. */
export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** An operand of a condition: a path, a `:value`, or `size()` of one. */
export type ConditionOperand =
  | { readonly kind: 'path'; readonly path: DocumentPath }
  | { readonly kind: 'value'; readonly name: string }
  | { readonly kind: 'size'; readonly argument: ConditionOperand };

/** The functions that are conditions themselves. */
export type BooleanFunctionName = 'attribute_exists' | 'attribute_not_exists' | 'attribute_type' | 'begins_with' | 'contains';

/** A condition's tree, as parsed: AND, OR and NOT over comparisons, BETWEEN, IN and functions. */
export type ConditionNode =
  | { readonly kind: 'or' | 'and'; readonly left: ConditionNode; readonly right: ConditionNode }
  | { readonly kind: 'not'; readonly operand: ConditionNode }
  | { readonly kind: 'compare'; readonly comparator: Comparator; readonly left: ConditionOperand; readonly right: ConditionOperand }
  | { readonly kind: 'between'; readonly operand: ConditionOperand; readonly low: ConditionOperand; readonly high: ConditionOperand }
  | { readonly kind: 'in'; readonly operand: ConditionOperand; readonly candidates: readonly ConditionOperand[] }
  | { readonly kind: 'function'; readonly name: BooleanFunctionName; readonly args: readonly ConditionOperand[] };

/** An operand of a SET action: a path, a `:value`, `if_not_exists` or `list_append`. */
export type UpdateOperand =
  | { readonly kind: 'path'; readonly path: DocumentPath }
  | { readonly kind: 'value'; readonly name: string }
  | { readonly kind: 'if_not_exists'; readonly path: DocumentPath; readonly fallback: UpdateOperand }
  | { readonly kind: 'list_append'; readonly first: UpdateOperand; readonly second: UpdateOperand };

/** The value a SET action assigns: an operand, or the sum or difference of two. */
export type SetValue =
  | { readonly kind: 'operand'; readonly operand: UpdateOperand }
  | { readonly kind: '+' | '-'; readonly left: UpdateOperand; readonly right: UpdateOperand };

/** One action of an update expression, in its section. */
export type UpdateAction =
  | { readonly section: 'SET'; readonly path: DocumentPath; readonly value: SetValue }
  | { readonly section: 'REMOVE'; readonly path: DocumentPath }
  | { readonly section: 'ADD' | 'DELETE'; readonly path: DocumentPath; readonly value: string };

/** What every parsed expression declares: the placeholders it uses, for DynamoDB's unused/undefined checks. */
interface Placeholders {
  readonly names: ReadonlySet<string>;
  readonly values: ReadonlySet<string>;
}

/** A check of expression values that DynamoDB makes on the request, before reading any item. */
type ValueCheck =
  | { readonly kind: 'type'; readonly value: string; readonly isAllowed: (value: ModelValue) => boolean; readonly problem: string }
  | { readonly kind: 'bounds'; readonly low: string; readonly high: string };

/** A parsed ConditionExpression, FilterExpression or KeyConditionExpression. */
export interface ParsedCondition extends Placeholders {
  readonly root: ConditionNode;
  readonly checks: readonly ValueCheck[];
  /** Top-level attributes the expression reads (placeholders unresolved), for Query's filter-on-key check. */
  readonly heads: readonly PathStep[];
}

/** A parsed UpdateExpression: its actions in the order written. */
export interface ParsedUpdate extends Placeholders {
  readonly actions: readonly UpdateAction[];
  readonly checks: readonly ValueCheck[];
}

/** A parsed ProjectionExpression: its paths. */
export interface ParsedProjection extends Placeholders {
  readonly paths: readonly DocumentPath[];
}

/** Names and values of one request, as given in ExpressionAttributeNames and ExpressionAttributeValues. */
export interface ExpressionContext {
  readonly names: Readonly<Record<string, string>>;
  readonly values: Readonly<ModelMap>;
}

type TokenType = 'identifier' | 'name' | 'value' | 'index' | 'punctuation' | 'comparator' | 'end';

interface Token {
  readonly type: TokenType;
  readonly text: string;
  readonly position: number;
}

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;
const PLACEHOLDER = /[A-Za-z0-9_]+/y;
const INDEX = /\[\s*([0-9]+)\s*\]/y;
const WHITESPACE = /\s+/y;

function matchAt(pattern: RegExp, text: string, position: number): RegExpExecArray | null {
  pattern.lastIndex = position;
  return pattern.exec(text);
}

function tokenize(kind: string, text: string): Token[] {
  const tokens: Token[] = [];
  let position = 0;
  while (position < text.length) {
    const space = matchAt(WHITESPACE, text, position);
    if (space !== null) {
      position += space[0].length;
      continue;
    }
    const char = text.charAt(position);
    if (char === '#' || char === ':') {
      const body = matchAt(PLACEHOLDER, text, position + 1);
      if (body === null) throw syntaxError(kind, char, text);
      tokens.push({ type: char === '#' ? 'name' : 'value', text: char + body[0], position });
      position += 1 + body[0].length;
      continue;
    }
    const identifier = matchAt(IDENTIFIER, text, position);
    if (identifier !== null) {
      tokens.push({ type: 'identifier', text: identifier[0], position });
      position += identifier[0].length;
      continue;
    }
    const index = matchAt(INDEX, text, position);
    if (index !== null) {
      tokens.push({ type: 'index', text: index[1] ?? '', position });
      position += index[0].length;
      continue;
    }
    const two = text.slice(position, position + 2);
    if (two === '<>' || two === '<=' || two === '>=') {
      tokens.push({ type: 'comparator', text: two, position });
      position += 2;
      continue;
    }
    if (char === '=' || char === '<' || char === '>') {
      tokens.push({ type: 'comparator', text: char, position });
      position += 1;
      continue;
    }
    if ('.,()+-'.includes(char)) {
      tokens.push({ type: 'punctuation', text: char, position });
      position += 1;
      continue;
    }
    throw syntaxError(kind, char, text);
  }
  tokens.push({ type: 'end', text: '<EOF>', position: text.length });
  return tokens;
}

function syntaxError(kind: string, token: string, text: string): Error {
  return validationError(`Invalid ${kind}: Syntax error; token: "${token}", near: "${text}"`);
}

const BOOLEAN_FUNCTIONS: Readonly<Record<BooleanFunctionName, number>> = {
  attribute_exists: 1,
  attribute_not_exists: 1,
  attribute_type: 2,
  begins_with: 2,
  contains: 2,
};

function isBooleanFunction(name: string): name is BooleanFunctionName {
  return Object.hasOwn(BOOLEAN_FUNCTIONS, name);
}

const COMPARATORS: readonly Comparator[] = ['=', '<>', '<', '<=', '>', '>='];

function asComparator(text: string): Comparator {
  const comparator = COMPARATORS.find((candidate) => candidate === text);
  if (comparator === undefined) throw new Error(`the tokenizer made an unknown comparator: ${text}`);
  return comparator;
}

const SECTIONS = ['SET', 'REMOVE', 'ADD', 'DELETE'] as const;
type Section = (typeof SECTIONS)[number];

function asSection(token: Token): Section | undefined {
  if (token.type !== 'identifier') return undefined;
  const upper = token.text.toUpperCase();
  return SECTIONS.find((section) => section === upper);
}

const ATTRIBUTE_TYPES: ReadonlySet<string> = new Set(['S', 'SS', 'N', 'NS', 'B', 'BS', 'BOOL', 'NULL', 'L', 'M']);

/** A recursive-descent parser over one expression's tokens. */
class Parser {
  private position = 0;
  private readonly tokens: Token[];
  readonly names = new Set<string>();
  readonly values = new Set<string>();
  readonly checks: ValueCheck[] = [];
  readonly heads: PathStep[] = [];

  constructor(
    private readonly kind: string,
    private readonly text: string,
  ) {
    if (text.trim().length === 0) throw validationError(`Invalid ${kind}: The expression can not be empty;`);
    this.tokens = tokenize(kind, text);
  }

  private peek(offset = 0): Token {
    const token = this.tokens[Math.min(this.position + offset, this.tokens.length - 1)];
    if (token === undefined) throw new Error('a token list always ends with an end token');
    return token;
  }

  private next(): Token {
    const token = this.peek();
    this.position += 1;
    return token;
  }

  private fail(token: Token = this.peek()): Error {
    return syntaxError(this.kind, token.text, this.text);
  }

  private expect(text: string): void {
    const token = this.next();
    if (token.text !== text || (token.type !== 'punctuation' && token.type !== 'comparator')) throw this.fail(token);
  }

  private isKeyword(word: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.type === 'identifier' && token.text.toUpperCase() === word;
  }

  private isPunctuation(text: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.type === 'punctuation' && token.text === text;
  }

  expectEnd(): void {
    if (this.peek().type !== 'end') throw this.fail();
  }

  private valuePlaceholder(): string {
    const token = this.next();
    if (token.type !== 'value') throw this.fail(token);
    this.values.add(token.text);
    return token.text;
  }

  private pathStep(token: Token): PathStep {
    if (token.type === 'name') {
      this.names.add(token.text);
      return { name: token.text, isPlaceholder: true };
    }
    if (token.type === 'identifier') {
      if (isReservedWord(token.text)) throw validationError(`Invalid ${this.kind}: Attribute name is a reserved keyword; reserved keyword: ${token.text}`);
      return { name: token.text, isPlaceholder: false };
    }
    throw this.fail(token);
  }

  path(): DocumentPath {
    const steps: PathStep[] = [this.pathStep(this.next())];
    const head = steps[0];
    if (head !== undefined) this.heads.push(head);
    for (;;) {
      const token = this.peek();
      if (token.type === 'index') {
        this.next();
        steps.push(Number(token.text));
      } else if (this.isPunctuation('.')) {
        this.next();
        steps.push(this.pathStep(this.next()));
      } else {
        return steps;
      }
    }
  }

  // Conditions: or := and (OR and)*; and := not (AND not)*; not := NOT primary | primary.
  condition(): ConditionNode {
    let left = this.conjunction();
    while (this.isKeyword('OR')) {
      this.next();
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): ConditionNode {
    let left = this.negation();
    while (this.isKeyword('AND')) {
      this.next();
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  // NOT applies to one comparison, function or parenthesised condition: `NOT NOT a` is refused (as dynalite, whose grammar copies DynamoDB's).
  private negation(): ConditionNode {
    if (this.isKeyword('NOT')) {
      this.next();
      return { kind: 'not', operand: this.primary() };
    }
    return this.primary();
  }

  private primary(): ConditionNode {
    if (this.isPunctuation('(')) {
      this.next();
      if (this.isPunctuation('(') && this.closesTogether()) {
        throw validationError(`Invalid ${this.kind}: The expression has redundant parentheses;`);
      }
      const inner = this.condition();
      this.expect(')');
      return inner;
    }
    const token = this.peek();
    if (token.type === 'identifier' && this.isPunctuation('(', 1)) {
      if (isBooleanFunction(token.text)) {
        const node = this.booleanFunction(token.text);
        if (this.peek().type === 'comparator' || this.isKeyword('BETWEEN') || this.isKeyword('IN')) {
          throw validationError(`Invalid ${this.kind}: The function is not allowed to be used this way in an expression; function: ${token.text}`);
        }
        return node;
      }
      if (token.text !== 'size') throw validationError(`Invalid ${this.kind}: Invalid function name; function: ${token.text}`);
    }
    const operand = this.operand();
    if (this.peek().type === 'comparator') {
      const comparator = asComparator(this.next().text);
      return { kind: 'compare', comparator, left: operand, right: this.operand() };
    }
    if (this.isKeyword('BETWEEN')) {
      this.next();
      const low = this.operand();
      if (!this.isKeyword('AND')) throw this.fail();
      this.next();
      const high = this.operand();
      if (low.kind === 'value' && high.kind === 'value') this.checks.push({ kind: 'bounds', low: low.name, high: high.name });
      return { kind: 'between', operand, low, high };
    }
    if (this.isKeyword('IN')) {
      this.next();
      this.expect('(');
      const candidates = [this.operand()];
      while (this.isPunctuation(',')) {
        this.next();
        candidates.push(this.operand());
      }
      this.expect(')');
      // "The list can contain up to 100 values" (condition expressions, IN).
      if (candidates.length > 100) throw validationError(`Invalid ${this.kind}: Too many operands for the IN operator`);
      return { kind: 'in', operand, candidates };
    }
    if (operand.kind === 'size') throw validationError(`Invalid ${this.kind}: The function is not allowed to be used this way in an expression; function: size`);
    throw this.fail();
  }

  /** Whether the `(` at the cursor is closed right before the `)` that closes the enclosing `(`: `((…))`. */
  private closesTogether(): boolean {
    let depth = 0;
    for (let offset = 0; ; offset += 1) {
      const token = this.peek(offset);
      if (token.type === 'end') return false;
      if (token.type !== 'punctuation') continue;
      if (token.text === '(') depth += 1;
      if (token.text === ')') {
        depth -= 1;
        if (depth === 0) return this.isPunctuation(')', offset + 1);
      }
    }
  }

  private booleanFunction(name: BooleanFunctionName): ConditionNode {
    this.next();
    this.expect('(');
    const args: ConditionOperand[] = [];
    if (!this.isPunctuation(')')) {
      args.push(this.operand());
      while (this.isPunctuation(',')) {
        this.next();
        args.push(this.operand());
      }
    }
    this.expect(')');
    if (args.length !== BOOLEAN_FUNCTIONS[name]) {
      throw validationError(`Invalid ${this.kind}: Incorrect number of operands for operator or function; operator or function: ${name}, number of operands: ${args.length}`);
    }
    const [first, second] = args;
    if ((name === 'attribute_exists' || name === 'attribute_not_exists' || name === 'attribute_type') && first?.kind !== 'path') {
      throw validationError(`Invalid ${this.kind}: Operator or function requires a document path; operator or function: ${name}`);
    }
    if (name === 'attribute_type' && second?.kind === 'value') {
      this.checks.push({
        kind: 'type',
        value: second.name,
        isAllowed: (value) => typeof value === 'string' && ATTRIBUTE_TYPES.has(value),
        problem: `Invalid attribute type name found; operator or function: ${name}`,
      });
    }
    if (name === 'begins_with') {
      for (const arg of args) {
        if (arg.kind === 'value') {
          this.checks.push({ kind: 'type', value: arg.name, isAllowed: (value) => typeof value === 'string', problem: `Incorrect operand type for operator or function; operator or function: ${name}` });
        }
      }
    }
    return { kind: 'function', name, args };
  }

  private operand(): ConditionOperand {
    const token = this.peek();
    if (token.type === 'value') return { kind: 'value', name: this.valuePlaceholder() };
    if (token.type === 'identifier' && this.isPunctuation('(', 1)) {
      if (token.text !== 'size') {
        if (isBooleanFunction(token.text)) throw validationError(`Invalid ${this.kind}: The function is not allowed to be used this way in an expression; function: ${token.text}`);
        throw validationError(`Invalid ${this.kind}: Invalid function name; function: ${token.text}`);
      }
      this.next();
      this.expect('(');
      const argument = this.operand();
      this.expect(')');
      if (argument.kind === 'value') {
        this.checks.push({
          kind: 'type',
          value: argument.name,
          isAllowed: (value) => !['N', 'BOOL', 'NULL'].includes(typeOfValue(value)),
          problem: 'Incorrect operand type for operator or function; operator or function: size',
        });
      }
      return { kind: 'size', argument };
    }
    return { kind: 'path', path: this.path() };
  }

  // Update: section+, each of SET, REMOVE, ADD, DELETE at most once, in any order.
  update(): UpdateAction[] {
    const actions: UpdateAction[] = [];
    const seen = new Set<Section>();
    do {
      const section = asSection(this.next());
      if (section === undefined) throw this.fail(this.peek(-1));
      if (seen.has(section)) throw validationError(`Invalid UpdateExpression: The "${section}" section can only be used once in an update expression;`);
      seen.add(section);
      actions.push(this.updateAction(section));
      while (this.isPunctuation(',')) {
        this.next();
        actions.push(this.updateAction(section));
      }
    } while (this.peek().type !== 'end');
    return actions;
  }

  private updateAction(section: Section): UpdateAction {
    const path = this.path();
    if (section === 'REMOVE') return { section, path };
    if (section === 'SET') {
      this.expect('=');
      const left = this.updateOperand();
      if (this.isPunctuation('+') || this.isPunctuation('-')) {
        const operator = this.next().text === '+' ? '+' : '-';
        const right = this.updateOperand();
        for (const operand of [left, right]) this.requireNumber(operand, operator);
        return { section, path, value: { kind: operator, left, right } };
      }
      return { section, path, value: { kind: 'operand', operand: left } };
    }
    const value = this.valuePlaceholder();
    this.checks.push(
      section === 'ADD'
        ? { kind: 'type', value, isAllowed: (item) => typeof item === 'number' || isModelSet(item), problem: 'Incorrect operand type for operator or function; operator: ADD' }
        : { kind: 'type', value, isAllowed: isModelSet, problem: 'Incorrect operand type for operator or function; operator: DELETE' },
    );
    return { section, path, value };
  }

  private requireNumber(operand: UpdateOperand, operator: string): void {
    if (operand.kind === 'value') {
      this.checks.push({ kind: 'type', value: operand.name, isAllowed: (value) => typeof value === 'number', problem: `Incorrect operand type for operator or function; operator or function: ${operator}` });
    }
  }

  private updateOperand(): UpdateOperand {
    const token = this.peek();
    if (token.type === 'value') return { kind: 'value', name: this.valuePlaceholder() };
    if (token.type === 'identifier' && this.isPunctuation('(', 1)) {
      this.next();
      this.expect('(');
      if (token.text === 'if_not_exists') {
        if (this.peek().type !== 'identifier' && this.peek().type !== 'name') {
          throw validationError('Invalid UpdateExpression: Operator or function requires a document path; operator or function: if_not_exists');
        }
        const path = this.path();
        this.expect(',');
        const fallback = this.updateOperand();
        this.expect(')');
        return { kind: 'if_not_exists', path, fallback };
      }
      if (token.text === 'list_append') {
        const first = this.updateOperand();
        this.expect(',');
        const second = this.updateOperand();
        this.expect(')');
        for (const operand of [first, second]) {
          if (operand.kind === 'value') {
            this.checks.push({ kind: 'type', value: operand.name, isAllowed: Array.isArray, problem: 'Incorrect operand type for operator or function; operator or function: list_append' });
          }
        }
        return { kind: 'list_append', first, second };
      }
      throw validationError(`Invalid UpdateExpression: Invalid function name; function: ${token.text}`);
    }
    return { kind: 'path', path: this.path() };
  }

  projection(): DocumentPath[] {
    const paths = [this.path()];
    while (this.isPunctuation(',')) {
      this.next();
      paths.push(this.path());
    }
    return paths;
  }
}

/** Most distinct expressions a parser keeps; a program builds few, so this only bounds a runaway. */
const MAX_CACHED_EXPRESSIONS = 10_000;

function remember<T>(cache: Map<string, T>, text: string, parse: () => T): T {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const parsed = parse();
  if (cache.size >= MAX_CACHED_EXPRESSIONS) cache.clear();
  cache.set(text, parsed);
  return parsed;
}

/**
 * Parses expressions, remembering each distinct string's tree: a simulation sends the same few
 * expressions millions of times, so a string is parsed once. Share one parser between models
 * (DynamoModelOptions.parser) and it is parsed once per process, not once per seed.
 */
export class ExpressionParser {
  private readonly conditions = new Map<string, ParsedCondition>();
  private readonly updates = new Map<string, ParsedUpdate>();
  private readonly projections = new Map<string, ParsedProjection>();
  /** Expressions parsed (cache misses), for tests of the cache. */
  parseCount = 0;

  /** @param kind the request member, for messages: ConditionExpression, FilterExpression, KeyConditionExpression */
  condition(kind: string, text: string): ParsedCondition {
    return remember(this.conditions, `${kind}\u0000${text}`, () => {
      this.parseCount += 1;
      const parser = new Parser(kind, text);
      const root = parser.condition();
      parser.expectEnd();
      return { root, names: parser.names, values: parser.values, checks: parser.checks, heads: parser.heads };
    });
  }

  update(text: string): ParsedUpdate {
    return remember(this.updates, text, () => {
      this.parseCount += 1;
      const parser = new Parser('UpdateExpression', text);
      const actions = parser.update();
      parser.expectEnd();
      return { actions, names: parser.names, values: parser.values, checks: parser.checks };
    });
  }

  projection(text: string): ParsedProjection {
    return remember(this.projections, text, () => {
      this.parseCount += 1;
      const parser = new Parser('ProjectionExpression', text);
      const paths = parser.projection();
      parser.expectEnd();
      return { paths, names: parser.names, values: parser.values };
    });
  }
}

/**
 * Runs an expression's checks of value types against the request's values.
 * @throws ValidationException as DynamoDB refuses such a request
 */
export function checkValues(kind: string, checks: readonly ValueCheck[], context: ExpressionContext): void {
  for (const check of checks) {
    if (check.kind === 'bounds') {
      // BETWEEN's bounds must be of one type and in order.
      const low = context.values[check.low];
      const high = context.values[check.high];
      if (low === undefined || high === undefined) continue;
      if (typeOfValue(low) !== typeOfValue(high)) throw validationError(`Invalid ${kind}: The BETWEEN operator requires same data type for lower and upper bounds`);
      const order = compareScalars(low, high);
      if (order !== undefined && order > 0) throw validationError(`Invalid ${kind}: The BETWEEN operator requires upper bound to be greater than or equal to lower bound`);
      continue;
    }
    const value = context.values[check.value];
    if (value === undefined) continue;
    if (!check.isAllowed(value)) throw validationError(`Invalid ${kind}: ${check.problem}, operand type: ${typeOfValue(value)}`);
  }
}

/**
 * Resolves a path's placeholders.
 * @throws ValidationException for a placeholder the request does not define
 */
export function resolvePath(path: DocumentPath, names: Readonly<Record<string, string>>): (string | number)[] {
  const resolved: (string | number)[] = [];
  for (const step of path) {
    if (typeof step === 'number') {
      resolved.push(step);
    } else if (!step.isPlaceholder) {
      resolved.push(step.name);
    } else {
      const name = names[step.name];
      if (name === undefined) throw validationError(`An expression attribute name used in the document path is not defined; attribute name: ${step.name}`);
      resolved.push(name);
    }
  }
  return resolved;
}

/** The value at `path` in `item`, or undefined when any step is missing or of the wrong kind. */
export function readPath(item: ModelMap, path: ResolvedPath): ModelValue | undefined {
  let current: ModelValue | undefined = item;
  for (const step of path) {
    if (current === undefined) return undefined;
    if (typeof step === 'number') {
      current = Array.isArray(current) ? current[step] : undefined;
    } else {
      current = isModelMap(current) && Object.hasOwn(current, step) ? current[step] : undefined;
    }
  }
  return current;
}

function operandValue(operand: ConditionOperand, item: ModelMap, context: ExpressionContext): ModelValue | undefined {
  switch (operand.kind) {
    case 'value':
      return valueOf(operand.name, context);
    case 'path':
      return readPath(item, resolvePath(operand.path, context.names));
    case 'size':
      return sizeOf(operandValue(operand.argument, item, context));
  }
}

function valueOf(name: string, context: ExpressionContext): ModelValue {
  const value = context.values[name];
  if (value === undefined) throw validationError(`An expression attribute value used in expression is not defined; attribute value: ${name}`);
  return value;
}

/** size(): a string's length, a binary's bytes, a set's or list's element count, a map's member count; nothing for other types. */
function sizeOf(value: ModelValue | undefined): number | undefined {
  if (typeof value === 'string') return value.length;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return value.length;
  if (isModelSet(value)) return value.size;
  if (isModelMap(value)) return Object.keys(value).length;
  return undefined;
}

/**
 * `=`: same type and value. A missing operand equals nothing but another missing one (`a = b`
 * where the item has neither holds, as in dynalite, whose operators copy DynamoDB's).
 */
function isEqual(left: ModelValue | undefined, right: ModelValue | undefined): boolean {
  if (left === undefined || right === undefined) return left === right;
  return valuesEqual(left, right);
}

function compare(comparator: Comparator, left: ModelValue | undefined, right: ModelValue | undefined): boolean {
  if (comparator === '=') return isEqual(left, right);
  // `<>` is the negation of `=`: {"S":"6"} is not equal to {"N":"6"}, and a missing attribute is not equal to a value.
  if (comparator === '<>') return !isEqual(left, right);
  const order = compareScalars(left, right);
  if (order === undefined) return false;
  switch (comparator) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
  }
}

function contains(container: ModelValue | undefined, element: ModelValue | undefined): boolean {
  if (container === undefined || element === undefined) return false;
  if (typeof container === 'string') return typeof element === 'string' && container.includes(element);
  if (isModelSet(container)) {
    const members: ReadonlySet<unknown> = container;
    return (typeof element === 'string' || typeof element === 'number') && members.has(element);
  }
  if (Array.isArray(container)) return container.some((member) => valuesEqual(member, element));
  return false;
}

/** Evaluates a condition on an item (an absent item is `{}`). */
export function evaluateCondition(node: ConditionNode, item: ModelMap, context: ExpressionContext): boolean {
  switch (node.kind) {
    case 'or':
      return evaluateCondition(node.left, item, context) || evaluateCondition(node.right, item, context);
    case 'and':
      return evaluateCondition(node.left, item, context) && evaluateCondition(node.right, item, context);
    case 'not':
      return !evaluateCondition(node.operand, item, context);
    case 'compare':
      return compare(node.comparator, operandValue(node.left, item, context), operandValue(node.right, item, context));
    case 'between': {
      const value = operandValue(node.operand, item, context);
      const low = compareScalars(value, operandValue(node.low, item, context));
      const high = compareScalars(value, operandValue(node.high, item, context));
      return low !== undefined && high !== undefined && low >= 0 && high <= 0;
    }
    case 'in': {
      const value = operandValue(node.operand, item, context);
      return value !== undefined && node.candidates.some((candidate) => isEqual(value, operandValue(candidate, item, context)));
    }
    case 'function':
      return evaluateFunction(node.name, node.args, item, context);
  }
}

function evaluateFunction(name: BooleanFunctionName, args: readonly ConditionOperand[], item: ModelMap, context: ExpressionContext): boolean {
  const [first, second] = args.map((arg) => operandValue(arg, item, context));
  switch (name) {
    case 'attribute_exists':
      return first !== undefined;
    case 'attribute_not_exists':
      return first === undefined;
    case 'attribute_type':
      return first !== undefined && typeOfValue(first) === second;
    case 'begins_with':
      return typeof first === 'string' && typeof second === 'string' && first.startsWith(second);
    case 'contains':
      return contains(first, second);
  }
}

/**
 * Whether two paths overlap (one is the other or inside it) or conflict (a step is a name in one and
 * an index in the other): DynamoDB refuses both in one update or projection expression.
 */
export function findPathClash(paths: readonly ResolvedPath[]): string | undefined {
  for (let i = 0; i < paths.length; i += 1) {
    for (let j = i + 1; j < paths.length; j += 1) {
      const a = paths[i] ?? [];
      const b = paths[j] ?? [];
      let clash: string | undefined = 'Two document paths overlap with each other; must remove or rewrite one of these paths';
      for (let step = 0; step < Math.min(a.length, b.length); step += 1) {
        if (typeof a[step] !== typeof b[step]) {
          clash = 'Two document paths conflict with each other; must remove or rewrite one of these paths';
          break;
        }
        if (a[step] !== b[step]) {
          clash = undefined;
          break;
        }
      }
      if (clash !== undefined) return `${clash}; path one: [${a.join(', ')}], path two: [${b.join(', ')}]`;
    }
  }
  return undefined;
}

/**
 * The part of `item` that `paths` select, nested as in the item; list elements selected by index
 * keep their order and close up (`a[3]` alone gives a one-element list).
 */
export function projectPaths(item: ModelMap, paths: readonly ResolvedPath[]): ModelMap {
  const result: ModelMap = {};
  const sparseLists: ModelValue[][] = [];
  for (const path of paths) {
    const value = readPath(item, path);
    if (value === undefined) continue;
    let container: ModelMap | ModelValue[] = result;
    for (let index = 0; index < path.length; index += 1) {
      const step = path[index];
      const nextStep = path[index + 1];
      if (step === undefined) break;
      if (nextStep === undefined) {
        setMember(container, step, cloneValue(value));
        break;
      }
      let child = getMember(container, step);
      if (child === undefined) {
        child = typeof nextStep === 'number' ? [] : {};
        if (Array.isArray(child)) sparseLists.push(child);
        setMember(container, step, child);
      }
      if (typeof child !== 'object' || child === null || isModelSet(child) || child instanceof Uint8Array) break;
      container = child;
    }
  }
  // Fill order was index order; drop the holes between selected elements.
  for (const list of sparseLists) {
    const dense = list.filter(() => true);
    list.length = 0;
    list.push(...dense);
  }
  return result;
}

function getMember(container: ModelMap | ModelValue[], step: string | number): ModelValue | undefined {
  if (Array.isArray(container)) return typeof step === 'number' ? container[step] : undefined;
  return typeof step === 'string' && Object.hasOwn(container, step) ? container[step] : undefined;
}

function setMember(container: ModelMap | ModelValue[], step: string | number, value: ModelValue): void {
  if (Array.isArray(container)) {
    if (typeof step === 'number') container[step] = value;
  } else if (typeof step === 'string') {
    container[step] = value;
  }
}

/** An update's actions with their paths resolved, ready to apply. */
export interface BoundUpdate {
  readonly actions: readonly { readonly action: UpdateAction; readonly path: ResolvedPath }[];
}

const INVALID_UPDATE_PATH = 'The document path provided in the update expression is invalid for update';
const INCORRECT_OPERAND = 'An operand in the update expression has an incorrect data type';

function updateOperandValue(operand: UpdateOperand, item: ModelMap, context: ExpressionContext): ModelValue {
  switch (operand.kind) {
    case 'value':
      return valueOf(operand.name, context);
    case 'path': {
      const value = readPath(item, resolvePath(operand.path, context.names));
      if (value === undefined) throw validationError('The provided expression refers to an attribute that does not exist in the item');
      return value;
    }
    case 'if_not_exists':
      return readPath(item, resolvePath(operand.path, context.names)) ?? updateOperandValue(operand.fallback, item, context);
    case 'list_append': {
      const first = updateOperandValue(operand.first, item, context);
      const second = updateOperandValue(operand.second, item, context);
      if (!Array.isArray(first) || !Array.isArray(second)) throw validationError(INCORRECT_OPERAND);
      return [...first, ...second];
    }
  }
}

function setValueOf(value: SetValue, item: ModelMap, context: ExpressionContext): ModelValue {
  if (value.kind === 'operand') return updateOperandValue(value.operand, item, context);
  const left = updateOperandValue(value.left, item, context);
  const right = updateOperandValue(value.right, item, context);
  if (typeof left !== 'number' || typeof right !== 'number') throw validationError(INCORRECT_OPERAND);
  return addNumbers(left, value.kind === '+' ? right : -right);
}

/** Where a path's last step lives in `item`: its parent container and the step. */
function parentOf(item: ModelMap, path: ResolvedPath): { readonly parent: ModelMap | ModelValue[]; readonly step: string | number } {
  const step = path[path.length - 1];
  const parent = path.length === 1 ? item : readPath(item, path.slice(0, -1));
  if (typeof step === 'number' && Array.isArray(parent)) return { parent, step };
  if (typeof step === 'string' && isModelMap(parent)) return { parent, step };
  throw validationError(INVALID_UPDATE_PATH);
}

/**
 * Applies an update to `base` (the old item, or the key alone when there was none) and returns the
 * new item; `base` is not changed. Every SET operand reads `base`, the item as it was before this
 * write, as DynamoDB evaluates them. A set emptied by DELETE is removed (DynamoDB has no empty set).
 * @throws ValidationException for an operand of the wrong type, a missing operand, or an invalid path
 */
export function applyUpdate(bound: BoundUpdate, base: ModelMap, context: ExpressionContext): ModelMap {
  const values = bound.actions.map(({ action }) => (action.section === 'SET' ? setValueOf(action.value, base, context) : undefined));
  const item = cloneMap(base);
  const removedFromLists: { list: ModelValue[]; index: number }[] = [];
  bound.actions.forEach(({ action, path }, position) => {
    const { parent, step } = parentOf(item, path);
    const existing = getMember(parent, step);
    switch (action.section) {
      case 'SET': {
        const computed = values[position];
        if (computed === undefined) throw new Error('every SET action has its value computed');
        const value = cloneValue(computed);
        if (Array.isArray(parent) && typeof step === 'number' && step >= parent.length) parent.push(value);
        else setMember(parent, step, value);
        return;
      }
      case 'REMOVE':
        if (Array.isArray(parent)) {
          if (typeof step === 'number' && step < parent.length) removedFromLists.push({ list: parent, index: step });
        } else if (typeof step === 'string') {
          delete parent[step];
        }
        return;
      case 'ADD': {
        const operand = valueOf(action.value, context);
        if (typeof operand === 'number') {
          if (existing !== undefined && typeof existing !== 'number') throw validationError(INCORRECT_OPERAND);
          setMember(parent, step, existing === undefined ? operand : addNumbers(existing, operand));
        } else if (isModelSet(operand)) {
          if (existing === undefined) setMember(parent, step, cloneValue(operand));
          else if (isModelSet(existing) && isSameSetType(existing, operand)) setMember(parent, step, unionSets(existing, operand));
          else throw validationError(INCORRECT_OPERAND);
        }
        return;
      }
      case 'DELETE': {
        const operand = valueOf(action.value, context);
        if (existing === undefined || !isModelSet(operand)) return;
        if (!isModelSet(existing) || !isSameSetType(existing, operand)) throw validationError(INCORRECT_OPERAND);
        const remaining = subtractSets(existing, operand);
        if (remaining !== undefined) setMember(parent, step, remaining);
        else if (Array.isArray(parent) && typeof step === 'number') removedFromLists.push({ list: parent, index: step });
        else if (!Array.isArray(parent) && typeof step === 'string') delete parent[step];
        return;
      }
    }
  });
  // Indexes name elements of the list as it was: remove from the highest down.
  removedFromLists.sort((a, b) => b.index - a.index);
  for (const { list, index } of removedFromLists) list.splice(index, 1);
  return item;
}

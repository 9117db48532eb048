/**
 * Powertools Logger for a terminal: the same structured log calls as in Lambda, printed as one
 * readable line each (`12:00:01.123 WARN  consumer      event dead-lettered messageId=… reason="…"`)
 * instead of one JSON document each.
 */
import { Logger, LogLevelThreshold, type LogItem } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions, LogAttributes } from '@aws-lambda-powertools/logger/types';
import type { LogLevel } from '../lambda/config.js';

/** Where finished lines go: the terminal by default, a collector in tests. */
export type LogSink = (line: string) => void;

/** Keys Powertools adds to every item; the line shows them in fixed columns or not at all. */
const BASE_KEYS: ReadonlySet<string> = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'sampling_rate',
  'xray_trace_id',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'correlation_id',
]);

/** Service names are padded to this width so that messages line up. */
const SERVICE_COLUMN = 13;

/** As Powertools does through the console: warnings and errors to stderr, the rest to stdout. */
function writeToTerminal(logLevel: number, line: string): void {
  (logLevel >= LogLevelThreshold.WARN ? process.stderr : process.stdout).write(`${line}\n`);
}

/** Local wall-clock time with milliseconds: `12:00:01.123`. */
export function formatClock(at: Date): string {
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  return `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}.${pad(at.getMilliseconds(), 3)}`;
}

function formatError(error: Error): string {
  const cause = error.cause instanceof Error ? ` (cause: ${formatError(error.cause)})` : '';
  return `${error.name}: ${error.message}${cause}`;
}

/** A value as `key=value` shows it: bare when it is one plain word, quoted JSON otherwise. */
export function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(formatError(value));
  if (typeof value === 'string') return /^[\w.:/@+-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value, (_key, inner: unknown) => (inner instanceof Error ? formatError(inner) : inner)) ?? String(value);
}

/** Renders one log item's attributes as a terminal line. */
export function formatLogLine(attributes: LogAttributes): string {
  const level = String(attributes.level ?? '').padEnd(5);
  const service = String(attributes.service ?? '').padEnd(SERVICE_COLUMN);
  const fields = Object.entries(attributes)
    .filter(([key, value]) => !BASE_KEYS.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${formatValue(value)}`);
  const at = typeof attributes.timestamp === 'string' ? new Date(attributes.timestamp) : new Date();
  return [`${formatClock(at)} ${level} ${service} ${String(attributes.message ?? '')}`, ...fields].join(' ');
}

/**
 * A Powertools Logger whose items are printed as terminal lines. Everything else (levels,
 * persistent keys, child loggers, error formatting) is Powertools' own.
 */
export class TerminalLogger extends Logger {
  // Not a #private field: Powertools may print from inside its own constructor, before a
  // subclass's fields exist, and printLog must then fall back to the terminal instead of throwing.
  private readonly sink: LogSink | undefined;

  constructor(options: ConstructorOptions & { readonly sink?: LogSink } = {}) {
    const { sink, ...loggerOptions } = options;
    super(loggerOptions);
    this.sink = sink;
  }

  protected override createLogger(options?: ConstructorOptions): Logger {
    return new TerminalLogger({ ...options, ...(this.sink === undefined ? {} : { sink: this.sink }) });
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (logLevel >= LogLevelThreshold.SILENT) return;
    log.prepareForPrint();
    const line = formatLogLine(log.getAttributes());
    if (this.sink === undefined) writeToTerminal(logLevel, line);
    else this.sink(line);
  }
}

/** One logger per service name, as each Lambda function has its own. */
export function createTerminalLogger(serviceName: string, logLevel: LogLevel, sink?: LogSink): TerminalLogger {
  return new TerminalLogger({ serviceName, logLevel, ...(sink === undefined ? {} : { sink }) });
}

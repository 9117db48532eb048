/**
 * Command-line options: the ones every command takes, strict parsing with node:util's
 * `parseArgs`, and the checks that turn option text into values. Every problem is a
 * {@link UsageError}, raised before anything is sent.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { parseDurationMs } from './duration.js';
import { UsageError } from './errors.js';

/** Where the local stack listens (`npm start`, docs/api.md#the-local-stack). */
export const DEFAULT_URL = 'http://127.0.0.1:3000';

/** Options of every command. */
export const COMMON_OPTIONS = {
  url: { type: 'string' },
  sigv4: { type: 'boolean' },
  region: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

/** How often waits ask the API again, unless `--interval` says otherwise. */
export const DEFAULT_POLL_INTERVAL_MS = 2_000;

/** The `--interval` option of commands that wait. */
export const INTERVAL_OPTION = { interval: { type: 'string' } } as const satisfies ParseArgsOptionsConfig;

export const COMMON_OPTIONS_HELP = `Common options:
  --url <url>       the API's base URL (env ORDERED_WEBHOOKS_URL; default ${DEFAULT_URL})
  --sigv4           sign requests with AWS SigV4 (service execute-api, default credential chain);
                    implied when the URL's host ends with .amazonaws.com
  --region <name>   signing region (default: from an execute-api host name, or AWS_REGION)
  --json            machine-readable output on stdout
  -h, --help        this help`;

/** Parses `args` against `options`: unknown options, missing values and positionals are usage errors. */
export function parseOptions<const O extends ParseArgsOptionsConfig>(args: readonly string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The value of a required option. */
export function requireOption(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required.`);
  return value;
}

/** A duration option (`30m`, `90s`, `500ms`; a bare number is seconds), or its default. */
export function durationOption(name: string, value: string | undefined, defaultMs: number): number {
  if (value === undefined) return defaultMs;
  const ms = parseDurationMs(value);
  if (ms === undefined || ms <= 0) throw new UsageError(`--${name} must be a duration such as 90s, 15m or 1h30m (got "${value}").`);
  return ms;
}

/** A whole number of at least `min`. */
export function integerOption(name: string, value: string, min: number): number {
  const parsed = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min) throw new UsageError(`--${name} must be a whole number of at least ${min} (got "${value}").`);
  return parsed;
}

/** The `--interval` of a waiting command. */
export function intervalOption(value: string | undefined): number {
  return durationOption('interval', value, DEFAULT_POLL_INTERVAL_MS);
}


/**
 * What a command is and what it is given: its own arguments, the output streams, the
 * environment, a clock, and a signal that aborts when the operator presses Ctrl-C.
 */
import { createApiClient, type ApiClient, type RequestSigner } from './api/client.js';
import { createSigV4Signer, isAwsHost, regionFromHost } from './api/sigv4.js';
import { UsageError } from './errors.js';
import type { ExitCode } from './exit-codes.js';
import { DEFAULT_URL } from './options.js';
import type { OutputStream } from './output/stream.js';
import type { Clock } from './poll.js';

/** Environment variables, read once by `main.ts` and passed down. */
export type CliEnvironment = Readonly<Record<string, string | undefined>>;

export interface CommandIo {
  readonly stdout: OutputStream;
  readonly stderr: OutputStream;
  readonly environment: CliEnvironment;
  readonly clock: Clock;
  /** Aborts on Ctrl-C: waits end, and what a command paused is resumed. */
  readonly signal: AbortSignal;
}

export interface Command {
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The command's usage and its own options; the common options are added after it. */
  readonly help: string;
  /** Runs with the arguments after the command's name. */
  readonly run: (args: readonly string[], io: CommandIo) => Promise<ExitCode>;
}

/** The connection options every command takes (see `COMMON_OPTIONS`). */
export interface ConnectionOptions {
  readonly url?: string | undefined;
  readonly sigv4?: boolean | undefined;
  readonly region?: string | undefined;
}

/** Where the API is and how requests to it are signed, as the options and environment say. */
export interface Connection {
  /** The API's base URL; may carry a stage path (`https://…/prod`). */
  readonly baseUrl: URL;
  /** Absent when requests go unsigned (the local stack). */
  readonly signer?: RequestSigner;
  /** The signing region, when requests are signed. */
  readonly region?: string;
}

/**
 * The API's base URL and signer. Requests are signed when `--sigv4` is given or the host is an
 * AWS endpoint: a deployed API refuses unsigned calls anyway.
 */
export function resolveConnection(options: ConnectionOptions, io: CommandIo): Connection {
  const text = options.url ?? io.environment.ORDERED_WEBHOOKS_URL ?? DEFAULT_URL;
  let baseUrl: URL;
  try {
    baseUrl = new URL(text);
  } catch {
    throw new UsageError(`--url must be an http(s) URL (got "${text}").`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new UsageError(`--url must be an http(s) URL (got "${text}").`);
  if (options.sigv4 !== true && !isAwsHost(baseUrl.hostname)) return { baseUrl };

  const region = options.region ?? regionFromHost(baseUrl.hostname) ?? io.environment.AWS_REGION ?? io.environment.AWS_DEFAULT_REGION;
  if (region === undefined || region === '') throw new UsageError('Signing needs a region: give --region, or set AWS_REGION.');
  return { baseUrl, region, signer: createSigV4Signer({ region }) };
}

/** The API client the options and environment describe (see {@link resolveConnection}). */
export function connect(options: ConnectionOptions, io: CommandIo): ApiClient {
  const { baseUrl, signer } = resolveConnection(options, io);
  return createApiClient({ baseUrl, signal: io.signal, ...(signer === undefined ? {} : { signer }) });
}

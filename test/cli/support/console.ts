/**
 * The `console` command running in-process until the test stops it (its Ctrl-C), and requests
 * to it over node:http, whose headers (`Host`, `Origin`) a test sets as a browser on another
 * page, or a DNS-rebinding one, would send them.
 */
import { request as httpRequest } from 'node:http';
import type { ConsoleStarted } from '../../../cli/commands/console.js';
import type { CliEnvironment } from '../../../cli/command.js';
import { runCommand, type CliRun } from './run-cli.js';

export interface RunningConsole extends ConsoleStarted {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** `127.0.0.1:<port>`: the `Host` the console answers. */
  readonly host: string;
  readonly port: number;
  /** Plays Ctrl-C and resolves with how the command ended. */
  readonly stop: () => Promise<CliRun>;
}

/**
 * Starts `ordered-webhooks console --port 0 --json <args>` and resolves once it listens (its
 * first line on stdout); rejects with its output if it ends before that.
 */
export async function startConsole(args: readonly string[], environment: CliEnvironment = {}): Promise<RunningConsole> {
  const interrupt = new AbortController();
  let onLine: (line: string) => void = () => undefined;
  const firstLine = new Promise<string>((resolve) => {
    onLine = resolve;
  });
  const finished = runCommand(['console', '--port', '0', '--json', ...args], { environment, signal: interrupt.signal, onStdoutWrite: (text) => onLine(text) });
  const outcome = await Promise.race([firstLine.then((line) => ({ line })), finished.then((run) => ({ run }))]);
  if ('run' in outcome) throw new Error(`console ended before listening, exit ${outcome.run.exitCode}: ${outcome.run.stdout}${outcome.run.stderr}`);
  const started = JSON.parse(outcome.line) as ConsoleStarted;
  const url = new URL(started.url);
  return {
    ...started,
    origin: url.origin,
    host: url.host,
    port: Number(url.port),
    stop: () => {
      interrupt.abort();
      return finished;
    },
  };
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  /** Sent as they are; `host` is the console's own unless given. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Sends one request to the console with exactly the headers given. */
export function sendRaw(running: Pick<RunningConsole, 'host' | 'port'>, request: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: '127.0.0.1', port: running.port, method: request.method ?? 'GET', path: request.path, headers: { host: running.host, ...request.headers }, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

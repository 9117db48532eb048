/**
 * `console`: serves the operator console on 127.0.0.1, like `kubectl proxy`, and proxies its
 * requests to the API at `--url`, signed with SigV4 with the operator's own AWS credentials when
 * the API is a deployed one. Runs until Ctrl-C. See `cli/proxy/console-proxy.ts` for what keeps a
 * loopback server with those credentials safe from the other pages of the browser.
 */
import { CONSOLE_PATH } from '../../console/path.js';
import { resolveConnection, type Command } from '../command.js';
import { UsageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { COMMON_OPTIONS, integerOption, parseOptions } from '../options.js';
import { writeLine } from '../output/stream.js';
import { parseLoopbackHost, startConsoleProxy } from '../proxy/console-proxy.js';

/** Where the console listens unless `--host` says otherwise: loopback only. */
export const DEFAULT_CONSOLE_HOST = '127.0.0.1';
/** The console's port unless `--port` says otherwise (kubectl proxy's). */
export const DEFAULT_CONSOLE_PORT = 8001;
/** The largest TCP port. */
const MAX_PORT = 65_535;

const OPTIONS = { ...COMMON_OPTIONS, port: { type: 'string' }, host: { type: 'string' } } as const;

/** What `--json` prints once the console listens. */
export interface ConsoleStarted {
  /** The console's page. */
  readonly url: string;
  /** The API it proxies to. */
  readonly api: string;
  readonly signed: boolean;
}

/** Resolves when `signal` aborts (at once if it has). */
function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export const consoleCommand: Command = {
  name: 'console',
  summary: 'serve the operator console on 127.0.0.1, proxying (and signing) its requests to the API',
  help: `Usage: ordered-webhooks console [--port <n>] [--host <loopback address>] [--json]

Serves the operator console at http://127.0.0.1:${DEFAULT_CONSOLE_PORT}${CONSOLE_PATH}/ and passes its API requests
(/v1/..., /health, /openapi.json) on to the API at --url, like kubectl proxy: signed with SigV4
and your default AWS credentials (AWS_PROFILE, aws sso login, environment, role) when the API is
a deployed one, unsigned for the local stack. Runs until Ctrl-C, then exits 0. Open the URL it
prints in a browser; no browser is opened for you.

It listens on loopback only, answers only requests addressed to that address (a guard against
DNS rebinding), and refuses writes sent by pages of another origin: other tabs cannot use your
credentials through it. --json prints {"url", "api", "signed"} on one line once listening.

Options:
  --port <n>     the port to listen on (default ${DEFAULT_CONSOLE_PORT}; 0 for any free port)
  --host <addr>  the loopback address to listen on: 127.0.0.1 (default), another 127.x.y.z, ::1
                 or localhost; any other address is refused`,
  run: async (args, io) => {
    const values = parseOptions(args, OPTIONS);
    const host = parseLoopbackHost(values.host ?? DEFAULT_CONSOLE_HOST);
    const port = values.port === undefined ? DEFAULT_CONSOLE_PORT : integerOption('port', values.port, 0);
    if (port > MAX_PORT) throw new UsageError(`--port must be at most ${MAX_PORT} (got "${values.port}").`);
    const connection = resolveConnection(values, io);

    // Loaded here, not at the top: esbuild is the console's alone, and every other command would pay for loading it.
    const { createConsoleAssets } = await import('../../console/serve.js');
    // Requests in flight to the API are cut short when the operator stops the console.
    const stopping = new AbortController();
    const proxy = await startConsoleProxy({
      host,
      port,
      apiBaseUrl: connection.baseUrl,
      ...(connection.signer === undefined ? {} : { signer: connection.signer }),
      assets: createConsoleAssets(),
      signal: stopping.signal,
      log: (line) => writeLine(io.stderr, `console: ${line}`),
    });
    const started: ConsoleStarted = { url: `${proxy.origin}${CONSOLE_PATH}/`, api: connection.baseUrl.href, signed: connection.signer !== undefined };
    if (values.json === true) writeLine(io.stdout, JSON.stringify(started));
    else {
      const signing = connection.region === undefined ? 'unsigned' : `signed with SigV4 in ${connection.region}`;
      writeLine(io.stdout, `Console: ${started.url} (proxying ${started.api}, ${signing}). Ctrl-C stops it.`);
    }

    await aborted(io.signal);
    stopping.abort();
    await proxy.stop();
    return ExitCode.ok;
  },
};

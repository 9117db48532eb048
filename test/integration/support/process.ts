/**
 * Child processes started the way a user starts them (`npm start`, `npm run receiver`), with
 * their output collected and a guaranteed clean-up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export interface NpmProcess {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  /** Sends a signal to npm only, as `kill <pid>` would. */
  readonly signal: (signal: NodeJS.Signals) => void;
  /** Clean-up for a failed test: kills the whole process group. */
  readonly killAll: () => void;
}

/** The local stack's variables (docs/configuration.md) and the receiver's: a test sets the ones it means, never inherits them. */
const PROJECT_VARIABLES = [
  'PORT', 'MAX_DELIVERY_ATTEMPTS', 'RETRY_BASE_SECONDS', 'RETRY_MAX_SECONDS', 'DELIVERY_TIMEOUT_MS', 'PARTITION_COUNT',
  'CONSUMER_CONCURRENCY', 'ALLOW_PRIVATE_ENDPOINTS', 'DATA_DIR', 'LOG_LEVEL', 'RECEIVER_PORT', 'WEBHOOK_SECRET',
  'RECEIVER_FAIL_RATE', 'RECEIVER_STATUS', 'RECEIVER_DELAY_MS', 'ON_EXHAUSTED',
];

/** Runs `npm <args>` in the repository with `environment` over a clean copy of this process's. */
export function spawnNpm(args: readonly string[], environment: Readonly<Record<string, string>>): NpmProcess {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !PROJECT_VARIABLES.includes(name)));
  // Its own process group, so that clean-up can reach npm and the node it runs.
  const child = spawn('npm', [...args], { env: { ...inherited, ...environment }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit').then(([code, signal]) => (code as number | null) ?? String(signal));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    signal: (signal) => child.kill(signal),
    killAll: () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}

/** A TCP port that was free a moment ago. */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

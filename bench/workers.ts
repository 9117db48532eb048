/**
 * Starts bench workers and talks to them: one child process per checkout, running
 * bench/worker.ts of this working tree (the bench's own files serve every checkout) on the
 * checkout's stack.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkerResponseSchema, type RunResult, type RunSpec } from './protocol.js';

/** The working tree of the bench itself. */
export const BENCH_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A running worker: runs one spec at a time on its checkout's stack. */
export interface Worker {
  readonly root: string;
  readonly run: (spec: RunSpec) => Promise<RunResult>;
  readonly stop: () => Promise<void>;
}

/** Starts a worker on the checkout at `root`; resolves once it has loaded the checkout. */
export async function startWorker(root: string): Promise<Worker> {
  const child: ChildProcess = fork(join(BENCH_ROOT, 'bench/worker.ts'), [root], {
    cwd: BENCH_ROOT,
    execArgv: ['--import', 'tsx'],
    // The stack's log lines are counted in the worker; what escapes is the worker's own failure.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (result: RunResult) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let markReady: () => void = () => undefined;
  let markFailed: (error: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  child.on('message', (message: unknown) => {
    const response = WorkerResponseSchema.safeParse(message);
    if (!response.success) return;
    const data = response.data;
    if ('ready' in data) {
      markReady();
      return;
    }
    const waiter = pending.get(data.id);
    pending.delete(data.id);
    if ('result' in data) waiter?.resolve(data.result);
    else waiter?.reject(new Error(`worker on ${root}: ${data.error}`));
  });
  child.on('exit', (code) => {
    const error = new Error(`worker on ${root} exited with ${String(code)}`);
    markFailed(error);
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  });
  await ready;
  return {
    root,
    run: (spec) =>
      new Promise<RunResult>((resolve, reject) => {
        const id = nextId;
        nextId += 1;
        pending.set(id, { resolve, reject });
        child.send({ id, spec });
      }),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

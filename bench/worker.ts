/**
 * A bench worker: one process per checkout (the working tree, or a baseline), started by
 * bench/main.ts with the checkout's root as its argument. It installs the meter, loads the
 * checkout's stack, and runs the specs it is sent over IPC one at a time, each on a fresh stack.
 * Its stdout and stderr carry the stack's log lines, which the meter counts and swallows.
 */
import { installMeter } from './meter.js';
import { WorkerRequestSchema, type WorkerResponse } from './protocol.js';
import { loadCheckout, runSpec } from './run.js';

const root = process.argv[2];
if (root === undefined || process.send === undefined) throw new Error('usage: started by bench/main.ts with an IPC channel and the checkout root');
const reply = (response: WorkerResponse): void => {
  process.send?.(response);
};

const meter = installMeter(root);
const checkout = await loadCheckout(root);
let queue = Promise.resolve();
process.on('message', (message: unknown) => {
  const request = WorkerRequestSchema.safeParse(message);
  if (!request.success) return;
  const { id, spec } = request.data;
  queue = queue.then(async () => {
    try {
      reply({ id, result: await runSpec(checkout, meter, spec) });
    } catch (error) {
      reply({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  });
});
process.on('disconnect', () => process.exit(0));
reply({ ready: true });

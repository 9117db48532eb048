/**
 * `node --import tsx bench/cell.ts <keys> <concurrency> <latencyMs> [repeats] [--calls] [--root <dir>]`:
 * runs one throughput cell of the grid in this process, on the checkout at <dir> (this one by default), the meter installed as in a bench worker, so that
 * `node --cpu-prof` sees the local stack, the bench's receiver and its producers on their one event
 * loop. Prints each run's throughput and the process's CPU time per delivered event; with --calls,
 * the SDK calls per delivered event too.
 */
import { writeSync } from 'node:fs';
import { installMeter } from './meter.js';
import { eventsPerKey } from './plan.js';
import { TrafficShape, type RunSpec } from './protocol.js';
import { loadCheckout, runSpec } from './run.js';
import { BENCH_ROOT } from './workers.js';

const USAGE = 'usage: node --import tsx bench/cell.ts <keys> <concurrency> <latencyMs> [repeats] [--calls] [--root <dir>]';

const args = process.argv.slice(2);
const isCalls = args.includes('--calls');
const rootAt = args.indexOf('--root');
const root = rootAt === -1 ? BENCH_ROOT : args[rootAt + 1];
if (root === undefined) throw new Error(USAGE);
const numbers = args.filter((arg, index) => arg !== '--calls' && index !== rootAt && (rootAt === -1 || index !== rootAt + 1));
const [keys, concurrency, latencyMs, repeats = 1] = numbers.map(Number);
if (keys === undefined || concurrency === undefined || latencyMs === undefined || [keys, concurrency, latencyMs, repeats].some(Number.isNaN)) throw new Error(USAGE);

// The meter counts and swallows what the stack writes to stdout and stderr: this writes past it.
const say = (line: string): void => {
  writeSync(2, `${line}\n`);
};

const meter = installMeter(root);
const checkout = await loadCheckout(root);
const spec: RunSpec = {
  keys,
  concurrency,
  latencyMs,
  poisonKeys: 0,
  measureUnits: false,
  runLagJob: false,
  environment: {},
  payloadBytes: 1000,
  deadlineSeconds: 180,
  eventsPerKey: eventsPerKey(keys, latencyMs, false),
  eventsPerRequest: 100,
  shape: TrafficShape.interleaved,
};
for (let run = 0; run < repeats; run += 1) {
  const cpuBefore = process.cpuUsage();
  const result = await runSpec(checkout, meter, spec);
  const cpu = process.cpuUsage(cpuBefore);
  // Stack start and stop included: the CPU figure is an upper bound of the delivery's.
  const cpuMsPerEvent = (cpu.user + cpu.system) / 1000 / Math.max(1, result.delivered);
  say(
    `K=${keys} C=${concurrency} L=${latencyMs}: ${result.delivered}/${result.expected} in ${result.seconds.toFixed(2)} s = ${result.eventsPerSecond.toFixed(0)}/s, ` +
      `invocations ${result.usage.consumerInvocations}, order violations ${result.orderViolations}, CPU ${cpuMsPerEvent.toFixed(1)} ms/event`,
  );
  if (isCalls) for (const call of result.usage.calls) say(`  ${call.caller} ${call.service} ${call.operation} ${call.table}: ${(call.calls / Math.max(1, result.delivered)).toFixed(2)}/event`);
}
// The worker's stack is stopped; the meter's hooks keep nothing open worth waiting for.
process.exit(0);

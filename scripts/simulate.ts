/**
 * `npm run simulate`: the deep run of the simulation. `SIM_SEEDS` seeds (default 20,000) from
 * `SIM_FIRST_SEED` (default 1), split into consecutive slices run side by side, one vitest process
 * each (`SIM_PROCESSES`, default one per CPU): a simulation file runs its seeds one after another
 * in one test, so one process would use one CPU. Prints each slice's totals line as it ends, then
 * every failing seed with its violations, and exits non-zero if any seed failed or a slice did not
 * report. `SIM_SEED`, `SIM_SEED_LIST` and `SIM_SCENARIO` are for one vitest run of a file instead
 * (see test/simulation/README.md).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

interface Failure {
  readonly seed: number;
  readonly violations: readonly string[];
}

interface Slice {
  readonly first: number;
  readonly count: number;
}

/** `count` seeds from `first` in `parts` consecutive slices, the first ones one seed longer when they do not divide. */
function slicesOf(first: number, count: number, parts: number): Slice[] {
  const slices: Slice[] = [];
  let next = first;
  for (let part = 0; part < parts; part += 1) {
    const size = Math.floor(count / parts) + (part < count % parts ? 1 : 0);
    if (size > 0) slices.push({ first: next, count: size });
    next += size;
  }
  return slices;
}

function positiveInteger(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not ${JSON.stringify(text)}`);
  return value;
}

/** One slice in its own vitest process; its failures, or undefined when it wrote no report (it crashed). */
function runSlice(slice: Slice, report: string): Promise<{ readonly failures: readonly Failure[] | undefined; readonly totals: string; readonly tail: string }> {
  return new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', 'test/simulation/simulation-a.test.ts'], {
      env: { ...process.env, SIM_FIRST_SEED: String(slice.first), SIM_SEEDS: String(slice.count), SIM_REPORT: report },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', () => {
      const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
      const totals = plain.split('\n').find((line) => line.startsWith('simulation seeds')) ?? `seeds ${slice.first}–${slice.first + slice.count - 1}: no totals`;
      const failures = existsSync(report) ? (JSON.parse(readFileSync(report, 'utf8')) as Failure[]) : undefined;
      resolve({ failures, totals, tail: plain.slice(-3000) });
    });
  });
}

async function main(): Promise<number> {
  const count = positiveInteger('SIM_SEEDS', 20_000);
  const first = positiveInteger('SIM_FIRST_SEED', 1);
  const processes = positiveInteger('SIM_PROCESSES', availableParallelism());
  const directory = mkdtempSync(join(tmpdir(), 'simulate-'));
  const started = Date.now();
  try {
    const slices = slicesOf(first, count, processes);
    console.log(`simulating seeds ${first}–${first + count - 1} in ${slices.length} processes`);
    const results = await Promise.all(
      slices.map(async (slice, index) => {
        const result = await runSlice(slice, join(directory, `report-${index}.json`));
        console.log(result.totals);
        return result;
      }),
    );
    let exitCode = 0;
    for (const [index, result] of results.entries()) {
      if (result.failures === undefined) {
        const slice = slices[index];
        console.log(`seeds ${slice?.first ?? '?'}… wrote no report; the end of its output:\n${result.tail}`);
        exitCode = 1;
        continue;
      }
      for (const failure of result.failures) {
        console.log(`seed ${failure.seed}: ${failure.violations.join('; ')}`);
        exitCode = 1;
      }
    }
    const failed = results.reduce((sum, result) => sum + (result.failures?.length ?? 0), 0);
    console.log(`${count} seeds in ${Math.round((Date.now() - started) / 1000)} s: violations in ${failed} seeds${exitCode === 0 ? '' : ' (see above)'}`);
    return exitCode;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

process.exitCode = await main();

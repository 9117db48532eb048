/**
 * `npm run bench [-- --quick] [--json [file]] [--model] [--baseline <git-rev>]`: the figures of
 * docs/performance.md#todays-figures on the local stack, printed as tables and, with --json, written as JSON (to stdout
 * when no file is given, the tables then going to stderr).
 *
 * With --baseline, the same bench runs against a checkout of <git-rev> (exported to a temporary
 * directory, with node_modules linked when its lock file is this one's, or installed offline from
 * the npm cache otherwise), in its own worker process, alternating with the working tree cell by
 * cell so that the machine's noise falls on both alike.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundleSizes } from './bundles.js';
import { fanOutSpecs, gridCells, hotKeySpecs, isolationSpecs, retentionOffSpecs, usageSpecs } from './plan.js';
import type { RunResult, RunSpec } from './protocol.js';
import { deriveFigures, mergeRuns, modelOf, renderReport, type BenchReport, type GridRow, type Variant } from './report.js';
import { BENCH_ROOT, startWorker, type Worker } from './workers.js';

/** The bench's command line. */
export interface BenchOptions {
  readonly isQuick: boolean;
  readonly isModel: boolean;
  /** `-` for stdout. */
  readonly json: string | undefined;
  readonly baseline: string | undefined;
}

/** Runs of each throughput cell per checkout in the full bench: short cells on a shared machine are noisy. */
const FULL_REPEATS = 2;

const USAGE = 'usage: npm run bench -- [--quick] [--model] [--json [file]] [--baseline <git-rev>]';

/** Parses the arguments after `npm run bench --`. */
export function parseBenchArgs(args: readonly string[]): BenchOptions {
  let isQuick = false;
  let isModel = false;
  let json: string | undefined;
  let baseline: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--quick') isQuick = true;
    else if (arg === '--model') isModel = true;
    else if (arg === '--json') {
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        json = next;
        i += 1;
      } else json = '-';
    } else if (arg === '--baseline') {
      const next = args[i + 1];
      if (next === undefined || next.startsWith('--')) throw new Error(`--baseline needs a git revision\n${USAGE}`);
      baseline = next;
      i += 1;
    } else throw new Error(`unknown argument ${String(arg)}\n${USAGE}`);
  }
  return { isQuick, isModel, json, baseline };
}

/**
 * Exports `rev` to a temporary directory and gives it node_modules: this working tree's when the
 * lock files are equal, an offline `npm ci` from the npm cache otherwise.
 */
function checkoutBaseline(rev: string, say: (line: string) => void): { root: string; commit: string; remove: () => void } {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: BENCH_ROOT, encoding: 'utf8' }).trim();
  const root = mkdtempSync(join(tmpdir(), 'ordered-webhooks-baseline-'));
  const remove = (): void => rmSync(root, { recursive: true, force: true });
  try {
    const archive = spawnSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${root}"`], { cwd: BENCH_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr.toString()}`);
    const sameLock = readFileSync(join(root, 'package-lock.json'), 'utf8') === readFileSync(join(BENCH_ROOT, 'package-lock.json'), 'utf8');
    if (sameLock) {
      symlinkSync(join(BENCH_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
    } else {
      say(`baseline ${commit.slice(0, 12)}: its package-lock.json differs; npm ci --offline --ignore-scripts`);
      const install = spawnSync('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
      if (install.status !== 0) throw new Error(`npm ci --offline in the baseline failed: ${install.stderr.toString().slice(-2000)}`);
    }
    return { root, commit, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** A run that could not be carried out: zero figures and the reason, so that the rest of the bench goes on. */
export function failedRun(spec: RunSpec, error: unknown): RunResult {
  const message = error instanceof Error ? error.message : String(error);
  return {
    seconds: 0,
    delivered: 0,
    expected: spec.keys * spec.eventsPerKey,
    eventsPerSecond: 0,
    orderViolations: 0,
    duplicates: 0,
    refused: 0,
    timedOut: false,
    usage: { keys: spec.keys + spec.poisonKeys, events: 0, httpRequests: 0, consumerInvocations: 0, meanLongestGroupRun: 0, calls: [], hotItems: [], logBytes: {}, logLines: {} },
    warnings: [`run failed: ${message.split('\n')[0] ?? ''}`],
    error: message,
  };
}

/** Runs `spec` on every worker, in the order given; a run that fails is reported, not fatal. */
async function runOnEach(workers: readonly { readonly variant: Variant; readonly worker: Worker }[], spec: RunSpec, reverse: boolean): Promise<Record<string, RunResult>> {
  const results: Record<string, RunResult> = {};
  for (const { variant, worker } of reverse ? [...workers].reverse() : workers) {
    results[variant.id] = await worker.run(spec).catch((error: unknown) => failedRun(spec, error));
  }
  return results;
}

/**
 * Runs `spec` `repeats` times on every worker, the order flipping each time (A B, B A, …), and
 * merges each worker's runs.
 */
async function repeatOnEach(
  workers: readonly { readonly variant: Variant; readonly worker: Worker }[],
  spec: RunSpec,
  repeats: number,
  alternate: () => boolean,
): Promise<Record<string, RunResult>> {
  const runs: Record<string, RunResult[]> = {};
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    for (const [id, result] of Object.entries(await runOnEach(workers, spec, alternate()))) (runs[id] ??= []).push(result);
  }
  return Object.fromEntries(Object.entries(runs).map(([id, results]) => [id, mergeRuns(results)]));
}

/** Runs the whole bench and returns its report. */
export async function runBench(options: BenchOptions, say: (line: string) => void): Promise<BenchReport> {
  const startedAt = new Date();
  const began = performance.now();
  const baseline = options.baseline === undefined ? undefined : checkoutBaseline(options.baseline, say);
  const currentCommit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: BENCH_ROOT, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: BENCH_ROOT, encoding: 'utf8' }).trim() !== '';
  const checkouts: { variant: Variant; root: string }[] = [
    ...(baseline === undefined ? [] : [{ variant: { id: 'baseline', label: `baseline ${baseline.commit.slice(0, 12)}` }, root: baseline.root }]),
    { variant: { id: 'current', label: `working tree ${currentCommit}${dirty ? '+' : ''}` }, root: BENCH_ROOT },
  ];
  const workers: { variant: Variant; worker: Worker }[] = [];
  try {
    for (const checkout of checkouts) workers.push({ variant: checkout.variant, worker: await startWorker(checkout.root) });
    const repeats = options.isQuick ? 1 : FULL_REPEATS;
    let step = 0;
    const alternate = (): boolean => {
      step += 1;
      return step % 2 === 0;
    };

    const cells = gridCells(options.isQuick);
    const grid: GridRow[] = [];
    for (const cell of cells) {
      say(`grid K=${cell.keys} C=${cell.concurrency} L=${cell.latencyMs} ms (${cell.keys * cell.spec.eventsPerKey} events)`);
      const results = await repeatOnEach(workers, cell.spec, repeats, alternate);
      grid.push({ keys: cell.keys, concurrency: cell.concurrency, latencyMs: cell.latencyMs, events: cell.keys * cell.spec.eventsPerKey, results });
    }

    say('isolation');
    const isolationPair = isolationSpecs(options.isQuick);
    const alone = await repeatOnEach(workers, isolationPair.alone, repeats, alternate);
    const withPoison = await repeatOnEach(workers, isolationPair.withPoison, repeats, alternate);

    say('usage: busy keys, sparse keys (units measured: slower)');
    const usage = usageSpecs(options.isQuick);
    const busy = await runOnEach(workers, usage.busy, alternate());
    const sparse = await runOnEach(workers, usage.sparse, alternate());

    say('a hot key, batch_size 1 and 10 (working tree only)');
    const current = workers.find(({ variant }) => variant.id === 'current');
    const hotKeyPair = hotKeySpecs(options.isQuick);
    const hotKey =
      current === undefined
        ? undefined
        : {
            single: await current.worker.run(hotKeyPair.single).catch((error: unknown) => failedRun(hotKeyPair.single, error)),
            batched: await current.worker.run(hotKeyPair.batched).catch((error: unknown) => failedRun(hotKeyPair.batched, error)),
          };

    say('usage again with no event kept for replays (working tree only)');
    const offPair = retentionOffSpecs(options.isQuick);
    const retentionOff =
      current === undefined
        ? undefined
        : {
            busy: await current.worker.run(offPair.busy).catch((error: unknown) => failedRun(offPair.busy, error)),
            sparse: await current.worker.run(offPair.sparse).catch((error: unknown) => failedRun(offPair.sparse, error)),
          };

    say('fan-out: 10 subscriptions of one tenant, beside the same deliveries named one by one (working tree only)');
    const fanOutPair = fanOutSpecs(options.isQuick);
    const fanOut =
      current === undefined
        ? undefined
        : {
            named: await current.worker.run(fanOutPair.named).catch((error: unknown) => failedRun(fanOutPair.named, error)),
            fanOut: await current.worker.run(fanOutPair.fanOut).catch((error: unknown) => failedRun(fanOutPair.fanOut, error)),
          };

    say('bundles');
    const bundles: Record<string, Awaited<ReturnType<typeof bundleSizes>>> = {};
    for (const checkout of checkouts) bundles[checkout.variant.id] = await bundleSizes(checkout.root);

    const isolation: Record<string, { alone: RunResult; withPoison: RunResult }> = {};
    for (const { variant } of checkouts) {
      const figures = { alone: alone[variant.id], withPoison: withPoison[variant.id] };
      if (figures.alone !== undefined && figures.withPoison !== undefined) isolation[variant.id] = { alone: figures.alone, withPoison: figures.withPoison };
    }
    // Each checkout's own lag shards: a baseline's index writes spread over its shards, not ours.
    const indexPartitions: Record<string, number> = {};
    for (const { variant, root } of checkouts) {
      const lag = (await import(pathToFileURL(join(root, 'lambda/core/lag.ts')).href)) as { LAG_SHARDS?: number };
      indexPartitions[variant.id] = lag.LAG_SHARDS ?? 1;
    }
    const report: BenchReport = {
      startedAt: startedAt.toISOString(),
      seconds: (performance.now() - began) / 1000,
      machine: { cpus: cpus().length, node: process.version, loadAverage: loadavg() },
      variants: checkouts.map((checkout) => checkout.variant),
      grid,
      isolation,
      usage: { busy, sparse },
      bundles,
      indexPartitions,
      repeats,
      ...(hotKey === undefined ? {} : { hotKey }),
      ...(retentionOff === undefined ? {} : { retentionOff }),
      ...(fanOut === undefined ? {} : { fanOut }),
    };
    return options.isModel ? { ...report, model: modelOf(report) } : report;
  } finally {
    for (const { worker } of workers) await worker.stop();
    baseline?.remove();
  }
}

/** The command. */
async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  const toStdout = options.json === '-';
  // With JSON on stdout, people's tables and progress go to stderr.
  const print = (text: string): void => {
    (toStdout ? process.stderr : process.stdout).write(`${text}\n`);
  };
  const report = await runBench(options, (line) => process.stderr.write(`bench: ${line}\n`));
  print(renderReport(report));
  if (options.json !== undefined) {
    const json = JSON.stringify({ ...report, derived: deriveFigures(report) }, null, 2);
    if (toStdout) process.stdout.write(`${json}\n`);
    else {
      writeFileSync(options.json, `${json}\n`);
      print(`\nJSON written to ${options.json}`);
    }
  }
  if (deriveFigures(report).orderViolations > 0) process.exitCode = 1;
}

// Run only as the command, not when a test imports the module.
if (process.argv[1] !== undefined && existsSync(process.argv[1]) && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}


/**
 * `npm run mutate`: the planted bugs (test/mutation/planted-bugs.ts) as a standing check. Copies
 * the working tree (tracked and untracked files, not ignored ones) to a temporary directory with
 * node_modules linked, checks that the catchers' seeds pass there as it is, then applies each
 * planted bug in turn, runs the simulation on its seeds or scenario (one vitest run each, one
 * after another), and restores the file. Prints, per bug, the check that caught it (its first
 * violation) or SURVIVED; exits non-zero when one survived, a patch no longer applies, or the
 * unchanged code fails. `MUTATE_ONLY=<name>,<name>` runs some of them; `MUTATE_SEARCH=<count>` runs
 * them on random seeds 1 to count instead, to find catchers for a new one (no baseline: the
 * simulation's own seeds pass).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { applyPatch, PLANTED_BUGS, type Catchers, type PlantedBug } from '../test/mutation/planted-bugs.js';

const root = process.cwd();
const only = process.env.MUTATE_ONLY?.split(',');
const search = process.env.MUTATE_SEARCH === undefined ? undefined : Number(process.env.MUTATE_SEARCH);
const bugs = (only === undefined ? PLANTED_BUGS : PLANTED_BUGS.filter((bug) => only.includes(bug.name))).map(
  (bug): PlantedBug => (search === undefined ? bug : { ...bug, catchers: { seeds: Array.from({ length: search }, (_, index) => index + 1) } }),
);

interface RunOutcome {
  readonly failures: readonly { readonly seed: number; readonly violations: readonly string[] }[];
  /** Set when vitest failed without a report (a compile error, a crash): the output's tail. */
  readonly error?: string;
  readonly seconds: number;
}

/** One vitest run of the simulation in `copy` on the catchers' seeds (with their scenario, if any). */
function simulate(copy: string, catchers: Catchers): RunOutcome {
  const report = join(copy, '.mutate-report.json');
  rmSync(report, { force: true });
  const started = Date.now();
  const result = spawnSync('npx', ['vitest', 'run', 'test/simulation/simulation-a.test.ts'], {
    cwd: copy,
    encoding: 'utf8',
    env: {
      ...process.env,
      SIM_SEED_LIST: catchers.seeds.join(','),
      SIM_REPORT: report,
      ...('scenario' in catchers ? { SIM_SCENARIO: catchers.scenario } : {}),
    },
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (!existsSync(report)) return { failures: [], error: `${result.stdout}${result.stderr}`.slice(-3000), seconds };
  return { failures: JSON.parse(readFileSync(report, 'utf8')) as RunOutcome['failures'], seconds };
}

function catchersOf(bug: PlantedBug): string {
  return `${'scenario' in bug.catchers ? `scenario ${bug.catchers.scenario}, ` : ''}seeds ${bug.catchers.seeds.join(', ')}`;
}

/** The whole run in `copy`; the exit code. */
function mutate(copy: string): number {
  // Every file git would see, as it is now (uncommitted changes included), and the installed modules.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\0').filter((file) => file !== '' && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(root, file), join(copy, file));
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');

  let isFailed = false;
  // Each bug's patches, checked before anything runs: a patch that no longer applies is a red run.
  for (const bug of bugs) {
    for (const patch of bug.patches) {
      try {
        applyPatch(readFileSync(join(copy, patch.file), 'utf8'), patch);
      } catch (error) {
        console.log(`${bug.name}: PATCH FAILS: ${(error as Error).message}`);
        isFailed = true;
      }
    }
  }
  if (isFailed) return 1;

  // Without a bug, the same plans pass: otherwise "caught" would mean nothing.
  // One run per scenario (random plans are one), on every seed any bug names with it.
  const baselines = new Map<string, Catchers>();
  for (const { catchers } of search === undefined ? bugs : []) {
    const scenario = 'scenario' in catchers ? catchers.scenario : '';
    const seeds = [...new Set([...(baselines.get(scenario)?.seeds ?? []), ...catchers.seeds])].sort((a, b) => a - b);
    baselines.set(scenario, scenario === '' ? { seeds } : { scenario, seeds });
  }
  for (const catchers of baselines.values()) {
    const baseline = simulate(copy, catchers);
    const what = `${'scenario' in catchers ? `scenario ${catchers.scenario}, ` : ''}seeds ${catchers.seeds.join(', ')}`;
    if (baseline.error !== undefined || baseline.failures.length > 0) {
      console.log(`the code as it is fails ${what}: ${baseline.error ?? JSON.stringify(baseline.failures)}`);
      return 1;
    }
    console.log(`the code as it is passes ${what} (${baseline.seconds} s)`);
  }

  const survivors: string[] = [];
  for (const bug of bugs) {
    const originals = new Map<string, string>();
    for (const patch of bug.patches) {
      const path = join(copy, patch.file);
      const source = readFileSync(path, 'utf8');
      if (!originals.has(path)) originals.set(path, source);
      writeFileSync(path, applyPatch(source, patch));
    }
    try {
      const outcome = simulate(copy, bug.catchers);
      const caught = outcome.failures.map((failure) => `seed ${failure.seed}: ${failure.violations[0] ?? '?'}`);
      if (outcome.error !== undefined) {
        survivors.push(bug.name);
        console.log(`${bug.name} (${bug.bug}): the simulation did not run (${outcome.seconds} s):\n${outcome.error}`);
      } else if (caught.length === 0) {
        survivors.push(bug.name);
        console.log(`${bug.name} (${bug.bug}): SURVIVED ${catchersOf(bug)} (${outcome.seconds} s)`);
      } else {
        console.log(`${bug.name} (${bug.bug}): caught by ${caught.length} of ${bug.catchers.seeds.length} (${outcome.seconds} s)\n  ${caught.join('\n  ')}`);
      }
    } finally {
      for (const [path, source] of originals) writeFileSync(path, source);
    }
  }
  console.log(survivors.length === 0 ? `every planted bug caught (${bugs.length})` : `${survivors.length} of ${bugs.length} planted bugs survived: ${survivors.join(', ')}`);
  return survivors.length === 0 ? 0 : 1;
}

const copy = mkdtempSync(join(tmpdir(), 'mutate-'));
try {
  process.exitCode = mutate(copy);
} finally {
  rmSync(copy, { recursive: true, force: true });
}

/**
 * Runs a range of seeds as one test. A failing seed is printed with its violations;
 * `SIM_SEED=<n> npx vitest run test/simulation/simulation-a.test.ts` replays it exactly, and
 * `SIM_SEEDS=<count>` (with `SIM_FIRST_SEED`) runs more (`npm run simulate` runs 20,000, in slices side by side).
 * `SIM_SEED_LIST=<n>,<m>` runs those seeds, `SIM_SCENARIO=<name>` a scenario's plan instead of the
 * random one, and `SIM_REPORT=<file>` writes the failures there as JSON (for `npm run mutate`).
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SYNTHESIS_TIMEOUT_MS } from '../infra/synthesize.js';
import { readDeployedGrants, type DeployedGrants } from './deployed-grants.js';
import { planOf, runSimulation, SCENARIOS, type SimulationPlan, type SimulationResult } from './harness.js';
import { SeededRandom } from './random.js';

/**
 * Registers, in the calling `describe`, what every simulation test needs: the deployed grants
 * (one synth) and `Date` following the simulated clock. Returns the run function to use.
 */
export function useSimulation(): (plan: SimulationPlan) => Promise<SimulationResult> {
  let grants: DeployedGrants | undefined;
  beforeAll(() => {
    grants = readDeployedGrants();
    vi.useFakeTimers({ toFake: ['Date'] });
  }, SYNTHESIS_TIMEOUT_MS);
  afterAll(() => {
    vi.useRealTimers();
  });
  return (plan) => {
    if (grants === undefined) throw new Error('useSimulation() must be called inside a describe');
    return runSimulation(plan, grants, (ms) => vi.setSystemTime(ms));
  };
}

export function describeSeeds(defaultFirst: number, defaultCount: number): void {
  const replay = process.env.SIM_SEED;
  const first = Number(replay ?? process.env.SIM_FIRST_SEED ?? defaultFirst);
  const count = replay === undefined ? Number(process.env.SIM_SEEDS ?? defaultCount) : 1;
  const seeds = process.env.SIM_SEED_LIST?.split(',').map(Number) ?? Array.from({ length: count }, (_, index) => first + index);
  const scenario = process.env.SIM_SCENARIO;
  if (scenario !== undefined && !(scenario in SCENARIOS)) throw new Error(`SIM_SCENARIO: no scenario ${scenario} (${Object.keys(SCENARIOS).join(', ')})`);
  const planFor = (seed: number): SimulationPlan => (scenario === undefined ? planOf(seed, new SeededRandom(seed)) : SCENARIOS[scenario as keyof typeof SCENARIOS](seed));
  const range = process.env.SIM_SEED_LIST === undefined ? `${first} to ${first + count - 1}` : seeds.join(', ');

  describe('simulation', () => {
    const run = useSimulation();

    it(`keeps every history in order, complete and explained, ${scenario === undefined ? '' : `scenario ${scenario}, `}seeds ${range}`, { timeout: 3_600_000 }, async () => {
      const failures: SimulationResult[] = [];
      const totals = { events: 0, faults: 0, crashes: 0, deliveries: 0, steps: 0, simulatedHours: 0, autoPauses: 0, replays: 0, parked: 0, expiredItems: 0, expiredMessages: 0 };
      for (const seed of seeds) {
        const result = await run(planFor(seed));
        totals.events += result.events;
        totals.faults += result.faultsInjected;
        totals.crashes += result.crashes;
        totals.deliveries += result.deliveries;
        totals.steps += result.steps;
        totals.autoPauses += result.autoPauses;
        totals.replays += result.replays;
        totals.parked += result.parked;
        totals.expiredItems += result.expired.items;
        totals.expiredMessages += result.expired.messages;
        totals.simulatedHours += result.simulatedMs / 3_600_000;
        if (result.violations.length > 0) failures.push(result);
      }
      console.log(
        `simulation ${scenario === undefined ? '' : `scenario ${scenario} `}seeds ${process.env.SIM_SEED_LIST === undefined ? `${first}–${first + count - 1}` : range}: ${totals.events} events, ${totals.faults} faults and ${totals.crashes} crashes injected, ` +
          `${totals.deliveries} deliveries, ${totals.autoPauses} automatic pauses, ${totals.replays} replays, ${totals.parked} events parked, ${totals.expiredItems} items expired by TTL, ${totals.expiredMessages} messages past retention, ${Math.round(totals.simulatedHours)} simulated hours, ${totals.steps} steps; violations in ${failures.length} seeds`,
      );
      if (process.env.SIM_REPORT !== undefined) writeFileSync(process.env.SIM_REPORT, JSON.stringify(failures.map(({ seed, violations }) => ({ seed, violations }))));
      expect(failures.map((failure) => `seed ${failure.seed}: ${failure.violations.join('; ')}`)).toEqual([]);
    });
  });
}

/**
 * The simulation in `npm test`: seeded runs of the whole pipeline on modelled AWS with faults at
 * every call, each history checked. A failing seed is printed; `SIM_SEED=<n> npx vitest run
 * test/simulation/simulation.test.ts` replays it exactly.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readDeployedGrants, type DeployedGrants } from './deployed-grants.js';
import { planOf, runSimulation, type SimulationResult } from './harness.js';
import { SeededRandom } from './random.js';

const FIRST_SEED = Number(process.env.SIM_SEED ?? 1);
const SEEDS = process.env.SIM_SEED === undefined ? Number(process.env.SIM_SEEDS ?? 50) : 1;

describe('simulation', () => {
  let grants: DeployedGrants;
  beforeAll(() => {
    grants = readDeployedGrants();
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  it(`keeps every history in order, complete and explained over ${SEEDS} seeds from ${FIRST_SEED}`, { timeout: 600_000 }, async () => {
    const failures: SimulationResult[] = [];
    const totals = { events: 0, faults: 0, crashes: 0, deliveries: 0, steps: 0 };
    for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS; seed += 1) {
      const result = await runSimulation(planOf(seed, new SeededRandom(seed)), grants, (ms) => vi.setSystemTime(ms));
      totals.events += result.events;
      totals.faults += result.faultsInjected;
      totals.crashes += result.crashes;
      totals.deliveries += result.deliveries;
      totals.steps += result.steps;
      if (result.violations.length > 0) failures.push(result);
    }
    console.log(`simulation: ${SEEDS} seeds, ${totals.events} events, ${totals.faults} faults and ${totals.crashes} crashes injected, ${totals.deliveries} deliveries, ${totals.steps} steps; ${failures.length} seeds with violations`);
    expect(failures.map((failure) => `seed ${failure.seed}: ${failure.violations.join('; ')}`)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { costPerMillion } from '../../../bench/cost.js';
import { scaleModel } from '../../../bench/model.js';
import type { RunResult } from '../../../bench/protocol.js';
import { modelOf } from '../../../bench/report.js';
import { SPARSE_USAGE } from './fixture.js';

const assumptions = { receiverMs: 100, functionMemoryMb: 256, awsCallMs: 6 };

describe('scaleModel', () => {
  const model = scaleModel(SPARSE_USAGE, undefined, 16, assumptions);
  const row = (demand: string) => model.rows.find((entry) => entry.demand === demand);

  it.each<[string, number, number, number]>([
    ['HTTP API requests/s (account)', 1_000, 5_000, 10_000],
    ['SendMessageBatch/s (one queue, high throughput)', 1_000, 5_000, 70_000],
    ['ReceiveMessage/s (one queue, high throughput)', 1_000, 5_000, 70_000],
    // 0.1 invocations per event × 112 ms.
    ['consumer concurrency (maximumConcurrency)', 112, 560, 1_000],
    // Plus ingest: 0.1 requests per event × 71 ms.
    ['concurrent executions, all functions (account)', 183, 915, 1_000],
    ['Groups write units/s (table)', 20_000, 100_000, 40_000],
    ['Events write units/s (table)', 20_000, 100_000, 40_000],
    ['Events read units/s (table)', 10_000, 50_000, 40_000],
    ['Groups index writes/s, one index partition of 16', 625, 3_125, 1_000],
    ['Settings reads/s on the busiest partition (shared item)', 1_000, 5_000, 3_000],
  ])('multiplies the counted calls out to %s', (demand, steady, peak, quota) => {
    const found = row(demand);
    expect(found?.steady).toBeCloseTo(steady, 6);
    expect(found?.peak).toBeCloseTo(peak, 6);
    expect(found?.quota).toBe(quota);
    expect(found?.source).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
  });

  it('leaves out idle polling and items of one key, which no quota notices', () => {
    expect(model.rows.some((entry) => entry.demand.includes('(empty)'))).toBe(false);
    expect(model.rows.some((entry) => entry.demand.startsWith('Events writes/s on the busiest partition'))).toBe(false);
  });

  it('names the quota with the highest peak utilisation as the one that binds first', () => {
    expect(model.bindsFirst?.demand).toBe('Groups index writes/s, one index partition of 16');
    expect(model.bindsFirst?.peakUtilisation).toBeCloseTo(3.125, 9);
  });

  it('prices the month at the steady rate plus the fixed costs', () => {
    expect(model.monthlyUsd.total).toBeCloseTo(model.monthlyUsd.perEvent + model.monthlyUsd.fixed, 6);
    // 10,000 events/s for 30 days: 25,920 million events.
    expect(model.monthlyUsd.perEvent).toBeCloseTo(costPerMillion(SPARSE_USAGE, assumptions).totalUsdPerMillion * 25_920, 6);
  });
});

describe('modelOf', () => {
  it('spreads each variant\'s index writes over its own lag shards when a baseline has fewer', () => {
    const result: RunResult = { seconds: 1, delivered: 100, expected: 100, eventsPerSecond: 100, orderViolations: 0, duplicates: 0, refused: 0, timedOut: false, usage: SPARSE_USAGE, warnings: [] };
    const models = modelOf({
      startedAt: new Date(0).toISOString(),
      seconds: 1,
      machine: { cpus: 2, node: process.version, loadAverage: [0, 0, 0] },
      variants: [
        { id: 'baseline', label: 'baseline' },
        { id: 'current', label: 'working tree' },
      ],
      grid: [],
      isolation: {},
      usage: { busy: {}, sparse: { baseline: result, current: result } },
      bundles: {},
      indexPartitions: { baseline: 16, current: 256 },
      repeats: 1,
    });
    const indexRow = (id: string) => models[id]?.rows.find((row) => row.demand.startsWith('Groups index writes/s'));
    expect(indexRow('baseline')).toMatchObject({ demand: 'Groups index writes/s, one index partition of 16', peak: 3_125 });
    expect(indexRow('current')).toMatchObject({ demand: 'Groups index writes/s, one index partition of 256' });
    expect(indexRow('current')?.peak).toBeCloseTo(50_000 / 256, 9);
  });
});

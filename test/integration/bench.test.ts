/**
 * The bench's real path on a tiny cell: a worker process on this working tree's local stack,
 * counted by the meter, checked by the bench's receiver, and the report's JSON built from it.
 * Figures are never asserted against time: only their shape and the order check.
 */
import { describe, expect, it } from 'vitest';
import { TrafficShape, type RunSpec } from '../../bench/protocol.js';
import { deriveFigures, modelOf, renderReport, type BenchReport } from '../../bench/report.js';
import { BENCH_ROOT, startWorker } from '../../bench/workers.js';

const TINY: RunSpec = {
  keys: 2,
  poisonKeys: 0,
  concurrency: 2,
  latencyMs: 0,
  eventsPerKey: 10,
  eventsPerRequest: 10,
  shape: TrafficShape.perKey,
  measureUnits: true,
  runLagJob: true,
  environment: {},
  payloadBytes: 1000,
  deadlineSeconds: 45,
};

describe('bench worker', { timeout: 60_000 }, () => {
  it('delivers a tiny cell in order and reports the calls of ingest, the poller, the consumer and the lag job', async () => {
    const worker = await startWorker(BENCH_ROOT);
    try {
      const result = await worker.run(TINY);
      expect(result).toMatchObject({ delivered: 20, expected: 20, orderViolations: 0, timedOut: false });
      const calls = result.usage.calls;
      const has = (caller: string, service: string, operation: string): boolean =>
        calls.some((call) => call.caller === caller && call.service === service && call.operation === operation && call.calls > 0);
      expect(has('ingest', 'SQS', 'SendMessageBatch')).toBe(true);
      expect(has('poller', 'SQS', 'ReceiveMessage')).toBe(true);
      expect(has('poller', 'SQS', 'DeleteMessageBatch')).toBe(true);
      expect(calls.some((call) => call.caller === 'consumer' && call.service === 'DynamoDB' && call.writeUnits > 0)).toBe(true);
      expect(calls.some((call) => call.caller === 'ingest' && call.service === 'DynamoDB' && call.writeUnits > 0)).toBe(true);
      expect(result.usage.httpRequests).toBe(2);
      expect(result.usage.consumerInvocations).toBeGreaterThan(0);
      expect(result.usage.lagJob?.calls.some((call) => call.operation === 'Query' && call.readUnits > 0)).toBe(true);
      expect(result.usage.logLines.consumer).toBeGreaterThan(0);

      const report: BenchReport = {
        startedAt: new Date(0).toISOString(),
        seconds: 1,
        machine: { cpus: 2, node: process.version, loadAverage: [0, 0, 0] },
        variants: [{ id: 'current', label: 'working tree' }],
        grid: [{ keys: 2, concurrency: 2, latencyMs: 0, events: 20, results: { current: result } }],
        isolation: { current: { alone: result, withPoison: result } },
        usage: { busy: { current: result }, sparse: { current: result } },
        bundles: { current: { ingest: { bytes: 1024, gzipBytes: 512 } } },
        indexPartitions: { current: 16 },
        repeats: 1,
      };
      const json: unknown = JSON.parse(JSON.stringify({ ...report, model: modelOf(report), derived: deriveFigures(report) }));
      expect(json).toMatchObject({
        variants: [{ id: 'current' }],
        grid: [{ keys: 2, results: { current: { orderViolations: 0 } } }],
        derived: {
          orderViolations: 0,
          isolationRatio: { current: 1 },
          cost: { current: { busy: { eventBridgeUsdPerMillion: 1.2 }, sparse: { lines: expect.any(Array) }, fixedMonthly: expect.any(Array) } },
        },
        model: { current: { rows: expect.any(Array), monthlyUsd: { total: expect.any(Number) } } },
      });
      expect(renderReport(report)).toContain('## Cost per million events');
    } finally {
      await worker.stop();
    }
  });

  it('delivers a batching subscription’s events in order, and reports the hot key side by side', async () => {
    const worker = await startWorker(BENCH_ROOT);
    try {
      const single = await worker.run(TINY);
      const batched = await worker.run({ ...TINY, batchSize: 10 });
      expect(batched).toMatchObject({ delivered: 20, expected: 20, orderViolations: 0, timedOut: false });
      const report: BenchReport = {
        startedAt: new Date(0).toISOString(),
        seconds: 1,
        machine: { cpus: 2, node: process.version, loadAverage: [0, 0, 0] },
        variants: [{ id: 'current', label: 'working tree' }],
        grid: [],
        isolation: {},
        usage: { busy: { current: single }, sparse: { current: single } },
        bundles: {},
        indexPartitions: { current: 16 },
        repeats: 1,
        hotKey: { single, batched },
      };
      const derived = deriveFigures(report);
      expect(derived.hotKey?.eventsPerSecond).toEqual({ single: single.eventsPerSecond, batched: batched.eventsPerSecond });
      expect(derived.hotKey?.unitsPerEvent.batched.write).toBeGreaterThan(0);
      expect(renderReport(report)).toContain('## A hot key (ordered batches)');
    } finally {
      await worker.stop();
    }
  });
});

/**
 * What `npm run bench` runs: the throughput grid of the cost and speed goals, the isolation pair and the two usage
 * scenarios, each as a {@link RunSpec}, sized so that the full bench stays within about ten
 * minutes on a laptop and `--quick` within two, before and after alike.
 */
import { TrafficShape, type RunSpec } from './protocol.js';

/** The grid's axes: keys, consumer concurrency (CONSUMER_CONCURRENCY), receiver latency. */
export interface GridAxes {
  readonly keys: readonly number[];
  readonly concurrency: readonly number[];
  readonly latencyMs: readonly number[];
}

/** The cost and speed goals' grid (docs/performance.md#todays-figures): K ∈ {1, 4, 16, 64}, C ∈ {4, 16}, L ∈ {0, 20 ms}. */
export const FULL_GRID: GridAxes = { keys: [1, 4, 16, 64], concurrency: [4, 16], latencyMs: [0, 20] };
/** A fast look: one key and many, one concurrency, the 20 ms receiver. */
export const QUICK_GRID: GridAxes = { keys: [1, 16], concurrency: [4], latencyMs: [20] };

/** The cost and speed goals' payload: 1 KB. */
export const PAYLOAD_BYTES = 1000;
/** The contract's largest request (docs/api.md#events), as in the goals' measurements. */
const GRID_EVENTS_PER_REQUEST = 100;

/**
 * Events per key of a grid cell: about the same total per cell, at least a few per key; with a
 * receiver's latency, at least 20 per key in the full grid, so that a cell of many keys runs for
 * seconds, long enough for its steady state (a cell of 64 keys and 4 each lasted half a second,
 * mostly the pollers' ramp-up, and hid what a larger concurrency gives).
 */
export function eventsPerKey(keys: number, latencyMs: number, isQuick: boolean): number {
  const total = latencyMs > 0 ? (isQuick ? 100 : Math.max(240, 20 * keys)) : isQuick ? 150 : 400;
  return Math.max(4, Math.ceil(total / keys));
}

/** The ideal throughput of a cell, events/s: min(K, C) keys each delivering one event per L; none for L = 0. */
export function idealEventsPerSecond(keys: number, concurrency: number, latencyMs: number): number | undefined {
  return latencyMs > 0 ? (Math.min(keys, concurrency) * 1000) / latencyMs : undefined;
}

const base = {
  poisonKeys: 0,
  measureUnits: false,
  runLagJob: false,
  environment: {},
  payloadBytes: PAYLOAD_BYTES,
  deadlineSeconds: 180,
} as const;

/** One cell of the grid and the run that measures it. */
export interface GridCell {
  readonly keys: number;
  readonly concurrency: number;
  readonly latencyMs: number;
  readonly spec: RunSpec;
}

/** The cells of the full grid, or of the quick one; latency outermost, so that like cells run together. */
export function gridCells(isQuick: boolean): GridCell[] {
  const axes = isQuick ? QUICK_GRID : FULL_GRID;
  return axes.latencyMs.flatMap((latencyMs) =>
    axes.keys.flatMap((keys) =>
      axes.concurrency.map((concurrency) => ({
        keys,
        concurrency,
        latencyMs,
        spec: {
          ...base,
          keys,
          concurrency,
          latencyMs,
          eventsPerKey: eventsPerKey(keys, latencyMs, isQuick),
          eventsPerRequest: GRID_EVENTS_PER_REQUEST,
          shape: TrafficShape.interleaved,
        },
      })),
    ),
  );
}

/**
 * Isolation: 16 healthy keys alone, then with one poison key (its receiver always answers 500),
 * with the product's retry settings (MAX_DELIVERY_ATTEMPTS 5) and its delays shortened to 1 s.
 */
export function isolationSpecs(isQuick: boolean): { readonly alone: RunSpec; readonly withPoison: RunSpec } {
  const alone: RunSpec = {
    ...base,
    keys: 16,
    concurrency: 4,
    latencyMs: 20,
    eventsPerKey: isQuick ? 10 : 30,
    eventsPerRequest: GRID_EVENTS_PER_REQUEST,
    shape: TrafficShape.interleaved,
    environment: { RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
  };
  return { alone, withPoison: { ...alone, poisonKeys: 1 } };
}

/**
 * The usage scenarios, 10 events per request of 1 KB each: busy keys (each request 10 events of
 * one key, so SQS batches hold 10 of one group) and sparse keys (each request one event of each of
 * 10 keys, the next only once they are delivered, so every key has one event at a time).
 */
export function usageSpecs(isQuick: boolean): { readonly busy: RunSpec; readonly sparse: RunSpec } {
  const common = { ...base, concurrency: 4, eventsPerRequest: 10, measureUnits: true } as const;
  return {
    busy: { ...common, keys: 8, latencyMs: 20, eventsPerKey: isQuick ? 20 : 50, shape: TrafficShape.perKey, runLagJob: true },
    sparse: { ...common, keys: 20, latencyMs: 0, eventsPerKey: isQuick ? 2 : 4, shape: TrafficShape.sparse },
  };
}

/**
 * A hot key (ordered batches, docs/api.md#batches): one key fed faster than one event per round trip of its endpoint, 10 events
 * per request, receiver 20 ms, with `batch_size` 1 and 10 side by side. Run on the working tree
 * only: a checkout from before batches has no `batch_size`.
 */
export function hotKeySpecs(isQuick: boolean): { readonly single: RunSpec; readonly batched: RunSpec } {
  const single: RunSpec = { ...base, keys: 1, concurrency: 4, latencyMs: 20, eventsPerKey: isQuick ? 100 : 300, eventsPerRequest: 10, shape: TrafficShape.perKey, measureUnits: true };
  return { single, batched: { ...single, batchSize: 10 } };
}

/**
 * Fan-out by event type (docs/api.md#fan-out-by-event-type): 10 subscriptions of one tenant, 10 events per request, receiver 20 ms, each
 * event delivered to all 10; beside it the same deliveries made by events that each name their
 * subscription (10 events of one key per request, as the busy keys). Units per delivered event
 * side by side. Run on the working tree only: a checkout from before has no fan-out.
 */
export function fanOutSpecs(isQuick: boolean): { readonly named: RunSpec; readonly fanOut: RunSpec } {
  const named: RunSpec = { ...base, keys: 10, concurrency: 4, latencyMs: 20, eventsPerKey: isQuick ? 20 : 50, eventsPerRequest: 10, shape: TrafficShape.perKey, measureUnits: true };
  return { named, fanOut: { ...named, isFanOut: true } };
}

/**
 * The usage scenarios again with no event kept for replays (`EVENT_RETENTION_DAYS=0`), beside the
 * usage runs (kept 7 days, the default): what keeping the bodies and the runs' numbers costs. Run
 * on the working tree only: a checkout from before kept no event either way.
 */
export function retentionOffSpecs(isQuick: boolean): { readonly busy: RunSpec; readonly sparse: RunSpec } {
  const { busy, sparse } = usageSpecs(isQuick);
  const off = { EVENT_RETENTION_DAYS: '0' } as const;
  return { busy: { ...busy, environment: { ...busy.environment, ...off } }, sparse: { ...sparse, environment: { ...sparse.environment, ...off } } };
}

/**
 * The bench's report: every figure of one run for each checkout (the working tree, and a baseline
 * when asked), as JSON (`--json`) and as tables for people, side by side with the ratio.
 */
import type { BundleSize } from './bundles.js';
import { costPerMillion, fixedMonthlyCost, type CostPerMillion, type FixedCostLine } from './cost.js';
import { count, fixed, formatTable, ratio, usd } from './format.js';
import { scaleModel, type ScaleModel, type Traffic } from './model.js';
import { idealEventsPerSecond } from './plan.js';
import { ESTIMATES } from './prices.js';
import type { RunResult } from './protocol.js';
import { perEvent, totalPerEvent, type Usage } from './usage.js';

/** A checkout measured: `current` (the working tree) and, with --baseline, `baseline`. */
export interface Variant {
  readonly id: string;
  readonly label: string;
}

/** A figure per variant id. */
export type PerVariant<T> = Readonly<Record<string, T>>;

/** One cell of the throughput grid, measured on each checkout. */
export interface GridRow {
  readonly keys: number;
  readonly concurrency: number;
  readonly latencyMs: number;
  readonly events: number;
  readonly results: PerVariant<RunResult>;
}

/** The isolation pair: healthy keys alone, and beside a poison key. */
export interface IsolationFigures {
  readonly alone: RunResult;
  readonly withPoison: RunResult;
}

/** Everything one `npm run bench` measured; the JSON of `--json` adds {@link DerivedFigures}. */
export interface BenchReport {
  readonly startedAt: string;
  readonly seconds: number;
  readonly machine: { readonly cpus: number; readonly node: string; readonly loadAverage: readonly number[] };
  readonly variants: readonly Variant[];
  readonly grid: readonly GridRow[];
  readonly isolation: PerVariant<IsolationFigures>;
  readonly usage: { readonly busy: PerVariant<RunResult>; readonly sparse: PerVariant<RunResult> };
  readonly bundles: PerVariant<Record<string, BundleSize>>;
  /** Present with --model: the scale model of each variant, from its sparse-keys usage. */
  readonly model?: PerVariant<ScaleModel>;
  /** Each variant's lag shards: the partition-key values its index of active groups spreads writes over. */
  readonly indexPartitions: PerVariant<number>;
  /** Runs of each throughput and isolation spec per checkout, merged. */
  readonly repeats: number;
  /** A hot key with `batch_size` 1 and 10 (ordered batches), on the working tree only; absent in reports from before. */
  readonly hotKey?: { readonly single: RunResult; readonly batched: RunResult };
  /** The usage scenarios with `EVENT_RETENTION_DAYS=0`, on the working tree only; absent in reports from before. */
  readonly retentionOff?: { readonly busy: RunResult; readonly sparse: RunResult };
  /** Fan-out by event type beside the same deliveries named one by one, on the working tree only; absent in reports from before. */
  readonly fanOut?: { readonly named: RunResult; readonly fanOut: RunResult };
}

/** Figures derived from a report, included in the JSON beside the raw runs. */
export interface DerivedFigures {
  readonly ratioToIdeal: readonly { readonly cell: string; readonly ratios: PerVariant<number | null> }[];
  readonly isolationRatio: PerVariant<number>;
  /** Each key count and latency measured at both concurrencies: events/s at the higher over the lower. */
  readonly concurrencyScaling: readonly ConcurrencyScaling[];
  readonly unitsPerEvent: PerVariant<{ readonly busy: { write: number; read: number }; readonly sparse: { write: number; read: number } }>;
  readonly cost: PerVariant<{ readonly busy: CostPerMillion; readonly sparse: CostPerMillion; readonly fixedMonthly: readonly FixedCostLine[] }>;
  readonly orderViolations: number;
  /** The hot key's figures (see {@link BenchReport.hotKey}). */
  readonly hotKey?: {
    readonly eventsPerSecond: { readonly single: number; readonly batched: number };
    readonly speedup: number;
    readonly unitsPerEvent: { readonly single: { write: number; read: number }; readonly batched: { write: number; read: number } };
    readonly usdPerMillion: { readonly single: number; readonly batched: number };
  };
  /** Units, cost and rate per delivered event of a fan-out and of the same deliveries named one by one. */
  readonly fanOut?: {
    readonly unitsPerDelivery: { readonly named: { write: number; read: number }; readonly fanOut: { write: number; read: number } };
    readonly usdPerMillionDeliveries: { readonly named: number; readonly fanOut: number };
    readonly deliveriesPerSecond: { readonly named: number; readonly fanOut: number };
  };
  /** Units per event of the working tree's usage scenarios with events kept (the default, 7 days) and with none kept. */
  readonly retention?: {
    readonly busy: { readonly on: { write: number; read: number }; readonly off: { write: number; read: number } };
    readonly sparse: { readonly on: { write: number; read: number }; readonly off: { write: number; read: number } };
  };
}

/**
 * Several runs of one spec as one: events and seconds added up (so the rate is events over the
 * time they all took), violations and duplicates added, the first run's usage.
 */
export function mergeRuns(runs: readonly RunResult[]): RunResult {
  const [first, ...rest] = runs;
  if (first === undefined) throw new Error('mergeRuns needs at least one run');
  if (rest.length === 0) return first;
  const sum = (pick: (run: RunResult) => number): number => runs.reduce((total, run) => total + pick(run), 0);
  const seconds = sum((run) => run.seconds);
  const delivered = sum((run) => run.delivered);
  return {
    ...first,
    seconds,
    delivered,
    expected: sum((run) => run.expected),
    eventsPerSecond: seconds > 0 ? delivered / seconds : 0,
    orderViolations: sum((run) => run.orderViolations),
    duplicates: sum((run) => run.duplicates),
    refused: sum((run) => run.refused),
    timedOut: runs.some((run) => run.timedOut),
    ...(runs.some((run) => run.error !== undefined) ? { error: runs.map((run) => run.error).find((error) => error !== undefined) } : {}),
    warnings: [...new Set(runs.flatMap((run) => run.warnings))].slice(0, 20),
  };
}

/** Throughput over ideal, or undefined for a cell without latency. */
export function ratioToIdeal(result: RunResult, keys: number, concurrency: number, latencyMs: number): number | undefined {
  const ideal = idealEventsPerSecond(keys, concurrency, latencyMs);
  return ideal === undefined ? undefined : result.eventsPerSecond / ideal;
}

/** What raising the consumer's concurrency gives one cell of keys and latency: the goal (docs/performance.md#todays-figures) is ≥ 1.5 at 64 keys, L = 20 ms. */
export interface ConcurrencyScaling {
  readonly keys: number;
  readonly latencyMs: number;
  readonly from: number;
  readonly to: number;
  /** Events/s at `to` over events/s at `from`, per variant; null where either run delivered nothing. */
  readonly ratios: PerVariant<number | null>;
}

/**
 * The grid's throughput at its highest concurrency over its lowest, for each key count and
 * latency measured at both (the goal: C = 16 over C = 4 with 64 keys and L = 20 ms, goal ≥ 1.5).
 */
export function concurrencyScaling(grid: readonly GridRow[], ids: readonly string[]): ConcurrencyScaling[] {
  const cells = new Map<string, GridRow[]>();
  for (const row of grid) {
    const cell = `${row.keys}/${row.latencyMs}`;
    cells.set(cell, [...(cells.get(cell) ?? []), row]);
  }
  return [...cells.values()].flatMap((rows) => {
    const sorted = [...rows].sort((a, b) => a.concurrency - b.concurrency);
    const low = sorted[0];
    const high = sorted[sorted.length - 1];
    if (low === undefined || high === undefined || low.concurrency === high.concurrency) return [];
    const ratios = Object.fromEntries(
      ids.map((id) => {
        const before = low.results[id]?.eventsPerSecond ?? 0;
        const after = high.results[id]?.eventsPerSecond ?? 0;
        return [id, before > 0 && after > 0 ? after / before : null];
      }),
    );
    return [{ keys: low.keys, latencyMs: low.latencyMs, from: low.concurrency, to: high.concurrency, ratios }];
  });
}

/** Healthy throughput with the poison key over without: the isolation goal is ≥ 0.95. */
export function isolationRatio(figures: IsolationFigures): number {
  return figures.alone.eventsPerSecond === 0 ? 0 : figures.withPoison.eventsPerSecond / figures.alone.eventsPerSecond;
}

const unitsOf = (usage: Usage): { write: number; read: number } => {
  const totals = totalPerEvent(usage);
  return { write: totals.writeUnits, read: totals.readUnits };
};

/** Every run of a report. */
function allRuns(report: BenchReport): RunResult[] {
  return [
    ...report.grid.flatMap((row) => Object.values(row.results)),
    ...Object.values(report.isolation).flatMap((figures) => [figures.alone, figures.withPoison]),
    ...Object.values(report.usage.busy),
    ...Object.values(report.usage.sparse),
    ...(report.hotKey === undefined ? [] : [report.hotKey.single, report.hotKey.batched]),
    ...(report.fanOut === undefined ? [] : [report.fanOut.named, report.fanOut.fanOut]),
  ];
}

/** Every run's order violations, across the whole report: must be 0. */
export function totalOrderViolations(report: BenchReport): number {
  return allRuns(report).reduce((sum, run) => sum + run.orderViolations, 0);
}

/** The ratios, units, costs and order check computed from a report's runs. */
export function deriveFigures(report: BenchReport): DerivedFigures {
  const ids = report.variants.map((variant) => variant.id);
  const each = <T>(compute: (id: string) => T): Record<string, T> => Object.fromEntries(ids.map((id) => [id, compute(id)]));
  return {
    ratioToIdeal: report.grid.map((row) => ({
      cell: `K=${row.keys} C=${row.concurrency} L=${row.latencyMs}ms`,
      ratios: each((id) => {
        const result = row.results[id];
        return result === undefined ? null : (ratioToIdeal(result, row.keys, row.concurrency, row.latencyMs) ?? null);
      }),
    })),
    isolationRatio: each((id) => {
      const figures = report.isolation[id];
      return figures === undefined ? 0 : isolationRatio(figures);
    }),
    concurrencyScaling: concurrencyScaling(report.grid, ids),
    unitsPerEvent: each((id) => {
      const busy = report.usage.busy[id];
      const sparse = report.usage.sparse[id];
      return { busy: busy === undefined ? { write: 0, read: 0 } : unitsOf(busy.usage), sparse: sparse === undefined ? { write: 0, read: 0 } : unitsOf(sparse.usage) };
    }),
    cost: Object.fromEntries(
      ids.flatMap((id) => {
        const busy = report.usage.busy[id];
        const sparse = report.usage.sparse[id];
        if (busy === undefined || sparse === undefined) return [];
        return [[id, { busy: costPerMillion(busy.usage), sparse: costPerMillion(sparse.usage), fixedMonthly: fixedMonthlyCost(busy.usage) }]];
      }),
    ),
    orderViolations: totalOrderViolations(report),
    ...(report.hotKey === undefined ? {} : { hotKey: hotKeyFigures(report.hotKey) }),
    ...retentionFigures(report),
    ...(report.fanOut === undefined ? {} : { fanOut: fanOutFigures(report.fanOut) }),
  };
}

/** The working tree's units per event with events kept and without (see {@link BenchReport.retentionOff}). */
function retentionFigures(report: BenchReport): Pick<DerivedFigures, 'retention'> {
  const current = report.variants.at(-1)?.id ?? '';
  const busy = report.usage.busy[current];
  const sparse = report.usage.sparse[current];
  if (report.retentionOff === undefined || busy === undefined || sparse === undefined) return {};
  return {
    retention: {
      busy: { on: unitsOf(busy.usage), off: unitsOf(report.retentionOff.busy.usage) },
      sparse: { on: unitsOf(sparse.usage), off: unitsOf(report.retentionOff.sparse.usage) },
    },
  };
}

/** A fan-out's units, cost and rate per delivered event, beside the same deliveries named one by one. */
function fanOutFigures({ named, fanOut }: NonNullable<BenchReport['fanOut']>): NonNullable<DerivedFigures['fanOut']> {
  return {
    unitsPerDelivery: { named: unitsOf(named.usage), fanOut: unitsOf(fanOut.usage) },
    usdPerMillionDeliveries: { named: costPerMillion(named.usage).totalUsdPerMillion, fanOut: costPerMillion(fanOut.usage).totalUsdPerMillion },
    deliveriesPerSecond: { named: named.eventsPerSecond, fanOut: fanOut.eventsPerSecond },
  };
}

/** A hot key's rate, units and cost per event with and without batches. */
function hotKeyFigures({ single, batched }: NonNullable<BenchReport['hotKey']>): NonNullable<DerivedFigures['hotKey']> {
  return {
    eventsPerSecond: { single: single.eventsPerSecond, batched: batched.eventsPerSecond },
    speedup: single.eventsPerSecond > 0 ? batched.eventsPerSecond / single.eventsPerSecond : 0,
    unitsPerEvent: { single: unitsOf(single.usage), batched: unitsOf(batched.usage) },
    usdPerMillion: { single: costPerMillion(single.usage).totalUsdPerMillion, batched: costPerMillion(batched.usage).totalUsdPerMillion },
  };
}

/** The model of each variant, from its sparse-keys usage (100,000 keys at 10,000 events/s are sparse keys). */
export function modelOf(report: Omit<BenchReport, 'model'>, traffic?: Traffic): PerVariant<ScaleModel> {
  return Object.fromEntries(
    report.variants.flatMap((variant) => {
      const sparse = report.usage.sparse[variant.id];
      return sparse === undefined ? [] : [[variant.id, scaleModel(sparse.usage, traffic, report.indexPartitions[variant.id] ?? 1)]];
    }),
  );
}

/** Column headers for one figure per variant, then after/before when there are two. */
function variantHeaders(variants: readonly Variant[], what: string): string[] {
  return [...variants.map((variant) => `${variant.label}: ${what}`), ...(variants.length === 2 ? ['after/before'] : [])];
}

function variantCells(variants: readonly Variant[], value: (id: string) => number | undefined, digits: number): string[] {
  const values = variants.map((variant) => value(variant.id));
  return [...values.map((v) => fixed(v, digits)), ...(variants.length === 2 ? [ratio(values[1], values[0])] : [])];
}

function usageTable(variants: readonly Variant[], runs: PerVariant<RunResult>): string {
  type Row = { caller: string; service: string; operation: string };
  const rows = new Map<string, Row>();
  const byVariant = new Map<string, Map<string, ReturnType<typeof perEvent>[number]>>();
  for (const variant of variants) {
    const usage = runs[variant.id]?.usage;
    const map = new Map<string, ReturnType<typeof perEvent>[number]>();
    for (const row of usage === undefined ? [] : perEvent(usage)) {
      const key = `${row.caller}|${row.service}|${row.operation}`;
      rows.set(key, { caller: row.caller, service: row.service, operation: row.operation });
      map.set(key, row);
    }
    byVariant.set(variant.id, map);
  }
  const headers = ['function', 'service', 'operation', ...variants.flatMap((variant) => [`${variant.label}: calls/event`, 'WRU/event', 'RRU/event'])];
  const body = [...rows.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, row]) => [
      row.caller,
      row.service,
      row.operation,
      ...variants.flatMap((variant) => {
        const figures = byVariant.get(variant.id)?.get(key);
        return figures === undefined ? ['-', '-', '-'] : [fixed(figures.callsPerEvent, 3), fixed(figures.writeUnitsPerEvent, 3), fixed(figures.readUnitsPerEvent, 3)];
      }),
    ]);
  const totals = ['all', '', 'total', ...variants.flatMap((variant) => {
    const usage = runs[variant.id]?.usage;
    if (usage === undefined) return ['-', '-', '-'];
    const total = totalPerEvent(usage);
    return [fixed(total.calls, 3), fixed(total.writeUnits, 3), fixed(total.readUnits, 3)];
  })];
  return formatTable(headers, [...body, totals]);
}

/** The report as tables for people. */
export function renderReport(report: BenchReport): string {
  const { variants } = report;
  const derived = deriveFigures(report);
  const out: string[] = [];
  const section = (title: string, ...parts: string[]): void => {
    out.push(`\n## ${title}\n`, ...parts);
  };

  out.push(
    `npm run bench, ${report.startedAt}: ${report.machine.cpus} CPUs, Node ${report.machine.node}, load average ${report.machine.loadAverage.map((load) => load.toFixed(2)).join(' ')}; ${Math.round(report.seconds)} s`,
    variants.length === 2 ? `Side by side, cells alternating: ${variants.map((variant) => variant.label).join(' | ')}` : `${variants[0]?.label ?? ''} only`,
    `Each throughput and isolation figure: ${report.repeats} run(s) per checkout, events over the time they took.`,
  );

  section(
    'Throughput (events/s end to end; ratio to ideal = measured / (min(K, C) / L))',
    formatTable(
      ['K', 'C', 'L ms', 'events', ...variants.flatMap((variant) => [`${variant.label}: events/s`, 'ratio']), ...(variants.length === 2 ? ['after/before'] : [])],
      report.grid.map((row) => {
        const rates = variants.map((variant) => row.results[variant.id]?.eventsPerSecond);
        return [
          String(row.keys),
          String(row.concurrency),
          String(row.latencyMs),
          String(row.events),
          ...variants.flatMap((variant) => {
            const result = row.results[variant.id];
            if (result === undefined) return ['-', '-'];
            const flag = result.error !== undefined ? ' (failed)' : result.timedOut ? ' (timed out)' : '';
            return [`${fixed(result.eventsPerSecond, 1)}${flag}`, fixed(ratioToIdeal(result, row.keys, row.concurrency, row.latencyMs), 2)];
          }),
          ...(variants.length === 2 ? [ratio(rates[1], rates[0])] : []),
        ];
      }),
    ),
    `\nOrder violations in every run: ${derived.orderViolations} (must be 0). Duplicates: ${report.grid.reduce((sum, row) => sum + Object.values(row.results).reduce((s, r) => s + r.duplicates, 0), 0)}.`,
  );

  if (derived.concurrencyScaling.length > 0) {
    section(
      'Concurrency (events/s at the higher C over the lower; goal at 64 keys, L = 20 ms: ≥ 1.5)',
      formatTable(
        ['K', 'L ms', 'C', ...variantHeaders(variants, 'ratio')],
        derived.concurrencyScaling.map((cell) => [
          String(cell.keys),
          String(cell.latencyMs),
          `${cell.to} / ${cell.from}`,
          ...variantCells(variants, (id) => cell.ratios[id] ?? undefined, 2),
        ]),
      ),
    );
  }

  section(
    'Isolation (16 healthy keys, L = 20 ms, C = 4; one poison key answered 500, 5 attempts 1 s apart)',
    formatTable(
      ['figure', ...variantHeaders(variants, 'value')],
      [
        ['healthy events/s alone', ...variantCells(variants, (id) => report.isolation[id]?.alone.eventsPerSecond, 1)],
        ['healthy events/s with the poison key', ...variantCells(variants, (id) => report.isolation[id]?.withPoison.eventsPerSecond, 1)],
        ['ratio (goal ≥ 0.95)', ...variantCells(variants, (id) => derived.isolationRatio[id], 2)],
      ],
    ),
  );

  section(
    'SDK calls per delivered event, busy keys (requests of 10 events of one key, 1 KB payloads)',
    usageTable(variants, report.usage.busy),
    '\nSparse keys (each request one event of each of 10 keys; one event of a key at a time):\n',
    usageTable(variants, report.usage.sparse),
    `\nWRU include index replication (GSI); a refused conditional write counts as AWS bills it. "ReceiveMessage (empty)" is the local poller's idle polling (1 s waits), not a per-event cost.`,
  );

  section(
    'DynamoDB units per delivered event (goals: busy ≤ 1.5 WRU, sparse ≤ 3 WRU, ≤ 0.5 RRU)',
    formatTable(
      ['scenario', ...variantHeaders(variants, 'units/event')],
      [
        ['busy keys: write units', ...variantCells(variants, (id) => derived.unitsPerEvent[id]?.busy.write, 2)],
        ['busy keys: read units', ...variantCells(variants, (id) => derived.unitsPerEvent[id]?.busy.read, 2)],
        ['sparse keys: write units', ...variantCells(variants, (id) => derived.unitsPerEvent[id]?.sparse.write, 2)],
        ['sparse keys: read units', ...variantCells(variants, (id) => derived.unitsPerEvent[id]?.sparse.read, 2)],
      ],
    ),
  );

  const costRows = (scenario: 'busy' | 'sparse'): string[][] => {
    const items = derived.cost[variants[0]?.id ?? '']?.[scenario].lines.map((line) => line.item) ?? [];
    const lineOf = (id: string, item: string) => derived.cost[id]?.[scenario].lines.find((line) => line.item === item);
    return [
      ...items.map((item) => [
        item,
        ...variantCells(variants, (id) => lineOf(id, item)?.usdPerMillion, 3),
        lineOf(variants.at(-1)?.id ?? '', item)?.basis ?? '',
      ]),
      ['total', ...variantCells(variants, (id) => derived.cost[id]?.[scenario].totalUsdPerMillion, 3), ''],
      ['EventBridge (custom bus + API destination)', ...variants.map(() => '1.200'), ...(variants.length === 2 ? [''] : []), 'list price'],
    ];
  };
  section(
    'Cost per million events, USD at list prices (us-east-1; 10 events/request, 1 KB, receiver 100 ms)',
    'Busy keys:\n',
    formatTable(['item', ...variantHeaders(variants, '$/M'), 'basis (last column)'], costRows('busy')),
    '\nSparse keys:\n',
    formatTable(['item', ...variantHeaders(variants, '$/M'), 'basis (last column)'], costRows('sparse')),
    `\nEstimates (bench/prices.ts): Lambda ${ESTIMATES.functionMemoryMb} MB arm64, ${ESTIMATES.awsCallMs} ms per AWS call one after another (an upper bound), ingest ${ESTIMATES.ingestBaseMs} ms of its own; log lines as Powertools JSON (+${ESTIMATES.jsonLogOverheadBytes} B each), Lambda's platform lines and the consumer's EMF record per invocation.`,
    '\nFixed monthly cost, whatever the traffic:\n',
    formatTable(
      ['item', ...variantHeaders(variants, '$/month'), 'basis (last column)'],
      (derived.cost[variants.at(-1)?.id ?? '']?.fixedMonthly ?? []).map((line) => [
        line.item,
        ...variantCells(variants, (id) => derived.cost[id]?.fixedMonthly.find((l) => l.item === line.item)?.usdPerMonth, 2),
        line.basis,
      ]),
    ),
  );

  if (derived.hotKey !== undefined) {
    const hot = derived.hotKey;
    section(
      'A hot key (ordered batches): one key, 10 events per request, receiver 20 ms, C = 4; working tree only',
      formatTable(
        ['figure', 'batch_size 1', 'batch_size 10', '10 / 1'],
        [
          ['events/s', fixed(hot.eventsPerSecond.single, 1), fixed(hot.eventsPerSecond.batched, 1), fixed(hot.speedup, 2)],
          ['write units/event', fixed(hot.unitsPerEvent.single.write, 2), fixed(hot.unitsPerEvent.batched.write, 2), ratio(hot.unitsPerEvent.batched.write, hot.unitsPerEvent.single.write)],
          ['read units/event', fixed(hot.unitsPerEvent.single.read, 2), fixed(hot.unitsPerEvent.batched.read, 2), ratio(hot.unitsPerEvent.batched.read, hot.unitsPerEvent.single.read)],
          ['$ per million events', fixed(hot.usdPerMillion.single, 3), fixed(hot.usdPerMillion.batched, 3), ratio(hot.usdPerMillion.batched, hot.usdPerMillion.single)],
        ],
      ),
      '\nOne key moves one POST per round trip of its endpoint: with batch_size 10 a POST carries up to the 10 events of its key that one receive holds.',
    );
  }

  if (derived.fanOut !== undefined) {
    const fan = derived.fanOut;
    section(
      'Fan-out by event type: 10 subscriptions of one tenant, 10 events per request, receiver 20 ms, C = 4; working tree only',
      formatTable(
        ['figure (per delivered event)', 'each event names its subscription', 'fan-out to 10', 'fan-out / named'],
        [
          ['write units', fixed(fan.unitsPerDelivery.named.write, 2), fixed(fan.unitsPerDelivery.fanOut.write, 2), ratio(fan.unitsPerDelivery.fanOut.write, fan.unitsPerDelivery.named.write)],
          ['read units', fixed(fan.unitsPerDelivery.named.read, 2), fixed(fan.unitsPerDelivery.fanOut.read, 2), ratio(fan.unitsPerDelivery.fanOut.read, fan.unitsPerDelivery.named.read)],
          ['$ per million deliveries', fixed(fan.usdPerMillionDeliveries.named, 3), fixed(fan.usdPerMillionDeliveries.fanOut, 3), ratio(fan.usdPerMillionDeliveries.fanOut, fan.usdPerMillionDeliveries.named)],
          ['deliveries/s', fixed(fan.deliveriesPerSecond.named, 1), fixed(fan.deliveriesPerSecond.fanOut, 1), ratio(fan.deliveriesPerSecond.fanOut, fan.deliveriesPerSecond.named)],
        ],
      ),
      "\nA fan-out adds its record and the tenant's read per event; each delivery keeps its own record, as an event naming its subscription does.",
    );
  }

  if (derived.retention !== undefined) {
    const { busy, sparse } = derived.retention;
    section(
      'Keeping events for replays: the usage scenarios with EVENT_RETENTION_DAYS 7 (the default) and 0; working tree only',
      formatTable(
        ['figure', 'kept 7 days', 'none kept', 'kept / none'],
        [
          ['busy keys: write units/event', fixed(busy.on.write, 2), fixed(busy.off.write, 2), ratio(busy.on.write, busy.off.write)],
          ['busy keys: read units/event', fixed(busy.on.read, 2), fixed(busy.off.read, 2), ratio(busy.on.read, busy.off.read)],
          ['sparse keys: write units/event', fixed(sparse.on.write, 2), fixed(sparse.off.write, 2), ratio(sparse.on.write, sparse.off.write)],
          ['sparse keys: read units/event', fixed(sparse.on.read, 2), fixed(sparse.off.read, 2), ratio(sparse.on.read, sparse.off.read)],
        ],
      ),
      "\nKept: one item per enqueued message (its body gzipped; the bench's padding compresses far better than real JSON) and one per run the consumer numbers (its events' ids), in the DeadLetters table.",
    );
  }

  const functions = [...new Set(variants.flatMap((variant) => Object.keys(report.bundles[variant.id] ?? {})))];
  section(
    'Bundle size of each function (esbuild as lib/handler-function.ts, AWS SDK external)',
    formatTable(
      ['function', ...variantHeaders(variants, 'KB (gzip KB)')],
      functions.map((name) => {
        const sizes = variants.map((variant) => report.bundles[variant.id]?.[name]);
        return [
          name,
          ...sizes.map((size) => (size === undefined ? '-' : `${(size.bytes / 1024).toFixed(1)} (${(size.gzipBytes / 1024).toFixed(1)})`)),
          ...(variants.length === 2 ? [ratio(sizes[1]?.bytes, sizes[0]?.bytes)] : []),
        ];
      }),
    ),
  );

  if (report.model !== undefined) out.push(renderModel(variants, report.model));
  const warnings = [...new Set(allRuns(report).flatMap((run) => run.warnings))];
  if (warnings.length > 0) section('Warnings and errors the stacks printed (first 10)', ...warnings.slice(0, 10));
  return out.join('\n');
}

/** The scale model's tables. */
export function renderModel(variants: readonly Variant[], models: PerVariant<ScaleModel>): string {
  const out: string[] = [];
  for (const variant of variants) {
    const model = models[variant.id];
    if (model === undefined) continue;
    const { traffic } = model;
    out.push(
      `\n## Scale model, ${variant.label}: ${count(traffic.activeKeys)} active keys, ${count(traffic.eventsPerSecond)} events/s (peaks ${count(traffic.peakEventsPerSecond)}/s), ${traffic.eventsPerRequest} events/request\n`,
      formatTable(
        ['service', 'demand', 'steady /s', 'peak /s', 'quota', 'peak / quota', 'source'],
        model.rows.map((row) => [row.service, row.demand, count(row.steady), count(row.peak), count(row.quota), fixed(row.peakUtilisation, 2), row.source]),
      ),
      model.bindsFirst === undefined
        ? ''
        : `\nBinds first: ${model.bindsFirst.service}, ${model.bindsFirst.demand} (${fixed(model.bindsFirst.peakUtilisation, 2)} of the quota at peak). What to do: ${model.bindsFirst.remedy}.`,
      `Monthly cost at ${count(traffic.eventsPerSecond)} events/s: ${usd(model.monthlyUsd.total)} (${usd(model.monthlyUsd.perEvent)} per-event services, ${usd(model.monthlyUsd.fixed)} fixed).`,
    );
  }
  return out.join('\n');
}

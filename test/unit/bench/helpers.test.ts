import { describe, expect, it } from 'vitest';
import { failedRun, parseBenchArgs } from '../../../bench/main.js';
import { callerOfPath, callerOfStack, operationOf, serviceOf, sqsBilledRequests } from '../../../bench/meter.js';
import { eventsPerKey, gridCells, idealEventsPerSecond, usageSpecs } from '../../../bench/plan.js';
import type { RunResult } from '../../../bench/protocol.js';
import { OrderChecker } from '../../../bench/receiver.js';
import { plannedRequests, tableShapes } from '../../../bench/run.js';
import * as resources from '../../../lambda/resources.js';
import { concurrencyScaling, isolationRatio, mergeRuns, ratioToIdeal, type GridRow } from '../../../bench/report.js';
import { SPARSE_USAGE } from './fixture.js';

const run = (figures: Partial<RunResult>): RunResult => ({
  seconds: 1,
  delivered: 10,
  expected: 10,
  eventsPerSecond: 10,
  orderViolations: 0,
  duplicates: 0,
  refused: 0,
  timedOut: false,
  usage: SPARSE_USAGE,
  warnings: [],
  ...figures,
});

describe('mergeRuns', () => {
  it('adds events and seconds, so that the rate is events over the time all runs took', () => {
    const merged = mergeRuns([run({ seconds: 2, delivered: 100 }), run({ seconds: 3, delivered: 50, orderViolations: 1, timedOut: true, warnings: ['w'] })]);
    expect(merged).toMatchObject({ seconds: 5, delivered: 150, eventsPerSecond: 30, orderViolations: 1, timedOut: true, warnings: ['w'] });
  });

  it('returns a single run unchanged', () => {
    const only = run({});
    expect(mergeRuns([only])).toBe(only);
  });
});

describe('ratioToIdeal and isolationRatio', () => {
  it('divides by min(K, C) events per L, with no ratio without latency', () => {
    expect(ratioToIdeal(run({ eventsPerSecond: 40 }), 1, 4, 20)).toBeCloseTo(0.8, 9);
    expect(ratioToIdeal(run({ eventsPerSecond: 40 }), 64, 16, 0)).toBeUndefined();
  });

  it('divides healthy throughput with the poison key by healthy throughput alone', () => {
    expect(isolationRatio({ alone: run({ eventsPerSecond: 100 }), withPoison: run({ eventsPerSecond: 96 }) })).toBeCloseTo(0.96, 9);
  });
});

describe('operationOf and serviceOf', () => {
  it.each([
    ['GetCommand', 'GetItem'],
    ['UpdateCommand', 'UpdateItem'],
    ['BatchWriteCommand', 'BatchWriteItem'],
    ['QueryCommand', 'Query'],
    ['SendMessageBatchCommand', 'SendMessageBatch'],
    ['GetItemCommand', 'GetItem'],
  ])('names the DynamoDB or SQS operation of %s', (command, operation) => {
    expect(operationOf(command)).toBe(operation);
  });

  it.each([
    ['DynamoDBDocumentClient', 'DynamoDB'],
    ['DynamoDBClient', 'DynamoDB'],
    ['SQSClient', 'SQS'],
    ['S3Client', 'S3'],
  ])('names the service of %s', (client, service) => {
    expect(serviceOf(client)).toBe(service);
  });
});

describe('callerOfPath', () => {
  it.each([
    ['/v1/events', 'ingest'],
    ['/health', 'ingest'],
    ['/v1/subscriptions/abc', 'subscriptions'],
    ['/v1/dead-letters', 'operations'],
    ['/k3', 'bench'],
  ])('gives %s to %s', (path, caller) => {
    expect(callerOfPath(path)).toBe(caller);
  });
});

describe('callerOfStack', () => {
  const frame = (file: string): string => `    at fn (${file}:1:1)`;
  it.each([
    ['the poller', [frame('/r/node_modules/@smithy/core/dist-cjs/index.js'), frame('/r/bench/meter.ts'), frame('/r/local/event-source-mapping.ts')], 'poller'],
    ['the consumer', [frame('/r/lambda/adapters/event-store.ts'), frame('/r/lambda/core/delivery.ts'), frame('/r/local/event-source-mapping.ts')], 'consumer'],
    ['nothing known', [frame('/r/node_modules/x.js')], 'consumer'],
  ])('attributes a call whose topmost project frame is %s', (_name, frames, caller) => {
    expect(callerOfStack(['Error', ...frames].join('\n'))).toBe(caller);
  });
});

describe('sqsBilledRequests', () => {
  it.each([
    [0, 1],
    [65_536, 1],
    [65_537, 2],
    [10 * 1024, 1],
    [262_144, 4],
  ])('bills %s bytes as %s requests', (bytes, requests) => {
    expect(sqsBilledRequests(bytes)).toBe(requests);
  });
});

describe('OrderChecker', () => {
  it('counts each key in order and a resent event as a duplicate', () => {
    const checker = new OrderChecker();
    checker.accept(0, 0, 1);
    checker.accept(1, 0, 1);
    checker.accept(0, 1, 2);
    checker.accept(0, 1, 2);
    expect(checker.totals).toEqual({ delivered: 3, duplicates: 1, orderViolations: 0, refused: 0 });
    expect(checker.deliveredOf(0)).toBe(2);
  });

  it('counts a violation when a later event of a key comes before an earlier one', () => {
    const checker = new OrderChecker();
    checker.accept(0, 1, 1);
    checker.accept(0, 0, 2);
    expect(checker.totals.orderViolations).toBe(1);
  });

  it('counts a violation when a new event carries a webhook-sequence that does not grow', () => {
    const checker = new OrderChecker();
    checker.accept(0, 0, 5);
    checker.accept(0, 1, 5);
    expect(checker.totals.orderViolations).toBe(1);
  });
});

describe('plan', () => {
  it.each<[number, number, boolean, number]>([
    [1, 20, false, 240],
    [64, 20, false, 20],
    [16, 20, false, 20],
    [4, 20, false, 60],
    [16, 0, false, 25],
    [1, 20, true, 100],
  ])('sends about the same events per cell, with a receiver at least 20 a key: K=%s L=%s quick=%s gives %s per key', (keys, latencyMs, isQuick, perKey) => {
    expect(eventsPerKey(keys, latencyMs, isQuick)).toBe(perKey);
  });

  it('sets the ideal at min(K, C) events per L, and none without latency', () => {
    expect(idealEventsPerSecond(1, 4, 20)).toBe(50);
    expect(idealEventsPerSecond(64, 16, 20)).toBe(800);
    expect(idealEventsPerSecond(64, 16, 0)).toBeUndefined();
  });

  it('covers the grid of the cost and speed goals, and a smaller one when quick', () => {
    expect(gridCells(false)).toHaveLength(16);
    expect(gridCells(true).map((cell) => `${cell.keys}/${cell.concurrency}/${cell.latencyMs}`)).toEqual(['1/4/20', '16/4/20']);
  });
});

describe('parseBenchArgs', () => {
  it.each<[string[], ReturnType<typeof parseBenchArgs>]>([
    [[], { isQuick: false, isModel: false, json: undefined, baseline: undefined }],
    [['--json'], { isQuick: false, isModel: false, json: '-', baseline: undefined }],
    [['--json', 'out.json', '--quick'], { isQuick: true, isModel: false, json: 'out.json', baseline: undefined }],
    [['--json', '--model'], { isQuick: false, isModel: true, json: '-', baseline: undefined }],
    [['--baseline', 'main'], { isQuick: false, isModel: false, json: undefined, baseline: 'main' }],
  ])('reads %j', (args, options) => {
    expect(parseBenchArgs(args)).toEqual(options);
  });

  it.each([[['--baseline']], [['--fast']]])('refuses %j', (args) => {
    expect(() => parseBenchArgs(args)).toThrow(/usage: npm run bench/);
  });
});

describe('plannedRequests', () => {
  const eventOf = (key: number, n: number) => ({ event_id: `${key}-${n}`, tenant_id: 't', subscription_id: `s${key}`, type: 'x', payload: { key, n, pad: '' } });
  const spec = { ...usageSpecs(true).busy, eventsPerKey: 20, eventsPerRequest: 10 };
  const ids = (requests: ReturnType<typeof plannedRequests>[number]) => requests.map((request) => request.map((event) => event.event_id));

  it('gives each producer its own keys, in order, so that no key is split across producers', () => {
    const producers = plannedRequests({ ...spec, shape: 'interleaved' }, 5, eventOf);
    expect(producers).toHaveLength(4);
    // Producer 0 owns keys 0 and 4: their events round robin, 10 per request.
    expect(ids(producers[0] ?? [])[0]).toEqual(['0-0', '4-0', '0-1', '4-1', '0-2', '4-2', '0-3', '4-3', '0-4', '4-4']);
    expect(producers.flat(2)).toHaveLength(100);
  });

  it('fills each request with consecutive events of one key when keys are busy', () => {
    const producers = plannedRequests({ ...spec, shape: 'perKey' }, 4, eventOf);
    expect(ids(producers[1] ?? [])).toEqual([
      ['1-0', '1-1', '1-2', '1-3', '1-4', '1-5', '1-6', '1-7', '1-8', '1-9'],
      ['1-10', '1-11', '1-12', '1-13', '1-14', '1-15', '1-16', '1-17', '1-18', '1-19'],
    ]);
  });
});

describe('tableShapes', () => {
  it('reads each table\'s key and indexes from lambda/resources.ts, by local name', () => {
    const shapes = tableShapes(resources);
    expect(shapes.get('Groups')).toEqual({ partitionKey: 'message_group_id', indexes: [{ partitionKey: 'lag_shard', projection: 'KEYS_ONLY', tableKeys: ['message_group_id'] }] });
    expect(shapes.get('DeadLetters')).toEqual({ partitionKey: 'subscription_id', sortKey: 'position', indexes: [] });
  });

  it('takes an index without a declared projection (a checkout from before projections) as projecting ALL', () => {
    const older = { TABLES: { groups: { localName: 'Groups', envVar: 'GROUPS_TABLE', partitionKey: 'message_group_id', indexes: [{ name: 'active-groups', partitionKey: 'lag_shard' }] } } };
    // A baseline checkout's module: typed as this checkout's, shaped as the older one.
    const shapes = tableShapes(older as unknown as typeof resources);
    expect(shapes.get('Groups')?.indexes).toEqual([{ partitionKey: 'lag_shard', projection: 'ALL', tableKeys: ['message_group_id'] }]);
  });
});

describe('failedRun', () => {
  it('reports a run that could not be carried out with zero figures and its reason', () => {
    const failed = failedRun(usageSpecs(true).busy, new Error('stack refused\n    at somewhere'));
    expect(failed).toMatchObject({ delivered: 0, expected: 160, eventsPerSecond: 0, orderViolations: 0, warnings: ['run failed: stack refused'] });
    expect(failed.error).toContain('stack refused');
  });
});

describe('concurrencyScaling', () => {
  const row = (keys: number, concurrency: number, latencyMs: number, rates: Record<string, number>): GridRow => ({
    keys,
    concurrency,
    latencyMs,
    events: 100,
    results: Object.fromEntries(Object.entries(rates).map(([id, eventsPerSecond]) => [id, run({ eventsPerSecond })])),
  });

  it('divides each cell’s throughput at the highest concurrency by the lowest, per variant', () => {
    const grid = [row(64, 4, 20, { current: 300, baseline: 200 }), row(64, 16, 20, { current: 540, baseline: 260 }), row(1, 4, 0, { current: 100, baseline: 100 }), row(1, 16, 0, { current: 150, baseline: 90 })];
    expect(concurrencyScaling(grid, ['baseline', 'current'])).toEqual([
      { keys: 64, latencyMs: 20, from: 4, to: 16, ratios: { baseline: 1.3, current: 1.8 } },
      { keys: 1, latencyMs: 0, from: 4, to: 16, ratios: { baseline: 0.9, current: 1.5 } },
    ]);
  });

  it('leaves out a cell measured at one concurrency, and gives no ratio for a run that delivered nothing', () => {
    const grid = [row(16, 4, 20, { current: 0 }), row(16, 16, 20, { current: 400 }), row(4, 4, 20, { current: 100 })];
    expect(concurrencyScaling(grid, ['current', 'missing'])).toEqual([{ keys: 16, latencyMs: 20, from: 4, to: 16, ratios: { current: null, missing: null } }]);
  });
});

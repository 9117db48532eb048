/**
 * One benchmark run in the worker: a fresh local stack of the checkout at `root` (its own
 * local/stack.ts, handlers and node_modules), the bench's receiver, events sent as the spec says,
 * then the throughput, the order check and everything the meter counted.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Item } from './dynamo-units.js';
import { benchContext, installMeter, type Meter, type TableShape } from './meter.js';
import { TrafficShape, WorkerRequestSchema, type RunResult, type RunSpec, type WorkerResponse } from './protocol.js';
import { startBenchReceiver, type BenchReceiver } from './receiver.js';
import type { CallCount, Usage } from './usage.js';

type StackModule = typeof import('../local/stack.js');
type ConfigModule = typeof import('../lambda/config.js');
type ResourcesModule = typeof import('../lambda/resources.js');
type LagModule = typeof import('../lambda/handlers/lag-metrics.js');
type LoggerModule = typeof import('../local/terminal-logger.js');
type DocumentModule = typeof import('@aws-sdk/lib-dynamodb');
type MetricsModule = typeof import('@aws-lambda-powertools/metrics');

/** The checkout's modules the run uses, loaded from its own files. */
export interface Checkout {
  readonly root: string;
  readonly stack: StackModule;
  readonly config: ConfigModule;
  readonly resources: ResourcesModule;
  readonly lag: LagModule | undefined;
  readonly logger: LoggerModule;
  readonly documents: DocumentModule;
  readonly metrics: MetricsModule;
}

const importFrom = async <M>(root: string, file: string): Promise<M> => (await import(pathToFileURL(join(root, file)).href)) as M;

/** Loads the checkout at `root`: its stack, configuration and resources, and its SDK. */
export async function loadCheckout(root: string): Promise<Checkout> {
  const requireFromRoot = createRequire(join(root, 'package.json'));
  const fromPackage = async <M>(name: string): Promise<M> => (await import(pathToFileURL(requireFromRoot.resolve(name)).href)) as M;
  return {
    root,
    stack: await importFrom<StackModule>(root, 'local/stack.ts'),
    config: await importFrom<ConfigModule>(root, 'lambda/config.ts'),
    resources: await importFrom<ResourcesModule>(root, 'lambda/resources.ts'),
    lag: await importFrom<LagModule>(root, 'lambda/handlers/lag-metrics.ts').catch(() => undefined),
    logger: await importFrom<LoggerModule>(root, 'local/terminal-logger.ts'),
    documents: await fromPackage<DocumentModule>('@aws-sdk/lib-dynamodb'),
    metrics: await fromPackage<MetricsModule>('@aws-lambda-powertools/metrics'),
  };
}

/** The tables of the checkout, by the name the local stack gives them. */
export function tableShapes(resources: ResourcesModule): Map<string, TableShape> {
  const shapes = new Map<string, TableShape>();
  for (const table of Object.values(resources.TABLES)) {
    // A checkout from before indexes declared their projection projects ALL.
    const definition: { localName: string; partitionKey: string; sortKey?: string; indexes?: readonly { partitionKey: string; sortKey?: string; projection?: 'ALL' | 'KEYS_ONLY' }[] } = table;
    const tableKeys = [definition.partitionKey, ...(definition.sortKey === undefined ? [] : [definition.sortKey])];
    shapes.set(definition.localName, {
      partitionKey: definition.partitionKey,
      ...(definition.sortKey === undefined ? {} : { sortKey: definition.sortKey }),
      indexes: (definition.indexes ?? []).map((index) => ({
        partitionKey: index.partitionKey,
        ...(index.sortKey === undefined ? {} : { sortKey: index.sortKey }),
        projection: index.projection ?? 'ALL',
        tableKeys,
      })),
    });
  }
  return shapes;
}

interface BenchEvent {
  readonly event_id: string;
  readonly tenant_id: string;
  readonly subscription_id: string;
  readonly type: string;
  readonly payload: { readonly key: number; readonly n: number; readonly pad: string };
}

/** Producers sending at once, each for its own keys, each waiting for 202 before its next request. */
const PRODUCERS = 4;

async function post(url: string, method: string, body: unknown): Promise<void> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${new URL(url).pathname} answered ${response.status}: ${text.slice(0, 300)}`);
}

/** The requests each producer sends, in order, for the interleaved and per-key shapes. */
export function plannedRequests(spec: RunSpec, allKeys: number, eventOf: (key: number, n: number) => BenchEvent): BenchEvent[][][] {
  return Array.from({ length: PRODUCERS }, (_, producer) => {
    const own = Array.from({ length: allKeys }, (_, key) => key).filter((key) => key % PRODUCERS === producer);
    const requests: BenchEvent[][] = [];
    if (spec.shape === TrafficShape.perKey) {
      for (let start = 0; start < spec.eventsPerKey; start += spec.eventsPerRequest) {
        for (const key of own) {
          const count = Math.min(spec.eventsPerRequest, spec.eventsPerKey - start);
          requests.push(Array.from({ length: count }, (_, i) => eventOf(key, start + i)));
        }
      }
      return requests;
    }
    const events = Array.from({ length: own.length * spec.eventsPerKey }, (_, i) => eventOf(own[i % own.length] ?? 0, Math.floor(i / own.length)));
    for (let start = 0; start < events.length; start += spec.eventsPerRequest) requests.push(events.slice(start, start + spec.eventsPerRequest));
    return requests;
  });
}

async function until(condition: () => boolean, receiver: BenchReceiver, deadline: number): Promise<boolean> {
  if (condition()) return true;
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      receiver.onAccepted = () => undefined;
      resolve(false);
    }, Math.max(0, deadline - performance.now()));
    receiver.onAccepted = () => {
      if (!condition()) return;
      clearTimeout(timer);
      receiver.onAccepted = () => undefined;
      resolve(true);
    };
  });
}

/** Runs one spec on a fresh stack of `checkout`, counted by `meter`. */
export async function runSpec(checkout: Checkout, meter: Meter, spec: RunSpec): Promise<RunResult> {
  const allKeys = spec.keys + spec.poisonKeys;
  const poison = new Set(Array.from({ length: spec.poisonKeys }, (_, i) => spec.keys + i));
  const receiver = await startBenchReceiver({ latencyMs: spec.latencyMs, poisonKeys: poison });
  const config = checkout.config.loadConfig(
    { LOG_LEVEL: 'INFO', ...spec.environment, CONSUMER_CONCURRENCY: String(spec.concurrency) },
    checkout.config.Deployment.local,
  );
  const stack = await benchContext.run('background', () => checkout.stack.startLocalStack({ config, port: 0 }));
  let isStopped = false;
  const stopStack = async (): Promise<void> => {
    if (isStopped) return;
    isStopped = true;
    await stack.stop();
  };
  try {
    const { GetCommand } = checkout.documents;
    meter.configureTables(tableShapes(checkout.resources), async (table, key) => {
      const output = await stack.clients.dynamo.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
      const item: Item | undefined = output.Item;
      return item;
    });
    const lagJob =
      checkout.lag === undefined
        ? undefined
        : checkout.lag.wireLagMetricsHandler(
            { config, resources: stack.resources, dynamo: stack.clients.dynamo, sqs: stack.clients.sqs, s3: stack.clients.s3, sns: stack.clients.sns, logger: checkout.logger.createTerminalLogger('lag', config.logLevel) },
            new checkout.metrics.Metrics({ namespace: 'OrderedWebhooks', serviceName: 'lag' }),
          );

    const run = `bench-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
    const subscription = (key: number): string => `${run}-key-${key}`;
    const pad = 'x'.repeat(Math.max(0, spec.payloadBytes - 30));
    const tenant = spec.isFanOut === true ? `${run}-tenant` : 'bench';
    const eventOf = (key: number, n: number): BenchEvent => ({
      event_id: `${run}-${key}-${n}`,
      tenant_id: tenant,
      subscription_id: subscription(key),
      type: 'bench.event',
      payload: { key, n, pad },
    });
    /** A fan-out's event: its tenant's, no subscription named; the receiver tells the keys apart by path. */
    const fanOutOf = (n: number): Omit<BenchEvent, 'subscription_id'> => ({ event_id: `${run}-fan-${n}`, tenant_id: tenant, type: 'bench.event', payload: { key: 0, n, pad } });
    await benchContext.run('bench', async () => {
      for (let key = 0; key < allKeys; key += 1) {
        const batching = (spec.batchSize ?? 1) > 1 ? { batch_size: spec.batchSize } : {};
        await post(`${stack.url}/v1/subscriptions/${subscription(key)}`, 'PUT', { tenant_id: tenant, url: `${receiver.url}/k${key}`, ...batching });
      }
    });

    const expected = spec.keys * spec.eventsPerKey;
    const healthyDone = (): boolean => receiver.checker.totals.delivered >= expected;
    const events = `${stack.url}/v1/events`;
    meter.measureUnits = spec.measureUnits;
    meter.reset();
    let httpRequests = 0;
    const send = async (batch: readonly (BenchEvent | Omit<BenchEvent, 'subscription_id'>)[]): Promise<void> => {
      httpRequests += 1;
      await post(events, 'POST', { events: batch });
    };
    const startedAt = performance.now();
    const deadline = startedAt + spec.deadlineSeconds * 1000;
    let lagActiveGroups = 0;
    await benchContext.run('bench', async () => {
      if (spec.isFanOut === true) {
        for (let start = 0; start < spec.eventsPerKey; start += spec.eventsPerRequest) {
          await send(Array.from({ length: Math.min(spec.eventsPerRequest, spec.eventsPerKey - start) }, (_, i) => fanOutOf(start + i)));
        }
      } else if (spec.shape === TrafficShape.sparse) {
        for (let n = 0; n < spec.eventsPerKey; n += 1) {
          for (let first = 0; first < allKeys; first += spec.eventsPerRequest) {
            const keys = Array.from({ length: Math.min(spec.eventsPerRequest, allKeys - first) }, (_, i) => first + i);
            await send(keys.map((key) => eventOf(key, n)));
            const healthy = keys.filter((key) => !poison.has(key));
            await until(() => healthy.every((key) => receiver.checker.deliveredOf(key) > n), receiver, deadline);
          }
        }
      } else {
        await Promise.all(
          plannedRequests(spec, allKeys, eventOf).map(async (requests) => {
            for (const request of requests) await send(request);
          }),
        );
      }
      if (spec.runLagJob && lagJob !== undefined) {
        lagActiveGroups = Array.from({ length: allKeys }, (_, key) => key).filter((key) => receiver.checker.deliveredOf(key) < spec.eventsPerKey).length;
        await benchContext.run('lagJob', () => lagJob());
      }
    });
    const isDone = await until(healthyDone, receiver, deadline);
    const seconds = ((isDone ? receiver.lastAcceptedAt() : performance.now()) - startedAt) / 1000;
    // Stopping lets the in-flight batches finish and settle: their writes after the last POST count too.
    await stopStack();
    const totals = receiver.checker.totals;
    const snapshot = meter.snapshot(totals.delivered);
    meter.measureUnits = false;
    const isLag = (call: CallCount): boolean => call.caller === 'lagJob';
    const usage: Usage = {
      keys: allKeys,
      events: totals.delivered,
      httpRequests,
      consumerInvocations: snapshot.consumerInvocations,
      meanLongestGroupRun: snapshot.meanLongestGroupRun,
      calls: snapshot.calls.filter((call) => !isLag(call)),
      hotItems: snapshot.hotItems,
      logBytes: snapshot.logBytes,
      logLines: snapshot.logLines,
      ...(spec.runLagJob ? { lagJob: { calls: snapshot.calls.filter(isLag), activeGroups: lagActiveGroups } } : {}),
    };
    return {
      seconds,
      delivered: totals.delivered,
      expected,
      eventsPerSecond: seconds > 0 ? totals.delivered / seconds : 0,
      orderViolations: totals.orderViolations,
      duplicates: totals.duplicates,
      refused: totals.refused,
      timedOut: !isDone,
      usage,
      warnings: snapshot.warnings,
    };
  } finally {
    meter.measureUnits = false;
    await stopStack();
    await receiver.stop();
  }
}

/**
 * The worker's loop: installs the meter in this process, loads the checkout at `root` and runs
 * the specs it is sent over IPC one at a time, each on a fresh stack. The process's stdout and
 * stderr carry the stack's log lines, which the meter counts and swallows.
 */
export async function serveWorker(root: string | undefined): Promise<void> {
  const send = process.send?.bind(process);
  if (root === undefined || send === undefined) throw new Error('a bench worker is started by bench/workers.ts, with an IPC channel and the checkout root');
  const reply = (response: WorkerResponse): void => {
    send(response);
  };
  const meter = installMeter(root);
  const checkout = await loadCheckout(root);
  let queue = Promise.resolve();
  process.on('message', (message: unknown) => {
    const request = WorkerRequestSchema.safeParse(message);
    if (!request.success) return;
    const { id, spec } = request.data;
    queue = queue.then(async () => {
      try {
        reply({ id, result: await runSpec(checkout, meter, spec) });
      } catch (error) {
        reply({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      }
    });
  });
  process.on('disconnect', () => process.exit(0));
  reply({ ready: true });
}

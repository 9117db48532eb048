/**
 * The scale model (`npm run bench -- --model`): the calls per event the bench counted, multiplied
 * out to a deployment's traffic and set beside each service's documented quota, to show which
 * quota binds first and what a user raises or adds. Pure arithmetic on a {@link Usage}.
 */
import { consumerMsPerInvocation, costPerMillion, DEFAULT_COST_ASSUMPTIONS, fixedMonthlyCost, ingestMsPerInvocation, type CostAssumptions } from './cost.js';
import { QUOTAS, SECONDS_PER_MONTH, type Sourced } from './prices.js';
import { isPerEventCall, type Usage } from './usage.js';

/** The traffic the model is computed for. */
export interface Traffic {
  readonly activeKeys: number;
  readonly eventsPerSecond: number;
  readonly peakEventsPerSecond: number;
  readonly eventsPerRequest: number;
}

/** The traffic of the worked scale model (docs/performance.md#past-one-machine-a-worked-scale-model). */
export const DEFAULT_TRAFFIC: Traffic = { activeKeys: 100_000, eventsPerSecond: 10_000, peakEventsPerSecond: 50_000, eventsPerRequest: 10 };

/** One demand beside the quota it runs into. */
export interface QuotaRow {
  readonly service: string;
  readonly demand: string;
  readonly steady: number;
  readonly peak: number;
  readonly quota: number;
  readonly source: string;
  /** Peak demand over quota: 1 or more is throttled. */
  readonly peakUtilisation: number;
  /** What a user raises or adds when this binds. */
  readonly remedy: string;
}

/** The model's result: every demand beside its quota, the binding one, and the monthly cost. */
export interface ScaleModel {
  readonly traffic: Traffic;
  readonly rows: readonly QuotaRow[];
  /** The row with the highest peak utilisation. */
  readonly bindsFirst: QuotaRow | undefined;
  readonly monthlyUsd: { readonly perEvent: number; readonly fixed: number; readonly total: number };
}

const REMEDY = {
  api: 'raise the account throttle (Service Quotas, API Gateway "Throttle rate"), or send more events per request (up to 100)',
  sqs: 'add delivery queues, each ordering key always kept to one of them (a hash of the key), each with its own event source mapping',
  esm: 'raise CONSUMER_CONCURRENCY (at most 1000 per mapping); beyond that, several queues, each key kept to one, each mapping ≤ 1000',
  lambda: 'ask for a higher account concurrency (Service Quotas, Lambda "Concurrent executions")',
  table: "raise the table's on-demand throughput quota (Service Quotas, DynamoDB), or make fewer writes per event",
  partition: 'spread the hot item: more shards for a shared item, or cache a read-mostly one',
} as const;

function row(service: string, demand: string, perEvent: number, traffic: Traffic, quota: Sourced, remedy: string): QuotaRow {
  const steady = perEvent * traffic.eventsPerSecond;
  const peak = perEvent * traffic.peakEventsPerSecond;
  return { service, demand, steady, peak, quota: quota.value, source: quota.source, peakUtilisation: peak / quota.value, remedy };
}

/**
 * The model. `indexPartitions` is how many partition-key values an index spreads its writes over
 * (the lag shards), so that one index partition's share of the index writes is known.
 */
export function scaleModel(usage: Usage, traffic: Traffic = DEFAULT_TRAFFIC, indexPartitions = 1, assumptions: CostAssumptions = DEFAULT_COST_ASSUMPTIONS): ScaleModel {
  const events = Math.max(usage.events, 1);
  const rows: QuotaRow[] = [];
  // The bench's scenario sent `events / httpRequests` events per request; the model sends traffic.eventsPerRequest.
  rows.push(row('API Gateway', 'HTTP API requests/s (account)', 1 / traffic.eventsPerRequest, traffic, QUOTAS.apiGatewayAccountRps, REMEDY.api));

  const sqsByOperation = new Map<string, number>();
  for (const call of usage.calls.filter((c) => c.service === 'SQS' && isPerEventCall(c))) sqsByOperation.set(call.operation, (sqsByOperation.get(call.operation) ?? 0) + call.calls);
  for (const [operation, calls] of [...sqsByOperation].sort()) {
    rows.push(row('SQS FIFO', `${operation}/s (one queue, high throughput)`, calls / events, traffic, QUOTAS.sqsFifoHighThroughputTpsPerAction, REMEDY.sqs));
  }

  // Little's law: concurrency = invocations per second × seconds per invocation.
  const consumerConcurrencyPerEvent = (usage.consumerInvocations / events) * (consumerMsPerInvocation(usage, assumptions) / 1000);
  const ingestConcurrencyPerEvent = (1 / traffic.eventsPerRequest) * (ingestMsPerInvocation(usage, assumptions) / 1000);
  rows.push(row('Lambda', 'consumer concurrency (maximumConcurrency)', consumerConcurrencyPerEvent, traffic, QUOTAS.esmMaximumConcurrency, REMEDY.esm));
  rows.push(row('Lambda', 'concurrent executions, all functions (account)', consumerConcurrencyPerEvent + ingestConcurrencyPerEvent, traffic, QUOTAS.lambdaAccountConcurrency, REMEDY.lambda));

  const tables = [...new Set(usage.calls.filter((c) => c.service === 'DynamoDB' && c.table !== '' && c.caller !== 'lagJob').map((c) => c.table))].sort();
  for (const table of tables) {
    const onTable = usage.calls.filter((c) => c.table === table && c.caller !== 'lagJob');
    const writes = onTable.reduce((sum, c) => sum + c.writeUnits + c.indexWriteUnits, 0) / events;
    const reads = onTable.reduce((sum, c) => sum + c.readUnits, 0) / events;
    if (writes > 0) rows.push(row('DynamoDB', `${table} write units/s (table)`, writes, traffic, QUOTAS.dynamoTableWriteUnitsPerSecond, REMEDY.table));
    if (reads > 0) rows.push(row('DynamoDB', `${table} read units/s (table)`, reads, traffic, QUOTAS.dynamoTableReadUnitsPerSecond, REMEDY.table));
    const indexWrites = onTable.reduce((sum, c) => sum + c.indexWriteUnits, 0) / events;
    if (indexWrites > 0) {
      rows.push(row('DynamoDB', `${table} index writes/s, one index partition of ${indexPartitions}`, indexWrites / indexPartitions, traffic, QUOTAS.dynamoPartitionWriteUnitsPerSecond, REMEDY.partition));
    }
  }
  for (const hot of usage.hotItems) {
    // An item touched for fewer distinct items than half the keys is shared by keys: it takes the whole rate.
    const isShared = hot.distinctItems < usage.keys / 2;
    const share = 1;
    const what = 'shared item';
    // One key's item at 1/activeKeys of the traffic is far from any quota: only shared items get a row.
    if (!isShared) continue;
    if (hot.writeUnitsPerEvent > 0) {
      rows.push(row('DynamoDB', `${hot.table} writes/s on the busiest partition (${what})`, hot.writeUnitsPerEvent * share, traffic, QUOTAS.dynamoPartitionWriteUnitsPerSecond, REMEDY.partition));
    }
    if (hot.readUnitsPerEvent > 0) {
      rows.push(row('DynamoDB', `${hot.table} reads/s on the busiest partition (${what})`, hot.readUnitsPerEvent * share, traffic, QUOTAS.dynamoPartitionReadUnitsPerSecond, REMEDY.partition));
    }
  }

  const bindsFirst = [...rows].sort((a, b) => b.peakUtilisation - a.peakUtilisation)[0];
  const perEvent = (costPerMillion(usage, assumptions).totalUsdPerMillion / 1e6) * traffic.eventsPerSecond * SECONDS_PER_MONTH;
  const fixed = fixedMonthlyCost(usage, assumptions).reduce((sum, line) => sum + line.usdPerMonth, 0);
  return { traffic, rows, bindsFirst, monthlyUsd: { perEvent, fixed, total: perEvent + fixed } };
}

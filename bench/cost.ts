/**
 * Cost per million events at list prices, from the calls a scenario counted: pure arithmetic on a
 * {@link Usage}, so that the same figures come out of a bench run and of a test. What the local
 * stack cannot measure (Lambda durations on AWS, the JSON form of log lines) comes from
 * {@link ESTIMATES}, stated beside the table.
 */
import { ESTIMATES, PRICES, SECONDS_PER_MONTH } from './prices.js';
import { totalPerEvent, type Usage } from './usage.js';

/** Assumptions of a cost estimate besides the counted calls. */
export interface CostAssumptions {
  /** How long the receiver takes to answer, ms (the cost goals' case: 100). */
  readonly receiverMs: number;
  readonly functionMemoryMb: number;
  readonly awsCallMs: number;
}

/** The cost goals' case (docs/performance.md#todays-figures): a receiver answering in 100 ms, the functions' memory, same-Region calls. */
export const DEFAULT_COST_ASSUMPTIONS: CostAssumptions = {
  receiverMs: 100,
  functionMemoryMb: ESTIMATES.functionMemoryMb,
  awsCallMs: ESTIMATES.awsCallMs,
};

/** One line of the cost table: USD per million delivered events. */
export interface CostLine {
  readonly item: string;
  readonly usdPerMillion: number;
  /** What it was computed from, per event. */
  readonly basis: string;
}

/** The cost table of one scenario, with the duration estimates it used. */
export interface CostPerMillion {
  readonly lines: readonly CostLine[];
  readonly totalUsdPerMillion: number;
  readonly eventBridgeUsdPerMillion: number;
  /** Billed duration estimates, ms per invocation. */
  readonly ingestMsPerInvocation: number;
  readonly consumerMsPerInvocation: number;
}

const MILLION = 1e6;
const GB = 1024 ** 3;

const round = (value: number, digits = 3): string => value.toFixed(digits);

/** Lambda cost of `invocationsPerEvent` invocations lasting `ms` each, per event. */
export function lambdaCostPerEvent(invocationsPerEvent: number, ms: number, memoryMb: number): number {
  const gbSeconds = (memoryMb / 1024) * (ms / 1000);
  return invocationsPerEvent * (PRICES.lambdaPerRequest.value + gbSeconds * PRICES.lambdaArmPerGbSecond.value);
}

/** Billed ms of one ingest invocation: its own work plus its calls, one after another. */
export function ingestMsPerInvocation(usage: Usage, assumptions: CostAssumptions): number {
  const requests = Math.max(usage.httpRequests, 1);
  const calls = totalPerEvent(usage, (call) => call.caller === 'ingest').calls * usage.events;
  return ESTIMATES.ingestBaseMs + (calls / requests) * assumptions.awsCallMs;
}

/**
 * Billed ms of one consumer invocation: its groups run concurrently, each group's events one after
 * another, each taking the receiver's answer plus the consumer's own calls for one event.
 */
export function consumerMsPerInvocation(usage: Usage, assumptions: CostAssumptions): number {
  const callsPerEvent = totalPerEvent(usage, (call) => call.caller === 'consumer').calls;
  return usage.meanLongestGroupRun * (assumptions.receiverMs + callsPerEvent * assumptions.awsCallMs);
}

/** Bytes of CloudWatch Logs ingested per event: the lines counted, as JSON, plus Lambda's and EMF's own. */
export function logBytesPerEvent(usage: Usage): number {
  const events = Math.max(usage.events, 1);
  const callers = ['ingest', 'consumer'];
  const bytes = callers.reduce((sum, caller) => sum + (usage.logBytes[caller] ?? 0), 0);
  const lines = callers.reduce((sum, caller) => sum + (usage.logLines[caller] ?? 0), 0);
  const invocations = usage.httpRequests + usage.consumerInvocations;
  return (
    (bytes +
      lines * ESTIMATES.jsonLogOverheadBytes +
      invocations * ESTIMATES.platformLogBytesPerInvocation +
      usage.consumerInvocations * ESTIMATES.consumerEmfBytesPerInvocation) /
    events
  );
}

/** Cost per million delivered events of a scenario's counted calls. */
export function costPerMillion(usage: Usage, assumptions: CostAssumptions = DEFAULT_COST_ASSUMPTIONS): CostPerMillion {
  const events = Math.max(usage.events, 1);
  const requestsPerEvent = usage.httpRequests / events;
  const consumerInvocationsPerEvent = usage.consumerInvocations / events;
  const ingestMs = ingestMsPerInvocation(usage, assumptions);
  const consumerMs = consumerMsPerInvocation(usage, assumptions);
  const sqs = totalPerEvent(usage, (call) => call.service === 'SQS');
  const dynamo = totalPerEvent(usage, (call) => call.service === 'DynamoDB' && call.caller !== 'lagJob');
  const logBytes = logBytesPerEvent(usage);

  const lines: CostLine[] = [
    {
      item: 'API Gateway HTTP API',
      usdPerMillion: requestsPerEvent * PRICES.httpApiPerRequest.value * MILLION,
      basis: `${round(requestsPerEvent)} requests/event`,
    },
    {
      item: 'Lambda ingest (arm64)',
      usdPerMillion: lambdaCostPerEvent(requestsPerEvent, ingestMs, assumptions.functionMemoryMb) * MILLION,
      basis: `${round(requestsPerEvent)} invocations/event × ${Math.round(ingestMs)} ms × ${assumptions.functionMemoryMb} MB`,
    },
    {
      item: 'Lambda consumer (arm64)',
      usdPerMillion: lambdaCostPerEvent(consumerInvocationsPerEvent, consumerMs, assumptions.functionMemoryMb) * MILLION,
      basis: `${round(consumerInvocationsPerEvent)} invocations/event × ${Math.round(consumerMs)} ms × ${assumptions.functionMemoryMb} MB`,
    },
    {
      item: 'SQS FIFO',
      usdPerMillion: sqs.billedRequests * PRICES.sqsFifoPerRequest.value * MILLION,
      basis: `${round(sqs.billedRequests)} requests/event (ingest, consumer, poller)`,
    },
    {
      item: 'DynamoDB writes (on demand)',
      usdPerMillion: dynamo.writeUnits * PRICES.dynamoPerWriteUnit.value * MILLION,
      basis: `${round(dynamo.writeUnits)} WRU/event incl. index replication`,
    },
    {
      item: 'DynamoDB reads (on demand)',
      usdPerMillion: dynamo.readUnits * PRICES.dynamoPerReadUnit.value * MILLION,
      basis: `${round(dynamo.readUnits)} RRU/event`,
    },
    {
      item: 'CloudWatch Logs (incl. EMF)',
      usdPerMillion: (logBytes / GB) * PRICES.logsPerGbIngested.value * MILLION,
      basis: `${Math.round(logBytes)} bytes/event`,
    },
  ];
  return {
    lines,
    totalUsdPerMillion: lines.reduce((sum, line) => sum + line.usdPerMillion, 0),
    eventBridgeUsdPerMillion: PRICES.eventBridgePerMillionEvents.value,
    ingestMsPerInvocation: ingestMs,
    consumerMsPerInvocation: consumerMs,
  };
}

/** A fixed monthly cost, whatever the traffic. */
export interface FixedCostLine {
  readonly item: string;
  readonly usdPerMonth: number;
  readonly basis: string;
}

/** What the stack costs a month with no events: alarms, metrics, the dashboard, idle polling and the lag job. */
export function fixedMonthlyCost(usage: Usage, assumptions: CostAssumptions = DEFAULT_COST_ASSUMPTIONS): FixedCostLine[] {
  const idlePolls = ESTIMATES.idlePollers * (SECONDS_PER_MONTH / 20);
  const lagCalls = usage.lagJob?.calls ?? [];
  const lagReadUnits = lagCalls.reduce((sum, call) => sum + call.readUnits, 0);
  const lagCallCount = lagCalls.reduce((sum, call) => sum + call.calls, 0);
  const lagMs = ESTIMATES.ingestBaseMs + lagCallCount * assumptions.awsCallMs;
  const runs = ESTIMATES.lagJobRunsPerMonth;
  return [
    { item: 'CloudWatch alarms', usdPerMonth: ESTIMATES.alarms * PRICES.alarmPerMonth.value, basis: `${ESTIMATES.alarms} alarms` },
    { item: 'CloudWatch custom metrics', usdPerMonth: ESTIMATES.customMetrics * PRICES.customMetricPerMonth.value, basis: `${ESTIMATES.customMetrics} metrics` },
    { item: 'CloudWatch dashboard', usdPerMonth: ESTIMATES.dashboards * PRICES.dashboardPerMonth.value, basis: `${ESTIMATES.dashboards} dashboard` },
    {
      item: 'SQS idle long polls',
      usdPerMonth: idlePolls * PRICES.sqsFifoPerRequest.value,
      basis: `${ESTIMATES.idlePollers} pollers × one 20 s receive each`,
    },
    {
      item: 'Lag job (Lambda + DynamoDB reads)',
      usdPerMonth: runs * (lambdaCostPerEvent(1, lagMs, assumptions.functionMemoryMb) + lagReadUnits * PRICES.dynamoPerReadUnit.value),
      basis: `${runs} runs × ${lagCallCount} calls, ${lagReadUnits} RRU (${usage.lagJob?.activeGroups ?? 0} active groups)`,
    },
  ];
}

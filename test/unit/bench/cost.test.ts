import { describe, expect, it } from 'vitest';
import { consumerMsPerInvocation, costPerMillion, fixedMonthlyCost, ingestMsPerInvocation, lambdaCostPerEvent, logBytesPerEvent } from '../../../bench/cost.js';
import { perEvent, totalPerEvent } from '../../../bench/usage.js';
import { SPARSE_USAGE } from './fixture.js';

const assumptions = { receiverMs: 100, functionMemoryMb: 256, awsCallMs: 6 };

describe('totalPerEvent', () => {
  it('sums calls, units and billed requests per delivered event, leaving out idle polling', () => {
    expect(totalPerEvent(SPARSE_USAGE)).toEqual({ calls: 3.3, readUnits: 1, writeUnits: 4, billedRequests: 0.3 });
  });

  it('keeps only the calls matching the filter when one is given', () => {
    expect(totalPerEvent(SPARSE_USAGE, (call) => call.caller === 'consumer').calls).toBe(2);
  });
});

describe('perEvent', () => {
  it('gives one row per caller, service and operation with index writes in the write units', () => {
    const groups = perEvent(SPARSE_USAGE).find((row) => row.caller === 'consumer' && row.operation === 'UpdateItem');
    expect(groups).toEqual({ caller: 'consumer', service: 'DynamoDB', operation: 'UpdateItem', callsPerEvent: 1, readUnitsPerEvent: 0, writeUnitsPerEvent: 2 });
  });
});

describe('Lambda duration estimates', () => {
  it('bills ingest its own time plus its calls one after another', () => {
    // 110 calls over 10 requests: 11 calls × 6 ms + 5 ms.
    expect(ingestMsPerInvocation(SPARSE_USAGE, assumptions)).toBeCloseTo(71, 9);
  });

  it('bills the consumer the receiver and its calls for each event of its longest group', () => {
    expect(consumerMsPerInvocation(SPARSE_USAGE, assumptions)).toBeCloseTo(112, 9);
    expect(consumerMsPerInvocation({ ...SPARSE_USAGE, meanLongestGroupRun: 10 }, assumptions)).toBeCloseTo(1120, 9);
  });

  it.each([
    [1, 1000, 1024, 0.2e-6 + 0.0000133334],
    [0.1, 100, 256, 0.1 * (0.2e-6 + 0.25 * 0.1 * 0.0000133334)],
  ])('prices %s invocations per event of %s ms at %s MB', (invocations, ms, memoryMb, usd) => {
    expect(lambdaCostPerEvent(invocations, ms, memoryMb)).toBeCloseTo(usd, 15);
  });
});

describe('costPerMillion', () => {
  const cost = costPerMillion(SPARSE_USAGE, assumptions);
  const line = (item: string): number | undefined => cost.lines.find((entry) => entry.item === item)?.usdPerMillion;

  it.each<[string, number]>([
    ['API Gateway HTTP API', 0.1],
    ['SQS FIFO', 0.15],
    ['DynamoDB writes (on demand)', 2.5],
    ['DynamoDB reads (on demand)', 0.125],
    ['Lambda ingest (arm64)', 0.1 * (0.2 + 0.25 * 0.071 * 13.3334)],
    ['Lambda consumer (arm64)', 0.1 * (0.2 + 0.25 * 0.112 * 13.3334)],
    ['CloudWatch Logs (incl. EMF)', (246 / 1024 ** 3) * 0.5 * 1e6],
  ])('prices %s from the counted calls', (item, usd) => {
    expect(line(item)).toBeCloseTo(usd, 9);
  });

  it('totals the lines and sets EventBridge beside them', () => {
    expect(cost.totalUsdPerMillion).toBeCloseTo(cost.lines.reduce((sum, entry) => sum + entry.usdPerMillion, 0), 12);
    expect(cost.eventBridgeUsdPerMillion).toBe(1.2);
  });

  it('counts log lines of ingest and the consumer as JSON, with platform lines and EMF per invocation', () => {
    // 5,000 bytes + 30 lines × 220 + 20 invocations × 350 + 10 consumer invocations × 600, over 100 events.
    expect(logBytesPerEvent(SPARSE_USAGE)).toBe(246);
  });
});

describe('fixedMonthlyCost', () => {
  it('prices alarms, metrics, the dashboard, idle polls and the lag job by the month', () => {
    const lines = fixedMonthlyCost(SPARSE_USAGE, assumptions);
    const of = (item: string): number | undefined => lines.find((entry) => entry.item === item)?.usdPerMonth;
    expect(of('CloudWatch alarms')).toBeCloseTo(1.0, 9);
    expect(of('CloudWatch custom metrics')).toBeCloseTo(3.0, 9);
    expect(of('CloudWatch dashboard')).toBe(3);
    // 5 pollers, a 20 s receive each, for 30 days.
    expect(of('SQS idle long polls')).toBeCloseTo(5 * 129_600 * 0.5e-6, 9);
    // 43,200 runs of 16 calls (5 + 96 ms) and 8 read units.
    expect(of('Lag job (Lambda + DynamoDB reads)')).toBeCloseTo(43_200 * (0.2e-6 + 0.25 * 0.101 * 0.0000133334 + 8 * 0.125e-6), 9);
  });
});

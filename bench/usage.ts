/**
 * What one benchmark scenario counted, in a form that crosses the process boundary (the worker
 * sends it to the bench over IPC as JSON): zod schemas, so that the receiving side parses instead
 * of trusting, and the per-event arithmetic on them.
 */
import * as z from 'zod';

/** The operation the poller's receives that return nothing are counted under: they follow idle time, not events. */
export const EMPTY_RECEIVE = 'ReceiveMessage (empty)';

/** Whether a call is billed per event (the idle poller's empty receives are a fixed monthly cost). */
export const isPerEventCall = (call: { readonly operation: string }): boolean => call.operation !== EMPTY_RECEIVE;

/** Who made a call: the function it would run in on AWS, or Lambda's poller. */
export const CallerSchema = z.enum(['ingest', 'consumer', 'poller', 'lagJob', 'subscriptions', 'operations']);
export type Caller = z.infer<typeof CallerSchema>;

/** The calls of one caller to one operation (on one table, for DynamoDB), with what AWS would bill. */
export const CallCountSchema = z.object({
  caller: CallerSchema,
  service: z.string(),
  operation: z.string(),
  /** DynamoDB table (local name) or '' for other services. */
  table: z.string(),
  calls: z.number(),
  /** SQS: requests billed, one per 64 KB chunk of payload; 0 elsewhere. */
  billedRequests: z.number(),
  readUnits: z.number(),
  /** Units written to the table itself. */
  writeUnits: z.number(),
  /** Units the table's global secondary indexes add. */
  indexWriteUnits: z.number(),
});
export type CallCount = z.infer<typeof CallCountSchema>;

/** The busiest item of a table in a scenario, for the per-partition rows of the scale model. */
export const HotItemSchema = z.object({
  table: z.string(),
  /** Distinct items of the table the scenario touched. */
  distinctItems: z.number(),
  /** Read and write units the busiest item took, per delivered event. */
  readUnitsPerEvent: z.number(),
  writeUnitsPerEvent: z.number(),
});
export type HotItem = z.infer<typeof HotItemSchema>;

/** Everything a usage scenario counted. */
export const UsageSchema = z.object({
  /** Ordering keys in the scenario. */
  keys: z.number(),
  /** Events the receiver accepted (each once; duplicates are counted apart). */
  events: z.number(),
  httpRequests: z.number(),
  /** Consumer invocations: the poller's receives that returned messages. */
  consumerInvocations: z.number(),
  /** Mean over invocations of the longest run of one group's messages: groups run concurrently. */
  meanLongestGroupRun: z.number(),
  calls: z.array(CallCountSchema),
  hotItems: z.array(HotItemSchema),
  /** Bytes and lines of log output by caller, as the local stack prints them. */
  logBytes: z.record(z.string(), z.number()),
  logLines: z.record(z.string(), z.number()),
  /** One run of the lag job during the scenario, with the groups that were active then. */
  lagJob: z.object({ calls: z.array(CallCountSchema), activeGroups: z.number() }).optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** A caller's calls, per delivered event, by service and operation. */
export interface PerEvent {
  readonly caller: Caller;
  readonly service: string;
  readonly operation: string;
  readonly callsPerEvent: number;
  readonly readUnitsPerEvent: number;
  readonly writeUnitsPerEvent: number;
}

/** Sums calls over tables: one row per caller, service and operation, per delivered event. */
export function perEvent(usage: Usage): PerEvent[] {
  const rows = new Map<string, { caller: Caller; service: string; operation: string; calls: number; read: number; write: number }>();
  for (const call of usage.calls) {
    const key = `${call.caller}|${call.service}|${call.operation}`;
    const row = rows.get(key) ?? { caller: call.caller, service: call.service, operation: call.operation, calls: 0, read: 0, write: 0 };
    row.calls += call.calls;
    row.read += call.readUnits;
    row.write += call.writeUnits + call.indexWriteUnits;
    rows.set(key, row);
  }
  const events = Math.max(usage.events, 1);
  return [...rows.values()]
    .map((row) => ({
      caller: row.caller,
      service: row.service,
      operation: row.operation,
      callsPerEvent: row.calls / events,
      readUnitsPerEvent: row.read / events,
      writeUnitsPerEvent: row.write / events,
    }))
    .sort((a, b) => a.caller.localeCompare(b.caller) || a.service.localeCompare(b.service) || a.operation.localeCompare(b.operation));
}

/** Totals per delivered event of the calls matching `where`. */
export function totalPerEvent(usage: Usage, where: (call: CallCount) => boolean = () => true): { calls: number; readUnits: number; writeUnits: number; billedRequests: number } {
  const events = Math.max(usage.events, 1);
  const matching = usage.calls.filter((call) => isPerEventCall(call) && where(call));
  const sum = (pick: (call: CallCount) => number): number => matching.reduce((total, call) => total + pick(call), 0) / events;
  return {
    calls: sum((call) => call.calls),
    readUnits: sum((call) => call.readUnits),
    writeUnits: sum((call) => call.writeUnits + call.indexWriteUnits),
    billedRequests: sum((call) => call.billedRequests),
  };
}

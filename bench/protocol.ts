/**
 * What the bench asks a worker to run, and what the worker answers, as zod schemas: both cross a
 * process boundary as JSON (node's IPC channel), so the receiving side parses them.
 */
import * as z from 'zod';
import { UsageSchema } from './usage.js';

/** How the producers shape their requests. */
export const TrafficShape = {
  /** Each producer owns some keys and sends their events round robin, `eventsPerRequest` at a time. */
  interleaved: 'interleaved',
  /** Each request carries `eventsPerRequest` consecutive events of one key (busy keys: SQS batches of one group). */
  perKey: 'perKey',
  /** Each request carries one event of each of `eventsPerRequest` keys, and the next waits until they are delivered. */
  sparse: 'sparse',
} as const;

/** One run: the stack's settings, the keys and the traffic. */
export const RunSpecSchema = z.object({
  /** Healthy ordering keys. */
  keys: z.number().int().min(1),
  /** Keys whose receiver always answers 500, beside the healthy ones. */
  poisonKeys: z.number().int().min(0),
  /** CONSUMER_CONCURRENCY. */
  concurrency: z.number().int().min(2),
  /** How long the receiver takes to answer. */
  latencyMs: z.number().min(0),
  eventsPerKey: z.number().int().min(1),
  eventsPerRequest: z.number().int().min(1).max(100),
  shape: z.enum(TrafficShape),
  /** Whether to measure write and read units (extra reads around each write: slower). */
  measureUnits: z.boolean(),
  /** Whether to run the lag job once, after the events are accepted. */
  runLagJob: z.boolean(),
  /** Environment of the local stack (docs/api.md#the-local-stack, docs/configuration.md) on top of the defaults, e.g. shortened retries. */
  environment: z.record(z.string(), z.string()),
  /** Payload bytes of each event (the cost and speed goals: 1 KB). */
  payloadBytes: z.number().int().min(0),
  /** Give up waiting for the deliveries after this long. */
  deadlineSeconds: z.number().positive(),
  /** Each subscription's `batch_size` (docs/api.md#batches); 1, the default, is the webhook of one event (docs/api.md#what-a-receiver-gets). */
  batchSize: z.number().int().min(1).max(10).default(1),
  /**
   * Fan-out by event type: every key is a subscription of one tenant, and each event names the tenant
   * and no subscription, so that it goes to all of them; `eventsPerKey` events in all, each
   * delivered `keys` times. False, the default: each event names its key's subscription.
   */
  isFanOut: z.boolean().default(false),
});
export type RunSpec = z.input<typeof RunSpecSchema>;

/** What one run measured. */
export const RunResultSchema = z.object({
  /** From the first request to the last healthy event accepted by the receiver. */
  seconds: z.number(),
  /** Healthy events accepted in order. */
  delivered: z.number(),
  expected: z.number(),
  eventsPerSecond: z.number(),
  orderViolations: z.number(),
  duplicates: z.number(),
  /** Attempts the receiver refused (poison keys). */
  refused: z.number(),
  timedOut: z.boolean(),
  usage: UsageSchema,
  warnings: z.array(z.string()),
  /** Set when the run could not be carried out (e.g. a baseline whose stack refuses the spec); its figures are zero. */
  error: z.string().optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;

/** Bench → worker. */
export const WorkerRequestSchema = z.object({ id: z.number(), spec: RunSpecSchema });
export type WorkerRequest = z.infer<typeof WorkerRequestSchema>;

/** Worker → bench. */
export const WorkerResponseSchema = z.union([
  z.object({ id: z.number(), result: RunResultSchema }),
  z.object({ id: z.number(), error: z.string() }),
  z.object({ ready: z.literal(true) }),
]);
export type WorkerResponse = z.infer<typeof WorkerResponseSchema>;

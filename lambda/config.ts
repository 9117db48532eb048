/**
 * The one typed configuration, shared by the CDK stack, the Lambda handlers and the local stack.
 * This is the only module that reads `process.env` (callers pass it in); every default is written
 * here, once, next to its variable.
 */
import * as z from 'zod';
import { CONSUMER_METRICS } from './core/consumer-metrics.js';
import { LAG_METRICS } from './core/lag.js';
import { MAX_EVENTS_PER_MESSAGE } from './core/limits.js';
import { OnExhausted } from './core/retry-policy.js';
import { FIFO_QUEUE_SETTINGS, RESOURCE_ENV_VARS, type ResourceNames } from './resources.js';
import type { HANDLER_ENTRIES } from './routes.js';

/** Where the configuration is used: the defaults of a few variables differ (docs/configuration.md#deployment-settings). */
export const Deployment = { local: 'local', deployed: 'deployed' } as const;
export type Deployment = (typeof Deployment)[keyof typeof Deployment];

/** Lambda's SQS event source mapping hands a FIFO consumer at most 10 records per batch. */
export const CONSUMER_BATCH_SIZE = 10;

/**
 * SQS visibility timeouts range from 0 s to 12 h; a backoff is a visibility timeout. The 12 hours
 * count from the receive: a ChangeMessageVisibility that would end later is refused
 * (`InvalidParameterValue`) and changes nothing. See `visibilityCeilingSeconds`.
 */
export const MAX_VISIBILITY_SECONDS = 43_200;

/** API Gateway (HTTP API) gives an integration at most 30 s. */
export const API_INTEGRATION_TIMEOUT_SECONDS = 30;

/**
 * How long one redrive step may go on receiving and enqueueing before it answers; the operations
 * function's timeout leaves room after it for the batch in hand and the answer.
 */
export const REDRIVE_STEP_SECONDS = 20;

/** The operations function's timeout: under API Gateway's limit, above a redrive step. */
export const OPERATIONS_TIMEOUT_SECONDS = API_INTEGRATION_TIMEOUT_SECONDS - 1;

/** SQS's largest `maxReceiveCount` in a redrive policy. */
const SQS_MAX_RECEIVE_COUNT = 1000;

/** Lambda's hard ceiling on a function's timeout. */
const MAX_LAMBDA_TIMEOUT_SECONDS = 900;

/** Validated settings. Units live in the names. */
export interface Config {
  /** HTTP port of the local stack on 127.0.0.1. */
  readonly port: number;
  /** Real delivery attempts before an event is dead-lettered (or, with `onExhausted: stall`, held). */
  readonly maxDeliveryAttempts: number;
  /** What happens to an event that used all its attempts. */
  readonly onExhausted: OnExhausted;
  /**
   * Set: a subscription is paused instead of giving up a head once its key has been failing this
   * long (the automatic pause); unset: never.
   */
  readonly autoPauseAfterSeconds: number | undefined;
  /** Lower bound of every retry delay; 0 allowed. */
  readonly retryBaseSeconds: number;
  /** Upper bound of every retry delay, `Retry-After` included. */
  readonly retryMaxSeconds: number;
  /** Time allowed for one attempt: connect, send, and the receiver's status line. */
  readonly deliveryTimeoutMs: number;
  /** Unset: one message group per ordering key. Set: `partition-<p>` groups, p < partitionCount. */
  readonly partitionCount: number | undefined;
  /** Concurrent consumer invocations (the event source mapping's maximum concurrency). */
  readonly consumerConcurrency: number;
  /** Whether endpoint URLs may resolve to private, loopback, link-local or metadata addresses. */
  readonly allowPrivateEndpoints: boolean;
  /** Local stack only: where state is kept across restarts; unset keeps it in memory. */
  readonly dataDir: string | undefined;
  /** Alarm threshold on the queue's oldest message age. */
  readonly oldestMessageAlarmSeconds: number;
  /** A group whose head has been failing for longer than this is stalled. */
  readonly stallThresholdSeconds: number;
  /** Alarm threshold on the longest a pending event of any group has waited. */
  readonly maxGroupWaitAlarmSeconds: number;
  /** Alarm when at least this many groups are stalled. */
  readonly stalledGroupsAlarmThreshold: number;
  /** Warn (alarm, lag job's log) when a held group's oldest event has waited this long: SQS drops it at 14 days. */
  readonly heldAgeAlarmSeconds: number;
  /**
   * `store`: a held group whose oldest event has waited `heldAgeAlarmSeconds` is parked, moved out
   * of the queue into the store of dead letters in order, and resume sends it back first
   * (`core/park.ts`); `none` (the default): it stays held in the queue, warned about.
   */
  readonly pauseEvacuation: PauseEvacuation;
  /** Alarm when the delivery queue holds this many visible messages: SQS FIFO looks for groups among the first 120,000. */
  readonly queueBacklogAlarmMessages: number;
  /**
   * A key whose oldest pending event has waited longer than this while it accepts at least as
   * fast as it delivers is falling behind (lag view, lag job, alarm): a whale.
   */
  readonly fallingBehindWaitSeconds: number;
  /** Deployed only: e-mail address subscribed to the alarms' topic; unset means no subscription. */
  readonly alarmEmail: string | undefined;
  /** Days an event's idempotency and delivery record is kept (DynamoDB TTL). */
  readonly deliveryStateTtlDays: number;
  /** Days each accepted event's body is kept for a replay (DynamoDB TTL); 0: none is kept, no replay. */
  readonly eventRetentionDays: number;
  /**
   * Until this time (ISO 8601), ingest also finds events recorded before event ids were scoped per
   * tenant and destination, under their producer's id alone, so that a resend of one is still a
   * duplicate: set it when upgrading a stack from before, to the upgrade's time plus
   * DELIVERY_STATE_TTL_DAYS. Unset: not looked up (one read unit less per event).
   */
  readonly legacyEventIdsUntil: string | undefined;
  /** Powertools Logger level. */
  readonly logLevel: LogLevel;
}

/**
 * Each function's Powertools service name: the `service` key of every log line it writes, in
 * Lambda and in the local stack alike. Written once, here: the handlers' loggers, the local stack
 * and the CDK stack's `POWERTOOLS_SERVICE_NAME` all read it, so the variable never names a service
 * the logs do not. The consumer and the lag job share theirs with the `service` dimension of the
 * metrics they publish, which their alarms watch.
 */
export const SERVICE_NAMES = {
  ingest: 'ingest',
  subscriptions: 'subscriptions',
  consumer: CONSUMER_METRICS.service,
  operations: 'operations',
  lagMetrics: LAG_METRICS.service,
} as const satisfies Record<keyof typeof HANDLER_ENTRIES, string>;

/** A function of the project, by its name in HANDLER_ENTRIES. */
export type FunctionName = keyof typeof SERVICE_NAMES;

/** What becomes of a group held for a pause that has lasted `HELD_AGE_ALARM_SECONDS` (see `Config.pauseEvacuation`). */
export const PauseEvacuation = { none: 'none', store: 'store' } as const;
export type PauseEvacuation = (typeof PauseEvacuation)[keyof typeof PauseEvacuation];

/** The latest a held group may be parked: an hour before SQS's 14 days of retention. */
const MAX_PARK_AFTER_SECONDS = 1_209_600 - 3_600;

export const LogLevel = { DEBUG: 'DEBUG', INFO: 'INFO', WARN: 'WARN', ERROR: 'ERROR', SILENT: 'SILENT' } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

/** A configuration value was refused; the message names every offending variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/**
 * Days an event's record must be kept at the least: its messages live up to SQS's 14 days in the
 * queue and 14 more in the FIFO dead-letter queue (restarted on the move), counted from the send;
 * the record's days count from acceptance, stamped before the send on ingest's clock. A day more
 * than 14 + 14 covers the request between the two and any clock difference.
 */
export const MIN_DELIVERY_STATE_TTL_DAYS = 2 * (FIFO_QUEUE_SETTINGS.retentionSeconds / 86_400) + 1;

const integer = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, `must be an integer between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const boolean = z
  .string()
  .trim()
  .toLowerCase()
  .refine((value) => value === 'true' || value === 'false', 'must be true or false')
  .transform((value) => value === 'true');

const nonEmpty = z.string().trim().min(1, 'must not be empty');

/** Every variable of the local stack and the deploy-time ones (docs/configuration.md), each with its one default. */
const environmentSchema = (deployment: Deployment) =>
  z
    .object({
      PORT: integer(1, 65_535).default(3000),
      MAX_DELIVERY_ATTEMPTS: integer(1, 100).default(5),
      ON_EXHAUSTED: z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(OnExhausted, `must be one of ${Object.values(OnExhausted).join(', ')}`))
        .default(OnExhausted.deadLetter),
      // Up to SQS's 14 days of retention: a key failing longer has lost messages already.
      AUTO_PAUSE_AFTER_SECONDS: integer(1, 1_209_600).optional(),
      RETRY_BASE_SECONDS: integer(0, MAX_VISIBILITY_SECONDS).default(5),
      RETRY_MAX_SECONDS: integer(1, MAX_VISIBILITY_SECONDS).default(900),
      // 10 records of one group may be delivered one after another in one invocation, and Lambda
      // stops at 900 s: 60 s per attempt keeps 10 attempts inside the consumer's timeout.
      DELIVERY_TIMEOUT_MS: integer(100, 60_000).default(10_000),
      PARTITION_COUNT: integer(1, 1_000_000).optional(),
      // Lambda's maximumConcurrency for SQS event sources ranges from 2 to 1000.
      CONSUMER_CONCURRENCY: integer(2, 1000).default(4),
      ALLOW_PRIVATE_ENDPOINTS: boolean.default(deployment === Deployment.local),
      DATA_DIR: nonEmpty.optional(),
      OLDEST_MESSAGE_ALARM_SECONDS: integer(60, 1_209_600).default(900),
      STALL_THRESHOLD_SECONDS: integer(1, 1_209_600).default(300),
      MAX_GROUP_WAIT_ALARM_SECONDS: integer(60, 1_209_600).default(900),
      STALLED_GROUPS_ALARM_THRESHOLD: integer(1, 1_000_000).default(1),
      // Ten days of SQS's fourteen: four left to resume (or skip) before the oldest events are dropped.
      HELD_AGE_ALARM_SECONDS: integer(1, 1_209_599).default(864_000),
      PAUSE_EVACUATION: z
        .string()
        .trim()
        .toLowerCase()
        .pipe(z.enum(PauseEvacuation, `must be one of ${Object.values(PauseEvacuation).join(', ')}`))
        .default(PauseEvacuation.none),
      QUEUE_BACKLOG_ALARM_MESSAGES: integer(1, 1_000_000_000).default(100_000),
      // Two lag-job runs past a minute's rates: a burst a key delivers within two minutes is no whale.
      FALLING_BEHIND_WAIT_SECONDS: integer(1, 1_209_600).default(120),
      ALARM_EMAIL: z.email('must be an e-mail address').optional(),
      DELIVERY_STATE_TTL_DAYS: integer(1, 3650)
        // An event's record (its number, whether it was delivered) must outlive every message of it:
        // SQS keeps one up to 14 days in the queue and, moved by the backstop, up to 14 more in the
        // FIFO dead-letter queue, which resets the clock on a move (SQS Developer Guide, "Setting-up
        // dead-letter queue retention"). A record gone sooner makes an import give the event a new
        // number: delivered twice, under two numbers.
        .refine((days) => days >= MIN_DELIVERY_STATE_TTL_DAYS, `must be at least ${MIN_DELIVERY_STATE_TTL_DAYS}: SQS keeps a message 14 days in the queue and 14 more in the dead-letter queue, and an event's record must outlive both, with a day to spare`)
        .default(30),
      EVENT_RETENTION_DAYS: integer(0, 3650).default(7),
      // Upgrading from before event ids were scoped per tenant and destination: until then, ingest
      // also finds events recorded under their producer's id alone (a duplicate stays a duplicate).
      LEGACY_EVENT_IDS_UNTIL: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z' }).optional(),
      LOG_LEVEL: z
        .string()
        .trim()
        .toUpperCase()
        .pipe(z.enum(LogLevel, `must be one of ${Object.values(LogLevel).join(', ')}`))
        .default(LogLevel.INFO),
    })
    .refine((env) => env.RETRY_MAX_SECONDS >= env.RETRY_BASE_SECONDS, {
      path: ['RETRY_MAX_SECONDS'],
      message: 'must be at least RETRY_BASE_SECONDS',
    })
    // A replay reads each kept event's record (its number, whether it was a resend's copy).
    .refine((env) => env.EVENT_RETENTION_DAYS <= env.DELIVERY_STATE_TTL_DAYS, {
      path: ['EVENT_RETENTION_DAYS'],
      message: "must be at most DELIVERY_STATE_TTL_DAYS: a replay reads each kept event's record, kept that long",
    })
    // Parked at that age, within a receive: an hour is left before SQS would drop the oldest.
    .refine((env) => env.PAUSE_EVACUATION !== PauseEvacuation.store || env.HELD_AGE_ALARM_SECONDS <= MAX_PARK_AFTER_SECONDS, {
      path: ['HELD_AGE_ALARM_SECONDS'],
      message: `must be at most ${MAX_PARK_AFTER_SECONDS} with PAUSE_EVACUATION=store: a held group is parked at that age, and SQS drops a message at 14 days`,
    })
    .refine((env) => env.AUTO_PAUSE_AFTER_SECONDS === undefined || env.ON_EXHAUSTED !== OnExhausted.stall, {
      path: ['AUTO_PAUSE_AFTER_SECONDS'],
      message: `must be unset with ON_EXHAUSTED=${OnExhausted.stall}: a stalled head is never given up, so there is nothing to pause instead`,
    })
    .superRefine(
      (env, context) => {
        const ceiling = visibilityCeilingSecondsFor(env.DELIVERY_TIMEOUT_MS);
        if (env.RETRY_MAX_SECONDS <= ceiling) return;
        context.addIssue({
          code: 'custom',
          path: ['RETRY_MAX_SECONDS'],
          message:
            `must be at most ${ceiling}: SQS's 12-hour visibility limit (${MAX_VISIBILITY_SECONDS} s, counted from the receive) ` +
            `less the consumer's timeout (${consumerTimeoutSecondsFor(env.DELIVERY_TIMEOUT_MS)} s with DELIVERY_TIMEOUT_MS=${env.DELIVERY_TIMEOUT_MS})`,
        });
      },
      // Only once both variables it reads were accepted: a refused one is named once, by its own rule.
      { when: ({ issues }) => issues.every((issue) => !CEILING_INPUTS.has(String(issue.path?.[0]))) },
    );

/**
 * The variable of each setting of Config. Code that holds settings rather than an environment
 * (the CDK construct's props) writes them as these variables and calls `loadConfig`, so its
 * settings are validated, and defaulted, by the one schema above. Each is checked to be one of
 * the schema's variables: a misspelt one would be dropped by the schema and its default used.
 */
export const CONFIG_VARIABLES = {
  port: 'PORT',
  maxDeliveryAttempts: 'MAX_DELIVERY_ATTEMPTS',
  onExhausted: 'ON_EXHAUSTED',
  autoPauseAfterSeconds: 'AUTO_PAUSE_AFTER_SECONDS',
  retryBaseSeconds: 'RETRY_BASE_SECONDS',
  retryMaxSeconds: 'RETRY_MAX_SECONDS',
  deliveryTimeoutMs: 'DELIVERY_TIMEOUT_MS',
  partitionCount: 'PARTITION_COUNT',
  consumerConcurrency: 'CONSUMER_CONCURRENCY',
  allowPrivateEndpoints: 'ALLOW_PRIVATE_ENDPOINTS',
  dataDir: 'DATA_DIR',
  oldestMessageAlarmSeconds: 'OLDEST_MESSAGE_ALARM_SECONDS',
  stallThresholdSeconds: 'STALL_THRESHOLD_SECONDS',
  maxGroupWaitAlarmSeconds: 'MAX_GROUP_WAIT_ALARM_SECONDS',
  stalledGroupsAlarmThreshold: 'STALLED_GROUPS_ALARM_THRESHOLD',
  heldAgeAlarmSeconds: 'HELD_AGE_ALARM_SECONDS',
  pauseEvacuation: 'PAUSE_EVACUATION',
  queueBacklogAlarmMessages: 'QUEUE_BACKLOG_ALARM_MESSAGES',
  fallingBehindWaitSeconds: 'FALLING_BEHIND_WAIT_SECONDS',
  alarmEmail: 'ALARM_EMAIL',
  deliveryStateTtlDays: 'DELIVERY_STATE_TTL_DAYS',
  eventRetentionDays: 'EVENT_RETENTION_DAYS',
  legacyEventIdsUntil: 'LEGACY_EVENT_IDS_UNTIL',
  logLevel: 'LOG_LEVEL',
} as const satisfies { readonly [K in keyof Config]: keyof z.input<ReturnType<typeof environmentSchema>> };

/** The variables the visibility ceiling is checked from. */
const CEILING_INPUTS: ReadonlySet<string> = new Set(['RETRY_MAX_SECONDS', 'DELIVERY_TIMEOUT_MS']);

/** An empty variable counts as unset, as shells and `.env` files produce them. */
function withoutEmpty(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}

function describeIssues(error: z.ZodError, env: Readonly<Record<string, string>>): string[] {
  return error.issues.map((issue) => {
    const variable = String(issue.path[0] ?? 'environment');
    const given = env[variable];
    return `${variable}: ${issue.message}${given === undefined ? '' : ` (got "${given}")`}`;
  });
}

/**
 * Reads and validates the configuration from an environment map.
 * @throws ConfigError naming each variable that is refused.
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>, deployment: Deployment): Config {
  const present = withoutEmpty(env);
  const parsed = environmentSchema(deployment).safeParse(present);
  if (!parsed.success) throw new ConfigError(describeIssues(parsed.error, present));
  const v = parsed.data;
  return {
    port: v.PORT,
    maxDeliveryAttempts: v.MAX_DELIVERY_ATTEMPTS,
    onExhausted: v.ON_EXHAUSTED,
    autoPauseAfterSeconds: v.AUTO_PAUSE_AFTER_SECONDS,
    retryBaseSeconds: v.RETRY_BASE_SECONDS,
    retryMaxSeconds: v.RETRY_MAX_SECONDS,
    deliveryTimeoutMs: v.DELIVERY_TIMEOUT_MS,
    partitionCount: v.PARTITION_COUNT,
    consumerConcurrency: v.CONSUMER_CONCURRENCY,
    allowPrivateEndpoints: v.ALLOW_PRIVATE_ENDPOINTS,
    dataDir: v.DATA_DIR,
    oldestMessageAlarmSeconds: v.OLDEST_MESSAGE_ALARM_SECONDS,
    stallThresholdSeconds: v.STALL_THRESHOLD_SECONDS,
    maxGroupWaitAlarmSeconds: v.MAX_GROUP_WAIT_ALARM_SECONDS,
    stalledGroupsAlarmThreshold: v.STALLED_GROUPS_ALARM_THRESHOLD,
    heldAgeAlarmSeconds: v.HELD_AGE_ALARM_SECONDS,
    pauseEvacuation: v.PAUSE_EVACUATION,
    queueBacklogAlarmMessages: v.QUEUE_BACKLOG_ALARM_MESSAGES,
    fallingBehindWaitSeconds: v.FALLING_BEHIND_WAIT_SECONDS,
    alarmEmail: v.ALARM_EMAIL,
    deliveryStateTtlDays: v.DELIVERY_STATE_TTL_DAYS,
    eventRetentionDays: v.EVENT_RETENTION_DAYS,
    legacyEventIdsUntil: v.LEGACY_EVENT_IDS_UNTIL,
    logLevel: v.LOG_LEVEL,
  };
}

/**
 * The variables a deployed function needs to rebuild the same Config with `loadConfig`.
 * `ALLOW_PRIVATE_ENDPOINTS` is always written out, so no function falls back to a default
 * meant for the other deployment.
 */
export function toEnvironment(config: Config): Record<string, string> {
  const environment: Record<string, string> = {
    MAX_DELIVERY_ATTEMPTS: String(config.maxDeliveryAttempts),
    ON_EXHAUSTED: config.onExhausted,
    RETRY_BASE_SECONDS: String(config.retryBaseSeconds),
    RETRY_MAX_SECONDS: String(config.retryMaxSeconds),
    DELIVERY_TIMEOUT_MS: String(config.deliveryTimeoutMs),
    CONSUMER_CONCURRENCY: String(config.consumerConcurrency),
    ALLOW_PRIVATE_ENDPOINTS: String(config.allowPrivateEndpoints),
    DELIVERY_STATE_TTL_DAYS: String(config.deliveryStateTtlDays),
    EVENT_RETENTION_DAYS: String(config.eventRetentionDays),
    STALL_THRESHOLD_SECONDS: String(config.stallThresholdSeconds),
    FALLING_BEHIND_WAIT_SECONDS: String(config.fallingBehindWaitSeconds),
    HELD_AGE_ALARM_SECONDS: String(config.heldAgeAlarmSeconds),
    PAUSE_EVACUATION: config.pauseEvacuation,
    LOG_LEVEL: config.logLevel,
  };
  if (config.partitionCount !== undefined) environment.PARTITION_COUNT = String(config.partitionCount);
  if (config.autoPauseAfterSeconds !== undefined) environment.AUTO_PAUSE_AFTER_SECONDS = String(config.autoPauseAfterSeconds);
  if (config.legacyEventIdsUntil !== undefined) environment.LEGACY_EVENT_IDS_UNTIL = config.legacyEventIdsUntil;
  return environment;
}

/** Time the consumer's timeout allows, beside the attempts of a batch, for its DynamoDB, S3 and SQS calls. */
const CONSUMER_CALLS_SECONDS = 30;

function consumerTimeoutSecondsFor(deliveryTimeoutMs: number): number {
  return Math.min(MAX_LAMBDA_TIMEOUT_SECONDS, Math.ceil((CONSUMER_BATCH_SIZE * deliveryTimeoutMs) / 1000) + CONSUMER_CALLS_SECONDS);
}

/**
 * The thresholds lag figures are taken with (core/lag.ts's `LagThresholds`): the lag job's (which
 * its alarms watch) and the metrics route's, one source so that the console and the alarms count
 * alike. Its type is written out rather than imported: this module's declarations ship in the
 * construct library, and core/lag.ts's would bring zod's along.
 */
export function lagThresholdsOf(config: Config): { readonly stallThresholdSeconds: number; readonly fallingBehindWaitSeconds: number; readonly heldAgeWarnSeconds: number; readonly retentionSeconds: number } {
  return {
    stallThresholdSeconds: config.stallThresholdSeconds,
    fallingBehindWaitSeconds: config.fallingBehindWaitSeconds,
    heldAgeWarnSeconds: config.heldAgeAlarmSeconds,
    retentionSeconds: FIFO_QUEUE_SETTINGS.retentionSeconds,
  };
}

/**
 * The consumer's timeout: a batch may hold 10 records of one group, delivered one after
 * another, each allowed `deliveryTimeoutMs`, plus 30 s for DynamoDB and SQS calls.
 */
export function consumerTimeoutSeconds(config: Config): number {
  return consumerTimeoutSecondsFor(config.deliveryTimeoutMs);
}

/**
 * Time a record needs beside its attempt's DELIVERY_TIMEOUT_MS: its own calls (two reads, up to
 * three writes, a dead letter's S3 put) and the batch's closing ones (one
 * ChangeMessageVisibilityBatch, one lag write per group), each usually tens of milliseconds, with
 * room for the SDK's retries. It is a third of the consumer's allowance for calls
 * (CONSUMER_CALLS_SECONDS), so that the tenth record of a batch whose nine before it each used
 * their whole timeout is still started, if those nine spent under 20 s on calls.
 */
const RECORD_CALLS_SECONDS = 10;

/**
 * The time the consumer must have left to start a record: it never starts an attempt it may not
 * finish, with its state written, before Lambda stops it at its timeout.
 */
export function recordTimeBudgetMs(config: Config): number {
  return config.deliveryTimeoutMs + RECORD_CALLS_SECONDS * 1000;
}

function visibilityCeilingSecondsFor(deliveryTimeoutMs: number): number {
  return MAX_VISIBILITY_SECONDS - consumerTimeoutSecondsFor(deliveryTimeoutMs);
}

/**
 * The longest visibility timeout the consumer may set: SQS's 43,200 s counted from the receive,
 * less the consumer's timeout, the latest after the receive that it calls ChangeMessageVisibility.
 * Any longer and SQS refuses the change (`InvalidParameterValue`), and the message comes back
 * after the queue's visibility timeout (minutes) instead of its backoff. Every backoff, hold and
 * `Retry-After` is kept at or below it; `RETRY_MAX_SECONDS` may not exceed it.
 */
export function visibilityCeilingSeconds(config: Config): number {
  return visibilityCeilingSecondsFor(config.deliveryTimeoutMs);
}

/** AWS asks for a visibility timeout of at least 6 × the function's timeout for SQS event sources. */
export function queueVisibilityTimeoutSeconds(config: Config): number {
  return 6 * consumerTimeoutSeconds(config);
}

/**
 * The longest a crash loop (a message that kills the consumer every time, so that it comes back
 * after the queue's visibility timeout) may hold its key before SQS's backstop takes it: half of
 * SQS's 14-day retention, so that the messages behind it never expire meanwhile.
 */
const CRASH_LOOP_BACKSTOP_SECONDS = 7 * 86_400;

/**
 * The most events of one key a message carries (a pack, see `encodeQueuedMessage`). Every event
 * of a message, and of the nine messages received with it, may spend its attempts while the
 * message rides along, each attempt a receive: the backstop must sit above 10 × this ×
 * (MAX_DELIVERY_ATTEMPTS + 1) receives, and a crash loop must reach it, one receive per visibility
 * timeout, within CRASH_LOOP_BACKSTOP_SECONDS. The largest pack size that keeps both, at most
 * MAX_EVENTS_PER_MESSAGE and at least 1: 10 with the defaults, 3 with MAX_DELIVERY_ATTEMPTS=20.
 */
export function maxEventsPerMessage(config: Config): number {
  const receivesWithin = Math.min(SQS_MAX_RECEIVE_COUNT, Math.floor(CRASH_LOOP_BACKSTOP_SECONDS / queueVisibilityTimeoutSeconds(config)));
  return Math.max(1, Math.min(MAX_EVENTS_PER_MESSAGE, Math.floor(receivesWithin / (CONSUMER_BATCH_SIZE * (config.maxDeliveryAttempts + 1)))));
}

/**
 * SQS's own redrive is only a backstop for crash loops; the consumer dead-letters after real
 * attempts. Every receive counts, and a message waits in the first 10 of its group while the
 * events ahead of it and its own (up to `maxEventsPerMessage` each) use all their attempts, so it
 * may be received 10 × that × (MAX_DELIVERY_ATTEMPTS + 1) times before its last event's first
 * attempt; a consumer that runs out of time mid-batch returns the rest too, at most once per event
 * delivered. The backstop sits at that bound (SQS takes at most 1,000).
 */
export function backstopMaxReceiveCount(config: Config): number {
  // A stalled head and the successors riding with it are received again on every retry, without
  // end: only SQS's own ceiling keeps the backstop from moving them to the dead-letter queue.
  if (config.onExhausted === OnExhausted.stall) return SQS_MAX_RECEIVE_COUNT;
  return Math.min(SQS_MAX_RECEIVE_COUNT, CONSUMER_BATCH_SIZE * maxEventsPerMessage(config) * (config.maxDeliveryAttempts + 1));
}

/**
 * Reads the physical names of the resources a handler uses from the environment the stack (or
 * the local stack) set. Each function is given only the names of what it is granted.
 * @throws ConfigError naming each missing variable.
 */
export function loadResourceNames<K extends keyof ResourceNames>(
  env: Readonly<Record<string, string | undefined>>,
  needed: readonly K[],
): Pick<ResourceNames, K> {
  const missing = needed.filter((name) => (env[RESOURCE_ENV_VARS[name]]?.trim() ?? '') === '');
  if (missing.length > 0) throw new ConfigError(missing.map((name) => `${RESOURCE_ENV_VARS[name]}: must be set`));
  return Object.fromEntries(needed.map((name) => [name, env[RESOURCE_ENV_VARS[name]]?.trim() ?? ''])) as Pick<ResourceNames, K>;
}

/** The configuration of this process, read once from its environment. */
export function loadProcessConfig(deployment: Deployment): Config {
  return loadConfig(process.env, deployment);
}

/** The resource names this process needs, read once from its environment. */
export function loadProcessResourceNames<K extends keyof ResourceNames>(needed: readonly K[]): Pick<ResourceNames, K> {
  return loadResourceNames(process.env, needed);
}

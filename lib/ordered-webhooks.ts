import { Token } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Duration } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  backstopMaxReceiveCount,
  CONFIG_VARIABLES,
  ConfigError,
  consumerTimeoutSeconds,
  Deployment,
  loadConfig,
  OPERATIONS_TIMEOUT_SECONDS,
  queueVisibilityTimeoutSeconds,
  toEnvironment,
  type Config,
  type LogLevel,
  type PauseEvacuation,
} from '../lambda/config.js';
import { CONSUMER_METRICS } from '../lambda/core/consumer-metrics.js';
import type { OnExhausted } from '../lambda/core/retry-policy.js';
import { CONSUMER_ACCESS } from '../lambda/handlers/consumer.js';
import { INGEST_ACCESS } from '../lambda/handlers/ingest.js';
import { LAG_METRICS_ACCESS } from '../lambda/handlers/lag-metrics.js';
import { OPERATIONS_ACCESS } from '../lambda/handlers/operations.js';
import { SUBSCRIPTIONS_ACCESS } from '../lambda/handlers/subscriptions.js';
import { ROUTES } from '../lambda/routes.js';
import { AccessGrants } from './access-grants.js';
import { DeliveryAlarms } from './alarms.js';
import { WebhookApi } from './api.js';
import { consumerMetric } from './consumer-metrics.js';
import { DeliveryQueues } from './delivery-queues.js';
import { HandlerFunction, type HandlerName } from './handler-function.js';
import { LagMetricsJob } from './lag-metrics-job.js';
import { NoticeTopic } from './notice-topic.js';
import { OperationsDashboard } from './operations-dashboard.js';
import { PayloadBucket } from './payload-bucket.js';
import { StateTables } from './state-tables.js';

/**
 * Run time of one operations request. A redrive step stops taking dead letters after
 * REDRIVE_STEP_SECONDS and finishes the batch in hand; this lets it end, and log, before API
 * Gateway's integration timeout answers 504 in its stead.
 */
const OPERATIONS_TIMEOUT = Duration.seconds(OPERATIONS_TIMEOUT_SECONDS);

/**
 * The routes a producer calls, named one by one: sending events (`POST /v1/events`), and
 * `GET /health`, which answers whether the service accepts events now (docs/api.md#routes), a
 * producer's question, and reads and changes nothing. Each is checked to be a route of the ingest
 * function, but not every route of it is a producer's: one added there reaches producers only
 * by being added here.
 */
export const PRODUCER_ROUTES = ['GET /health', 'POST /v1/events'] as const satisfies readonly (typeof ROUTES.ingest)[number][];

/**
 * The routes that read subscriptions: a tenant's list and one subscription, never a secret. Granted
 * by {@link OrderedWebhooks.grantReadSubscriptions}, which also denies {@link SECRET_READ_ROUTES}
 * (IAM's `*` in the ARN of one subscription matches its `/secret` too).
 */
export const SUBSCRIPTION_READ_ROUTES = ['GET /v1/subscriptions', 'GET /v1/subscriptions/{subscription_id}'] as const satisfies readonly (typeof ROUTES.subscriptions)[number][];

/** The one route that answers a stored secret: granted alone, by {@link OrderedWebhooks.grantReadSecrets}. */
export const SECRET_READ_ROUTES = ['GET /v1/subscriptions/{subscription_id}/secret'] as const satisfies readonly (typeof ROUTES.subscriptions)[number][];

/** The settings of Config that only the local stack takes: its port and its data directory. */
const LOCAL_ONLY_SETTINGS = ['port', 'dataDir'] as const;

/** A setting of Config that a deployment takes: each is a prop of {@link OrderedWebhooksProps}. */
export type DeployedSetting = Exclude<keyof Config, (typeof LOCAL_ONLY_SETTINGS)[number]>;

/**
 * Properties of {@link OrderedWebhooks}: the settings of the deployed service, each the setting
 * of the same name of `lambda/config.ts` (its environment variable in brackets). They are
 * validated, and the unset ones defaulted, by that module's one schema, at synth time; a refused
 * value fails the synthesis with an {@link OrderedWebhooksPropsError} naming the prop.
 */
export interface OrderedWebhooksProps {
  /**
   * Real delivery attempts before an event is dead-lettered, or with `onExhausted: 'stall'`
   * held (`MAX_DELIVERY_ATTEMPTS`, 1 to 100).
   * @default 5
   */
  readonly maxDeliveryAttempts?: number;
  /**
   * What happens to an event that used all its attempts (`ON_EXHAUSTED`): `'dead_letter'` gives
   * it up and moves its key on; `'stall'` keeps retrying it every `retryMaxSeconds`, holding its
   * key, and lets the stalled-groups alarm page.
   * @default 'dead_letter'
   */
  readonly onExhausted?: OnExhausted;
  /**
   * Pause a subscription instead of giving up a head once its key has been failing this long, in
   * seconds (`AUTO_PAUSE_AFTER_SECONDS`, 1 to 1,209,600; not with `onExhausted: 'stall'`): nothing
   * more is dead-lettered, a notice goes to `noticeTopic`, and a resume delivers from the head.
   * @default - never: exhausted heads are dead-lettered
   */
  readonly autoPauseAfterSeconds?: number;
  /**
   * Lower bound of every retry delay, in seconds (`RETRY_BASE_SECONDS`); 0 makes retries immediate.
   * @default 5
   */
  readonly retryBaseSeconds?: number;
  /**
   * Upper bound of every retry delay, `Retry-After` and stall holds included, in seconds
   * (`RETRY_MAX_SECONDS`); at most 43,200 (SQS's visibility limit) less the consumer's timeout.
   * @default 900
   */
  readonly retryMaxSeconds?: number;
  /**
   * Time allowed for one delivery attempt, in milliseconds (`DELIVERY_TIMEOUT_MS`, 100 to
   * 60,000). It also sets the consumer's timeout and the delivery queue's visibility timeout.
   * @default 10000
   */
  readonly deliveryTimeoutMs?: number;
  /**
   * Partition mode (`PARTITION_COUNT`): events go to `partition-<p>` message groups, p below this
   * count. It is the routing until the first drain-and-switch; change it with the command line's
   * `repartition`, never by redeploying with another value.
   * @default - unset: one message group per ordering key
   */
  readonly partitionCount?: number;
  /**
   * Most concurrent consumer invocations: the event source mapping's maximum concurrency
   * (`CONSUMER_CONCURRENCY`, 2 to 1000).
   * @default 4
   */
  readonly consumerConcurrency?: number;
  /**
   * Whether endpoint URLs may resolve to private, loopback, link-local or metadata addresses
   * (`ALLOW_PRIVATE_ENDPOINTS`).
   * @default false
   */
  readonly allowPrivateEndpoints?: boolean;
  /**
   * Age of the delivery queue's oldest message at which its alarm goes off, in seconds
   * (`OLDEST_MESSAGE_ALARM_SECONDS`, 60 to 1,209,600).
   * @default 900
   */
  readonly oldestMessageAlarmSeconds?: number;
  /**
   * A message group whose head has been failing for longer than this, in seconds, is stalled
   * (`STALL_THRESHOLD_SECONDS`).
   * @default 300
   */
  readonly stallThresholdSeconds?: number;
  /**
   * Wait of a pending event of any message group at which its alarm goes off, in seconds
   * (`MAX_GROUP_WAIT_ALARM_SECONDS`, 60 to 1,209,600).
   * @default 900
   */
  readonly maxGroupWaitAlarmSeconds?: number;
  /**
   * Number of stalled message groups at which their alarm goes off (`STALLED_GROUPS_ALARM_THRESHOLD`).
   * @default 1
   */
  readonly stalledGroupsAlarmThreshold?: number;
  /**
   * Wait of a held group's oldest event (its subscription paused) at which its alarm goes off, in
   * seconds (`HELD_AGE_ALARM_SECONDS`, 1 to 1,209,599): SQS drops a message 14 days after it was sent.
   * @default 864000
   */
  readonly heldAgeAlarmSeconds?: number;
  /**
   * What becomes of a held group once its oldest event has waited `heldAgeAlarmSeconds`
   * (`PAUSE_EVACUATION`): `'store'` parks it, moving its events out of the queue into the store of
   * dead letters in order (SQS would drop them at 14 days), and resume sends them back before any
   * later event of their keys; `'none'` leaves it held in the queue, warned about. With `'store'`,
   * `heldAgeAlarmSeconds` is at most 1,206,000.
   * @default 'none'
   */
  readonly pauseEvacuation?: PauseEvacuation;
  /**
   * Visible messages of the delivery queue at which its alarm goes off (`QUEUE_BACKLOG_ALARM_MESSAGES`):
   * SQS FIFO looks for available message groups among the first 120,000 only.
   * @default 100000
   */
  readonly queueBacklogAlarmMessages?: number;
  /**
   * A key whose oldest pending event has waited longer than this, in seconds, while it accepts at
   * least as fast as it delivers is falling behind, and alarms (`FALLING_BEHIND_WAIT_SECONDS`, 1 to 1,209,600).
   * @default 120
   */
  readonly fallingBehindWaitSeconds?: number;
  /**
   * E-mail address subscribed to the alarm topic (`ALARM_EMAIL`); the subscription must be confirmed.
   * @default - no subscription: subscribe to `alarmTopic` yourself
   */
  readonly alarmEmail?: string;
  /**
   * Days an event's idempotency and delivery record is kept (`DELIVERY_STATE_TTL_DAYS`, 28 to 3650: it
   * must outlive every message of its event, 14 days in the queue and 14 more in the dead-letter queue).
   * @default 30
   */
  readonly deliveryStateTtlDays?: number;
  /**
   * Days each accepted event's body is kept for a replay (`EVENT_RETENTION_DAYS`, 0 to
   * `deliveryStateTtlDays`); 0 keeps none, and a replay is refused.
   * @default 7
   */
  readonly eventRetentionDays?: number;
  /**
   * When upgrading a stack deployed before event ids were scoped per tenant and destination: until
   * this time (ISO 8601, `LEGACY_EVENT_IDS_UNTIL`), ingest also finds events recorded under their
   * producer's id alone, so a resend of one stays a duplicate. Set it to the upgrade's time plus
   * `deliveryStateTtlDays`, then remove it.
   * @default - none: not looked up
   */
  readonly legacyEventIdsUntil?: string;
  /**
   * Level of the functions' logs (`LOG_LEVEL`): `'DEBUG'`, `'INFO'`, `'WARN'`, `'ERROR'` or `'SILENT'`.
   * @default 'INFO'
   */
  readonly logLevel?: LogLevel;
}

/** A prop of {@link OrderedWebhooks} was refused; the message names every offending prop. */
export class OrderedWebhooksPropsError extends Error {
  override readonly name = 'OrderedWebhooksPropsError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid OrderedWebhooks props:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

/** Each deployed setting with its variable: the props a caller may give. */
const PROP_VARIABLES: ReadonlyMap<string, string> = new Map(
  Object.entries(CONFIG_VARIABLES).filter(([setting]) => !(LOCAL_ONLY_SETTINGS as readonly string[]).includes(setting)),
);

/**
 * The validated Config of `props`: each given prop is written as its variable and the whole read
 * by `loadConfig`, so a prop is refused, or defaulted, exactly as its variable would be. The
 * schema's messages name variables; they are given back naming the props.
 * @throws OrderedWebhooksPropsError naming each refused prop.
 */
export function configOf(props: OrderedWebhooksProps): Config {
  const problems: string[] = [];
  const variables: Record<string, string> = {};
  for (const [prop, value] of Object.entries(props)) {
    const variable = PROP_VARIABLES.get(prop);
    if (variable === undefined) problems.push(`${prop}: is no prop of OrderedWebhooks`);
    else if (value === undefined) continue;
    else if (Token.isUnresolved(value)) problems.push(`${prop}: must be a value known at synth time, not a token`);
    else if (value === '') problems.push(`${prop}: must not be empty`);
    else variables[variable] = String(value);
  }
  if (problems.length > 0) throw new OrderedWebhooksPropsError(problems);
  try {
    return loadConfig(variables, Deployment.deployed);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new OrderedWebhooksPropsError(error.problems.map(namingProps));
  }
}

/** A problem of the schema, each variable in it replaced by its prop. */
function namingProps(problem: string): string {
  let named = problem;
  for (const [prop, variable] of PROP_VARIABLES) named = named.replace(new RegExp(`\\b${variable}\\b`, 'g'), prop);
  return named;
}

/**
 * The props that give `config`'s deployed settings: how an app that reads its settings from the
 * environment (bin/app.ts) builds the construct. Every deployed setting is listed, and checked
 * to be one, so a setting added to Config is not silently left at its default.
 */
export function propsOf(config: Config): OrderedWebhooksProps {
  return {
    maxDeliveryAttempts: config.maxDeliveryAttempts,
    onExhausted: config.onExhausted,
    autoPauseAfterSeconds: config.autoPauseAfterSeconds,
    retryBaseSeconds: config.retryBaseSeconds,
    retryMaxSeconds: config.retryMaxSeconds,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    partitionCount: config.partitionCount,
    consumerConcurrency: config.consumerConcurrency,
    allowPrivateEndpoints: config.allowPrivateEndpoints,
    oldestMessageAlarmSeconds: config.oldestMessageAlarmSeconds,
    stallThresholdSeconds: config.stallThresholdSeconds,
    maxGroupWaitAlarmSeconds: config.maxGroupWaitAlarmSeconds,
    stalledGroupsAlarmThreshold: config.stalledGroupsAlarmThreshold,
    heldAgeAlarmSeconds: config.heldAgeAlarmSeconds,
    pauseEvacuation: config.pauseEvacuation,
    queueBacklogAlarmMessages: config.queueBacklogAlarmMessages,
    fallingBehindWaitSeconds: config.fallingBehindWaitSeconds,
    alarmEmail: config.alarmEmail,
    deliveryStateTtlDays: config.deliveryStateTtlDays,
    eventRetentionDays: config.eventRetentionDays,
    legacyEventIdsUntil: config.legacyEventIdsUntil,
    logLevel: config.logLevel,
  } satisfies { readonly [K in DeployedSetting]: Config[K] };
}

/**
 * Per-key ordered webhook delivery, whole: HTTP API → ingest → SQS FIFO → consumer → receivers,
 * its DynamoDB state, the payload bucket, the lag job, the alarms and their topic, and the
 * dashboard. This class only wires constructs. Each function is granted exactly the accesses its
 * handler exports, which are those of the adapter calls it makes, and each grant also hands the
 * function the name of what it is granted, so a function knows exactly what it may use.
 *
 * What an integrating app needs is exposed: the API (and its URL), the queues, the tables, the
 * alarm topic, and {@link grantPublish} for producers. Every route is IAM-authorized (SigV4).
 */
export class OrderedWebhooks extends Construct {
  /** The validated settings, defaults filled in (`port` and `dataDir` are the local stack's, unused here). */
  readonly config: Config;
  /** The HTTP API: `api.httpApi`, its `$default` stage `api.stage`, and `api.url`. */
  readonly api: WebhookApi;
  /** The SQS FIFO delivery queue (`queues.deliveryQueue`) and its backstop (`queues.deadLetterQueue`). */
  readonly queues: DeliveryQueues;
  /** The DynamoDB tables, by name: `tables.table('subscriptions')`. */
  readonly tables: StateTables;
  /** The SNS topic every alarm notifies, on alarm and on recovery. */
  readonly alarmTopic: sns.ITopic;
  /** The alarms themselves. */
  readonly alarms: DeliveryAlarms;
  /** The SNS topic of operational notices: one JSON message per automatic pause (`AUTO_PAUSE_AFTER_SECONDS`). */
  readonly noticeTopic: sns.ITopic;
  /** The bucket of dead letters too large for a DynamoDB item. */
  readonly payloads: PayloadBucket;
  /** The five functions, by handler name. */
  readonly functions: Readonly<Record<HandlerName, HandlerFunction>>;
  /** The lag job and its metrics. */
  readonly lagMetrics: LagMetricsJob;
  /** The CloudWatch dashboard of the service. */
  readonly dashboard: OperationsDashboard;

  constructor(scope: Construct, id: string, props: OrderedWebhooksProps = {}) {
    super(scope, id);
    const config = configOf(props);
    const environment = toEnvironment(config);

    const tables = new StateTables(this, 'State');
    const payloads = new PayloadBucket(this, 'Payloads', { expiration: Duration.days(config.deliveryStateTtlDays + 1) });
    const queues = new DeliveryQueues(this, 'Queues', {
      visibilityTimeout: Duration.seconds(queueVisibilityTimeoutSeconds(config)),
      maxReceiveCount: backstopMaxReceiveCount(config),
    });

    // Each function is granted exactly the calls of the adapter methods its handler declares
    // (`<HANDLER>_ACCESS`), each on exactly its resource.
    const notices = new NoticeTopic(this, 'Notices', { ...(config.alarmEmail === undefined ? {} : { email: config.alarmEmail }) });
    const grants = new AccessGrants({ tables, queues, payloads, notices });

    const ingest = new HandlerFunction(this, 'Ingest', { handler: 'ingest', environment });
    grants.grant(ingest.function, INGEST_ACCESS);

    const subscriptions = new HandlerFunction(this, 'Subscriptions', { handler: 'subscriptions', environment });
    grants.grant(subscriptions.function, SUBSCRIPTIONS_ACCESS);

    const consumer = new HandlerFunction(this, 'Consumer', {
      handler: 'consumer',
      // Its counts (Powertools Metrics, EMF) go to the namespace its alarms watch.
      environment: { ...environment, POWERTOOLS_METRICS_NAMESPACE: CONSUMER_METRICS.namespace },
      timeout: Duration.seconds(consumerTimeoutSeconds(config)),
    });
    grants.grant(consumer.function, CONSUMER_ACCESS);
    // Lambda's poller receives and deletes with the consumer's role: the mapping grants its own calls.
    queues.addConsumer(consumer.function, { maxConcurrency: config.consumerConcurrency });
    // An update changes the consumer before ingest: a consumer always reads every message format
    // ingest writes (a pack, since packs, would be set aside as unreadable by a consumer before them).
    ingest.function.node.addDependency(consumer.function);

    const operations = new HandlerFunction(this, 'Operations', {
      handler: 'operations',
      environment,
      timeout: OPERATIONS_TIMEOUT,
    });
    grants.grant(operations.function, OPERATIONS_ACCESS);

    const lagMetrics = new LagMetricsJob(this, 'LagMetrics', { environment });
    grants.grant(lagMetrics.handler.function, LAG_METRICS_ACCESS);

    const api = new WebhookApi(this, 'Api', {
      functions: { ingest: ingest.function, subscriptions: subscriptions.function, operations: operations.function },
    });
    const alarms = new DeliveryAlarms(this, 'Alarms', {
      deliveryQueue: queues.deliveryQueue,
      deadLetterQueue: queues.deadLetterQueue,
      deadLettered: consumerMetric('deadLettered'),
      consumerFaults: consumerMetric('faults'),
      oldestMessageAgeThreshold: Duration.seconds(config.oldestMessageAlarmSeconds),
      lagMetrics,
      maxGroupWaitThreshold: Duration.seconds(config.maxGroupWaitAlarmSeconds),
      stalledGroupsThreshold: config.stalledGroupsAlarmThreshold,
      heldAgeThreshold: Duration.seconds(config.heldAgeAlarmSeconds),
      queueBacklogThreshold: config.queueBacklogAlarmMessages,
      alarmEmail: config.alarmEmail,
    });
    const dashboard = new OperationsDashboard(this, 'Dashboard', {
      deliveryQueue: queues.deliveryQueue,
      deadLetterQueue: queues.deadLetterQueue,
      ingest: ingest.function,
      httpApi: api.httpApi,
      consumer: consumer.function,
      consumerMaxConcurrency: config.consumerConcurrency,
      lagMetrics,
      alarms,
    });

    this.config = config;
    this.tables = tables;
    this.payloads = payloads;
    this.queues = queues;
    this.functions = { ingest, subscriptions, consumer, operations, lagMetrics: lagMetrics.handler };
    this.lagMetrics = lagMetrics;
    this.api = api;
    this.alarms = alarms;
    this.alarmTopic = alarms.topic;
    this.noticeTopic = notices.topic;
    this.dashboard = dashboard;
  }

  /** The API's base URL, with a trailing slash. */
  get url(): string {
    return this.api.url;
  }

  /**
   * Lets `grantee` call the producer routes (PRODUCER_ROUTES: `POST /v1/events`, `GET /health`)
   * of this API's stage, and nothing else: `execute-api:Invoke` on exactly those route ARNs, so a
   * producer cannot read subscriptions (they hold signing secrets) nor operate the service.
   */
  grantPublish(grantee: iam.IGrantable): iam.Grant {
    return this.api.grantInvokeRoutes(grantee, PRODUCER_ROUTES);
  }

  /**
   * Lets `grantee` read subscriptions (SUBSCRIPTION_READ_ROUTES: a tenant's list, one subscription)
   * and never their secrets: `GET /v1/subscriptions/{subscription_id}/secret`, which the ARN of one
   * subscription matches too, is denied in the same grant. A Deny outweighs any Allow: a principal
   * that must read secrets as well is granted both routes in one `api.grantInvokeRoutes` call.
   */
  grantReadSubscriptions(grantee: iam.IGrantable): iam.Grant {
    return this.api.grantInvokeRoutes(grantee, SUBSCRIPTION_READ_ROUTES);
  }

  /**
   * Lets `grantee` read the signing secrets of every subscription (SECRET_READ_ROUTES:
   * `GET /v1/subscriptions/{subscription_id}/secret`), and nothing else: what a receiver's deploy
   * needs to verify webhooks. No other route answers a stored secret.
   */
  grantReadSecrets(grantee: iam.IGrantable): iam.Grant {
    return this.api.grantInvokeRoutes(grantee, SECRET_READ_ROUTES);
  }
}

import { Aws, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import {
  backstopMaxReceiveCount,
  consumerTimeoutSeconds,
  OPERATIONS_TIMEOUT_SECONDS,
  queueVisibilityTimeoutSeconds,
  toEnvironment,
  type Config,
} from '../lambda/config.js';
import { TABLES } from '../lambda/resources.js';
import { CONSUMER_METRICS } from '../lambda/core/consumer-metrics.js';
import { CONSUMER_ACCESS } from '../lambda/handlers/consumer.js';
import { INGEST_ACCESS } from '../lambda/handlers/ingest.js';
import { LAG_METRICS_ACCESS } from '../lambda/handlers/lag-metrics.js';
import { OPERATIONS_ACCESS } from '../lambda/handlers/operations.js';
import { SUBSCRIPTIONS_ACCESS } from '../lambda/handlers/subscriptions.js';
import { AccessGrants } from './access-grants.js';
import { DeliveryAlarms } from './alarms.js';
import { consumerMetric } from './consumer-metrics.js';
import { WebhookApi } from './api.js';
import { DeliveryQueues } from './delivery-queues.js';
import { HandlerFunction, type HandlerName } from './handler-function.js';
import { LagMetricsJob } from './lag-metrics-job.js';
import { OperationsDashboard } from './operations-dashboard.js';
import { PayloadBucket } from './payload-bucket.js';
import { StateTables, type TableName } from './state-tables.js';

/**
 * Run time of one operations request. A redrive step stops taking dead letters after
 * REDRIVE_STEP_SECONDS and finishes the batch in hand; this lets it end, and log, before API
 * Gateway's integration timeout answers 504 in its stead.
 */
const OPERATIONS_TIMEOUT = Duration.seconds(OPERATIONS_TIMEOUT_SECONDS);

/** Properties of {@link OrderedWebhooksStack}. */
export interface OrderedWebhooksStackProps extends StackProps {
  /** The validated configuration (`loadConfig(env, Deployment.deployed)`). */
  readonly config: Config;
}

/**
 * The whole deployed service: HTTP API → ingest → SQS FIFO → consumer → receivers, its DynamoDB
 * state, the lag job, its alarms and its dashboard. This class only wires constructs. Each function
 * is granted exactly the accesses its handler exports, which are those of the adapter calls it
 * makes, and each grant also hands the function the name of what it is granted, so a function
 * knows exactly what it may use.
 */
export class OrderedWebhooksStack extends Stack {
  readonly tables: StateTables;
  readonly payloads: PayloadBucket;
  readonly queues: DeliveryQueues;
  readonly functions: Readonly<Record<HandlerName, HandlerFunction>>;
  readonly lagMetrics: LagMetricsJob;
  readonly api: WebhookApi;
  readonly alarms: DeliveryAlarms;
  readonly dashboard: OperationsDashboard;

  constructor(scope: Construct, id: string, props: OrderedWebhooksStackProps) {
    super(scope, id, props);
    const { config } = props;
    const environment = toEnvironment(config);

    const tables = new StateTables(this, 'State');
    const payloads = new PayloadBucket(this, 'Payloads', { expiration: Duration.days(config.deliveryStateTtlDays + 1) });
    const queues = new DeliveryQueues(this, 'Queues', {
      visibilityTimeout: Duration.seconds(queueVisibilityTimeoutSeconds(config)),
      maxReceiveCount: backstopMaxReceiveCount(config),
    });

    // Each function is granted exactly the calls of the adapter methods its handler declares
    // (`<HANDLER>_ACCESS`), each on exactly its resource.
    const grants = new AccessGrants({ tables, queues, payloads });

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

    new CfnOutput(this, 'ApiUrl', {
      value: api.url,
      description: 'Base URL of the HTTP API; requests are signed with SigV4 for the service execute-api',
    });
    new CfnOutput(this, 'DeliveryQueueUrl', { value: queues.deliveryQueue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: queues.deadLetterQueue.queueUrl });
    for (const name of Object.keys(TABLES) as TableName[]) {
      new CfnOutput(this, `${TABLES[name].localName}TableName`, { value: tables.table(name).tableName });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: dashboard.dashboardName });
    const consoleHome = `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}`;
    new CfnOutput(this, 'DashboardUrl', {
      value: `${consoleHome}#dashboards/dashboard/${dashboard.dashboardName}`,
      description: 'The CloudWatch dashboard of the service, in the AWS console',
    });

    this.tables = tables;
    this.payloads = payloads;
    this.queues = queues;
    this.functions = { ingest, subscriptions, consumer, operations, lagMetrics: lagMetrics.handler };
    this.lagMetrics = lagMetrics;
    this.api = api;
    this.alarms = alarms;
    this.dashboard = dashboard;
  }
}

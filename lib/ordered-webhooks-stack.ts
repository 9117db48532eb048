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
 * state, the lag job, its alarms and its dashboard. This class only wires constructs; each grant
 * below also hands the function the name of what it is granted, so a function knows exactly what
 * it may use.
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

    // Each function is granted exactly the calls of its adapters, each on exactly its resource.
    const ingest = new HandlerFunction(this, 'Ingest', { handler: 'ingest', environment });
    // The tenants of the request's subscriptions, in one BatchGetItem per 100.
    tables.grantItemActions('subscriptions', ingest.function, ['dynamodb:BatchGetItem']);
    // The request's known event ids (BatchGetItem), then one conditional UpdateItem per new event.
    tables.grantItemActions('events', ingest.function, ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem']);
    // One UpdateItem per group per request adds the request's events to the group's lag.
    tables.grantItemActions('groups', ingest.function, ['dynamodb:UpdateItem']);
    // One consistent GetItem of the routing per request, so that a pause takes effect at once.
    tables.grantItemActions('settings', ingest.function, ['dynamodb:GetItem']);
    queues.grantSendToDelivery(ingest.function);

    const subscriptions = new HandlerFunction(this, 'Subscriptions', { handler: 'subscriptions', environment });
    // GET reads one subscription; PUT creates or replaces it with one UpdateItem.
    tables.grantItemActions('subscriptions', subscriptions.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);

    const consumer = new HandlerFunction(this, 'Consumer', {
      handler: 'consumer',
      // Its counts (Powertools Metrics, EMF) go to the namespace its alarms watch.
      environment: { ...environment, POWERTOOLS_METRICS_NAMESPACE: CONSUMER_METRICS.namespace },
      timeout: Duration.seconds(consumerTimeoutSeconds(config)),
    });
    // The target of each subscription of the batch.
    tables.grantItemActions('subscriptions', consumer.function, ['dynamodb:GetItem']);
    // Whether the event is settled already (GetItem), then its delivery or dead-lettering.
    tables.grantItemActions('events', consumer.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // A dead letter is written whole (PutItem), counted (UpdateItem), and, when large, its event first to the bucket.
    tables.grantItemActions('deadLetters', consumer.function, ['dynamodb:PutItem', 'dynamodb:UpdateItem']);
    payloads.grantObjectActions(consumer.function, ['s3:PutObject']);
    // The head's sequence number and attempts by conditional writes, read back when refused.
    tables.grantItemActions('orderingKeys', consumer.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // One UpdateItem per group per batch records its progress, one more forgets a drained group.
    tables.grantItemActions('groups', consumer.function, ['dynamodb:UpdateItem']);
    queues.addConsumer(consumer.function, { maxConcurrency: config.consumerConcurrency });
    queues.grantSendToDeadLetter(consumer.function);

    const operations = new HandlerFunction(this, 'Operations', {
      handler: 'operations',
      environment,
      timeout: OPERATIONS_TIMEOUT,
    });
    // Lists only the sparse indexes, so its cost follows the active groups and the dead letters,
    // and is granted exactly the item calls of its routes.
    tables.grantQueryIndex('groups', 'active-groups', operations.function);
    // Skip reads a group's head; redrive moves a group's counts (the conditional writes of intake).
    tables.grantItemActions('groups', operations.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // Dead letters: listed and read by Query, removed when redriven, counted; written by the import.
    tables.grantItemActions('deadLetters', operations.function, ['dynamodb:Query', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:PutItem']);
    payloads.grantObjectActions(operations.function, ['s3:GetObject', 's3:DeleteObject', 's3:PutObject']);
    // The import reads whether an imported event was settled, and records it dead-lettered.
    tables.grantItemActions('events', operations.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // A redrive names an existing subscription.
    tables.grantItemActions('subscriptions', operations.function, ['dynamodb:GetItem']);
    // Skip asks the consumer, on the key's item, to dead-letter the head; the import reads the head.
    tables.grantItemActions('orderingKeys', operations.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // Routing: read, pause, resume and switch, by conditional writes of the one item.
    tables.grantItemActions('settings', operations.function, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    queues.grantRedrive(operations.function);
    queues.grantImportBackstop(operations.function);
    // GET /v1/routing shows, and PUT /v1/routing checks, the delivery queue's counts.
    queues.grantReadDeliveryCounts(operations.function);

    const lagMetrics = new LagMetricsJob(this, 'LagMetrics', { environment });
    tables.grantQueryIndex('groups', 'active-groups', lagMetrics.handler.function);

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

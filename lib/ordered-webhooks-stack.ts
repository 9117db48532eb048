import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { Config } from '../lambda/config.js';
import { TABLES } from '../lambda/resources.js';
import type { DeliveryAlarms } from './alarms.js';
import type { WebhookApi } from './api.js';
import type { DeliveryQueues } from './delivery-queues.js';
import type { HandlerFunction, HandlerName } from './handler-function.js';
import type { LagMetricsJob } from './lag-metrics-job.js';
import type { OperationsDashboard } from './operations-dashboard.js';
import { OrderedWebhooks, propsOf } from './ordered-webhooks.js';
import type { PayloadBucket } from './payload-bucket.js';
import type { StateTables, TableName } from './state-tables.js';

/** Properties of {@link OrderedWebhooksStack}. */
export interface OrderedWebhooksStackProps extends StackProps {
  /** The validated configuration (`loadConfig(env, Deployment.deployed)`). */
  readonly config: Config;
}

/**
 * The stack `cdk deploy` deploys from this repository (bin/app.ts): one {@link OrderedWebhooks},
 * built from the configuration read from the environment, and the outputs an operator needs.
 *
 * The construct's id is `Default`, which the CDK leaves out of logical ids: its resources keep the
 * logical ids they had when this stack held them itself, so a deployed stack updates in place.
 */
export class OrderedWebhooksStack extends Stack {
  readonly webhooks: OrderedWebhooks;
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
    const webhooks = new OrderedWebhooks(this, 'Default', propsOf(props.config));
    const { tables, queues, api, dashboard } = webhooks;

    new CfnOutput(this, 'ApiUrl', {
      value: api.url,
      description: 'Base URL of the HTTP API; requests are signed with SigV4 for the service execute-api',
    });
    new CfnOutput(this, 'DeliveryQueueUrl', { value: queues.deliveryQueue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: queues.deadLetterQueue.queueUrl });
    for (const name of Object.keys(TABLES) as TableName[]) {
      new CfnOutput(this, `${TABLES[name].localName}TableName`, { value: tables.table(name).tableName });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: webhooks.alarmTopic.topicArn });
    new CfnOutput(this, 'NoticeTopicArn', { value: webhooks.noticeTopic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: dashboard.dashboardName });
    const consoleHome = `https://console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}`;
    new CfnOutput(this, 'DashboardUrl', {
      value: `${consoleHome}#dashboards/dashboard/${dashboard.dashboardName}`,
      description: 'The CloudWatch dashboard of the service, in the AWS console',
    });

    this.webhooks = webhooks;
    this.tables = tables;
    this.payloads = webhooks.payloads;
    this.queues = queues;
    this.functions = webhooks.functions;
    this.lagMetrics = webhooks.lagMetrics;
    this.api = api;
    this.alarms = webhooks.alarms;
    this.dashboard = dashboard;
  }
}

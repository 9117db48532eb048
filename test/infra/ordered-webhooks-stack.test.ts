/**
 * The properties of the deployed stack the design relies on, one `describe` per construct. The
 * stack is synthesized once for the file (the first synthesis of a process costs about 1.5 s),
 * with non-default settings so that each derived value shows it follows the configuration.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  backstopMaxReceiveCount,
  CONSUMER_BATCH_SIZE,
  consumerTimeoutSeconds,
  queueVisibilityTimeoutSeconds,
  toEnvironment,
} from '../../lambda/config.js';
import { CONSUMER_RESOURCES } from '../../lambda/handlers/consumer.js';
import { INGEST_RESOURCES } from '../../lambda/handlers/ingest.js';
import { SUBSCRIPTIONS_RESOURCES } from '../../lambda/handlers/subscriptions.js';
import { QUEUES, RESOURCE_ENV_VARS, TABLES } from '../../lambda/resources.js';
import { HANDLER_ENTRIES, ROUTES, type ApiFunction } from '../../lambda/routes.js';
import type { HandlerName } from '../../lib/handler-function.js';
import type { TableName } from '../../lib/state-tables.js';
import {
  actionsOn,
  environmentOf,
  functionResource,
  grantedResources,
  logicalIdOf,
  permissionsOf,
  resourceOf,
  resourcesOfType,
  synthesize,
  type Permission,
  type SynthesizedStack,
} from './synthesize.js';

const CONFIGURED = {
  DELIVERY_TIMEOUT_MS: '30000',
  MAX_DELIVERY_ATTEMPTS: '8',
  CONSUMER_CONCURRENCY: '7',
  OLDEST_MESSAGE_ALARM_SECONDS: '600',
  LOG_LEVEL: 'debug',
};

const HANDLERS = Object.keys(HANDLER_ENTRIES) as HandlerName[];
const TABLE_NAMES = Object.keys(TABLES) as TableName[];
const ROUTE_CASES = (Object.keys(ROUTES) as ApiFunction[]).flatMap((name) =>
  ROUTES[name].map((routeKey) => ({ name, routeKey })),
);

const FOURTEEN_DAYS_SECONDS = 14 * 24 * 60 * 60;
const DYNAMODB_WRITES = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];
const SQS_CONSUME = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:ReceiveMessage'];
const SQS_SEND = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];

let synthesized: SynthesizedStack;
beforeAll(() => {
  synthesized = synthesize(CONFIGURED);
});

describe('StateTables', () => {
  const tableResource = (name: TableName) =>
    resourceOf(synthesized.template, logicalIdOf(synthesized.stack, synthesized.stack.tables.table(name).tableName));

  it('declares one table per definition in TABLES and no other', () => {
    expect(resourcesOfType(synthesized.template, 'AWS::DynamoDB::Table').size).toBe(TABLE_NAMES.length);
  });

  it.each(TABLE_NAMES)('keys the %s table by its string partition key alone', (name) => {
    const { Properties } = tableResource(name);
    expect(Properties.KeySchema).toEqual([{ AttributeName: TABLES[name].partitionKey, KeyType: 'HASH' }]);
    expect(Properties.AttributeDefinitions).toEqual([{ AttributeName: TABLES[name].partitionKey, AttributeType: 'S' }]);
  });

  it.each(TABLE_NAMES)('bills %s on demand, encrypts it, recovers it to a point in time and retains it', (name) => {
    const table = tableResource(name);
    expect(table.Properties).toMatchObject({
      BillingMode: 'PAY_PER_REQUEST',
      SSESpecification: { SSEEnabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
    expect(table.DeletionPolicy).toBe('Retain');
  });

  it('expires events by their TTL attribute', () => {
    expect(tableResource('events').Properties.TimeToLiveSpecification).toEqual({
      AttributeName: TABLES.events.ttlAttribute,
      Enabled: true,
    });
  });

  // A subscription's secret and an ordering key's last sequence number must outlive any event.
  it.each<TableName>(['subscriptions', 'orderingKeys'])('never expires items of %s', (name) => {
    expect(tableResource(name).Properties.TimeToLiveSpecification).toBeUndefined();
  });
});

describe('DeliveryQueues', () => {
  const HIGH_THROUGHPUT_FIFO = {
    FifoQueue: true,
    ContentBasedDeduplication: false,
    DeduplicationScope: 'messageGroup',
    FifoThroughputLimit: 'perMessageGroupId',
    SqsManagedSseEnabled: true,
    MessageRetentionPeriod: FOURTEEN_DAYS_SECONDS,
  };
  const queueResource = (which: 'deliveryQueue' | 'deadLetterQueue') =>
    resourceOf(synthesized.template, logicalIdOf(synthesized.stack, synthesized.stack.queues[which].queueUrl));

  it('makes the delivery queue a high-throughput FIFO queue, deduplicated by id, encrypted, kept 14 days', () => {
    expect(queueResource('deliveryQueue').Properties).toMatchObject(HIGH_THROUGHPUT_FIFO);
  });

  it('makes the dead-letter queue a FIFO queue with the same settings and no redrive of its own', () => {
    expect(queueResource('deadLetterQueue').Properties).toMatchObject(HIGH_THROUGHPUT_FIFO);
    expect(queueResource('deadLetterQueue').Properties.RedrivePolicy).toBeUndefined();
  });

  it('sets the visibility timeout to 6 × the consumer timeout', () => {
    const { config } = synthesized;
    expect(queueVisibilityTimeoutSeconds(config)).toBe(6 * consumerTimeoutSeconds(config));
    expect(queueResource('deliveryQueue').Properties.VisibilityTimeout).toBe(6 * consumerTimeoutSeconds(config));
  });

  it('redrives to the dead-letter queue only as a backstop above every real attempt', () => {
    const { stack, config } = synthesized;
    expect(backstopMaxReceiveCount(config)).toBeGreaterThanOrEqual(10);
    expect(backstopMaxReceiveCount(config)).toBeGreaterThan(config.maxDeliveryAttempts * CONSUMER_BATCH_SIZE);
    expect(queueResource('deliveryQueue').Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: stack.resolve(stack.queues.deadLetterQueue.queueArn),
      maxReceiveCount: backstopMaxReceiveCount(config),
    });
  });

  it.each(['deliveryQueue', 'deadLetterQueue'] as const)('refuses requests without TLS on the %s', (which) => {
    const { stack, template } = synthesized;
    const queueUrl = JSON.stringify(stack.resolve(stack.queues[which].queueUrl));
    const policies = [...resourcesOfType(template, 'AWS::SQS::QueuePolicy').values()].filter((policy) =>
      JSON.stringify(policy.Properties.Queues).includes(queueUrl),
    );
    expect(policies).toHaveLength(1);
    expect(policies[0]?.Properties.PolicyDocument).toMatchObject({
      Statement: expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Principal: { AWS: '*' },
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ]),
    });
  });

  it('feeds the consumer batches of 10 with partial batch responses, at the configured concurrency', () => {
    const { stack, template, config } = synthesized;
    const mappings = [...resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').values()];
    expect(mappings).toHaveLength(1);
    expect(config.consumerConcurrency).toBe(7);
    expect(mappings[0]?.Properties).toEqual(
      expect.objectContaining({
        EventSourceArn: stack.resolve(stack.queues.deliveryQueue.queueArn),
        FunctionName: stack.resolve(stack.functions.consumer.function.functionName),
        BatchSize: CONSUMER_BATCH_SIZE,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 7 },
      }),
    );
    // Lambda takes no batching window for FIFO event sources.
    expect(mappings[0]?.Properties.MaximumBatchingWindowInSeconds).toBeUndefined();
  });
});

describe('HandlerFunction', () => {
  const functionOf = (handler: HandlerName) => functionResource(synthesized, handler);

  it.each(HANDLERS)('runs %s on Node.js 24, arm64, 256 MB, with the configuration in its environment', (handler) => {
    const { stack, config } = synthesized;
    const fn = stack.functions[handler];
    expect(functionOf(handler).Properties).toEqual(
      expect.objectContaining({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: 256,
        Handler: 'index.handler',
        Role: stack.resolve(fn.role.roleArn),
        LoggingConfig: { LogGroup: stack.resolve(fn.logGroup.logGroupName) },
      }),
    );
    expect(environmentOf(synthesized, handler)).toEqual(
      expect.objectContaining({ ...toEnvironment(config), POWERTOOLS_SERVICE_NAME: `ordered-webhooks-${handler}` }),
    );
    expect(environmentOf(synthesized, handler).LOG_LEVEL).toBe('DEBUG');
  });

  it.each(HANDLERS)('logs %s to its own log group with a retention period', (handler) => {
    const { stack, template } = synthesized;
    const logGroup = resourceOf(template, logicalIdOf(stack, stack.functions[handler].logGroup.logGroupName));
    expect(logGroup).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
  });

  it('gives the consumer the timeout derived from the delivery timeout', () => {
    expect(consumerTimeoutSeconds(synthesized.config)).toBe(330);
    expect(functionOf('consumer').Properties.Timeout).toBe(330);
  });

  it('keeps the API functions within API Gateway’s 30 s integration timeout', () => {
    expect(functionOf('ingest').Properties.Timeout).toBeLessThanOrEqual(30);
    expect(functionOf('subscriptions').Properties.Timeout).toBeLessThanOrEqual(30);
  });

  it('attaches no managed policy to any function role', () => {
    const roles = resourcesOfType(synthesized.template, 'AWS::IAM::Role');
    expect(roles.size).toBe(HANDLERS.length);
    for (const role of roles.values()) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });
});

describe('permissions', () => {
  const permissions = (handler: HandlerName): Permission[] =>
    permissionsOf(synthesized.template, synthesized.stack.resolve(synthesized.stack.functions[handler].role.roleName));
  const table = (name: TableName): unknown => synthesized.stack.resolve(synthesized.stack.tables.table(name).tableArn);
  const deliveryQueue = (): unknown => synthesized.stack.resolve(synthesized.stack.queues.deliveryQueue.queueArn);
  const deadLetterQueue = (): unknown => synthesized.stack.resolve(synthesized.stack.queues.deadLetterQueue.queueArn);
  const logGroup = (handler: HandlerName): unknown =>
    synthesized.stack.resolve(synthesized.stack.functions[handler].logGroup.logGroupArn);
  const asJson = (values: readonly unknown[]): string[] => values.map((value) => JSON.stringify(value)).sort();

  it('lets ingest read subscriptions, write events and only send to the delivery queue', () => {
    const granted = permissions('ingest');
    expect(grantedResources(granted)).toEqual(
      asJson([logGroup('ingest'), table('subscriptions'), table('events'), deliveryQueue()]),
    );
    expect(actionsOn(granted, table('subscriptions'))).toContain('dynamodb:GetItem');
    for (const write of DYNAMODB_WRITES) expect(actionsOn(granted, table('subscriptions'))).not.toContain(write);
    expect(actionsOn(granted, table('events'))).toEqual(expect.arrayContaining(DYNAMODB_WRITES));
    expect(actionsOn(granted, deliveryQueue())).toEqual(SQS_SEND);
  });

  it('lets subscriptions read and write the subscriptions table and nothing else', () => {
    const granted = permissions('subscriptions');
    expect(grantedResources(granted)).toEqual(asJson([logGroup('subscriptions'), table('subscriptions')]));
    expect(actionsOn(granted, table('subscriptions'))).toEqual(expect.arrayContaining(DYNAMODB_WRITES));
    expect(granted.filter((permission) => permission.action.startsWith('sqs:'))).toEqual([]);
  });

  it('lets the consumer consume the delivery queue, dead-letter, keep state and only read subscriptions', () => {
    const granted = permissions('consumer');
    expect(grantedResources(granted)).toEqual(
      asJson([
        logGroup('consumer'),
        table('subscriptions'),
        table('events'),
        table('orderingKeys'),
        deliveryQueue(),
        deadLetterQueue(),
      ]),
    );
    for (const write of DYNAMODB_WRITES) expect(actionsOn(granted, table('subscriptions'))).not.toContain(write);
    expect(actionsOn(granted, table('events'))).toEqual(expect.arrayContaining(DYNAMODB_WRITES));
    expect(actionsOn(granted, table('orderingKeys'))).toEqual(expect.arrayContaining(DYNAMODB_WRITES));
    expect(actionsOn(granted, deliveryQueue())).toEqual(expect.arrayContaining(SQS_CONSUME));
    expect(actionsOn(granted, deliveryQueue())).not.toContain('sqs:SendMessage');
    expect(actionsOn(granted, deadLetterQueue())).toEqual(SQS_SEND);
  });

  it.each(HANDLERS)('lets %s write only its own log group, with no wildcard action or resource', (handler) => {
    const granted = permissions(handler);
    expect(actionsOn(granted, logGroup(handler))).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(granted.filter((permission) => permission.action.startsWith('logs:'))).toHaveLength(2);
    expect(granted.filter((permission) => permission.action.includes('*') || permission.resource === '*')).toEqual([]);
  });

  it('tells each function the names of exactly the resources it is granted', () => {
    const { stack } = synthesized;
    const resourceVariables = new Set<string>([
      ...Object.values(TABLES).map((definition) => definition.envVar),
      ...Object.values(QUEUES).map((definition) => definition.envVar),
    ]);
    const variablesOf = (handler: HandlerName): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(environmentOf(synthesized, handler)).filter(([name]) => resourceVariables.has(name)),
      );
    const tableName = (name: TableName): unknown => stack.resolve(stack.tables.table(name).tableName);
    const deliveryUrl = stack.resolve(stack.queues.deliveryQueue.queueUrl);
    const deadLetterUrl = stack.resolve(stack.queues.deadLetterQueue.queueUrl);

    expect(variablesOf('ingest')).toEqual({
      [TABLES.subscriptions.envVar]: tableName('subscriptions'),
      [TABLES.events.envVar]: tableName('events'),
      [QUEUES.delivery.envVar]: deliveryUrl,
    });
    expect(variablesOf('subscriptions')).toEqual({ [TABLES.subscriptions.envVar]: tableName('subscriptions') });
    expect(variablesOf('consumer')).toEqual({
      [TABLES.subscriptions.envVar]: tableName('subscriptions'),
      [TABLES.events.envVar]: tableName('events'),
      [TABLES.orderingKeys.envVar]: tableName('orderingKeys'),
      [QUEUES.delivery.envVar]: deliveryUrl,
      [QUEUES.deadLetter.envVar]: deadLetterUrl,
    });
  });

  it.each([
    { handler: 'ingest' as const, needs: INGEST_RESOURCES },
    { handler: 'subscriptions' as const, needs: SUBSCRIPTIONS_RESOURCES },
    { handler: 'consumer' as const, needs: CONSUMER_RESOURCES },
  ])('gives the $handler function every resource name its handler reads at cold start', ({ handler, needs }) => {
    const environment = environmentOf(synthesized, handler);
    expect(Object.keys(environment)).toEqual(expect.arrayContaining(needs.map((name) => RESOURCE_ENV_VARS[name])));
  });
});

describe('WebhookApi', () => {
  const routeSchema = z.object({
    RouteKey: z.string(),
    AuthorizationType: z.string().optional(),
    Target: z.object({
      'Fn::Join': z.tuple([z.literal(''), z.tuple([z.literal('integrations/'), z.object({ Ref: z.string() })])]),
    }),
  });
  const routes = () =>
    [...resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route').values()].map((route) =>
      routeSchema.parse(route.Properties),
    );

  it('declares exactly the routes of ROUTES', () => {
    expect(routes().map((route) => route.RouteKey).sort()).toEqual(ROUTE_CASES.map(({ routeKey }) => routeKey).sort());
  });

  it('requires IAM (SigV4) authorization on every route', () => {
    expect(routes()).toHaveLength(ROUTE_CASES.length);
    const unsigned = routes().filter((route) => route.AuthorizationType !== 'AWS_IAM');
    expect(unsigned.map((route) => route.RouteKey)).toEqual([]);
  });

  it.each(ROUTE_CASES)('sends $routeKey to the $name function with payload format 2.0', ({ name, routeKey }) => {
    const { stack, template } = synthesized;
    const route = routes().find((candidate) => candidate.RouteKey === routeKey);
    expect(route).toBeDefined();
    const integrationId = route?.Target['Fn::Join'][1][1].Ref ?? '';
    expect(resourceOf(template, integrationId).Properties).toMatchObject({
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: stack.resolve(stack.functions[name].function.functionArn),
      PayloadFormatVersion: '2.0',
    });
  });

  it('serves the $default stage, deployed automatically, with JSON access logs kept for a year', () => {
    const { stack, template } = synthesized;
    const stages = [...resourcesOfType(template, 'AWS::ApiGatewayV2::Stage').values()];
    expect(stages).toHaveLength(1);
    const stage = stages[0]?.Properties;
    expect(stage).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: stack.resolve(stack.api.accessLogGroup.logGroupArn) },
    });
    const { Format } = z.object({ Format: z.string() }).parse(stage?.AccessLogSettings);
    expect(JSON.parse(Format)).toMatchObject({ requestId: '$context.requestId', caller: '$context.identity.caller' });
    const logGroup = resourceOf(template, logicalIdOf(stack, stack.api.accessLogGroup.logGroupName));
    expect(logGroup.Properties.RetentionInDays).toBe(365);
  });
});

describe('DeliveryAlarms', () => {
  const alarmProperties = (which: 'oldestMessageAlarm' | 'deadLetterAlarm') =>
    resourceOf(synthesized.template, logicalIdOf(synthesized.stack, synthesized.stack.alarms[which].alarmName))
      .Properties;

  it('alarms when the delivery queue’s oldest message reaches the configured age', () => {
    const { stack, config } = synthesized;
    expect(config.oldestMessageAlarmSeconds).toBe(600);
    expect(alarmProperties('oldestMessageAlarm')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: stack.resolve(stack.queues.deliveryQueue.queueName) }],
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 600,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
    });
  });

  it('alarms on the first dead letter and treats missing data as not breaching', () => {
    const { stack } = synthesized;
    expect(alarmProperties('deadLetterAlarm')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: stack.resolve(stack.queues.deadLetterQueue.queueName) }],
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it.each(['oldestMessageAlarm', 'deadLetterAlarm'] as const)(
    'notifies the topic when %s fires and when it recovers',
    (which) => {
      const topic = synthesized.stack.resolve(synthesized.stack.alarms.topic.topicArn);
      expect(alarmProperties(which)).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
    },
  );

  it('refuses publications to the topic without TLS', () => {
    const { stack, template } = synthesized;
    const policies = [...resourcesOfType(template, 'AWS::SNS::TopicPolicy').values()];
    expect(policies).toHaveLength(1);
    expect(policies[0]?.Properties).toMatchObject({
      Topics: [stack.resolve(stack.alarms.topic.topicArn)],
      PolicyDocument: {
        Statement: expect.arrayContaining([
          expect.objectContaining({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('subscribes no e-mail address when ALARM_EMAIL is unset', () => {
    expect(synthesized.config.alarmEmail).toBeUndefined();
    expect(resourcesOfType(synthesized.template, 'AWS::SNS::Subscription').size).toBe(0);
  });

  it('subscribes the address when ALARM_EMAIL is set', () => {
    const { stack, template } = synthesize({ ...CONFIGURED, ALARM_EMAIL: 'oncall@example.com' });
    const subscriptions = [...resourcesOfType(template, 'AWS::SNS::Subscription').values()];
    expect(subscriptions.map((subscription) => subscription.Properties)).toEqual([
      expect.objectContaining({
        Protocol: 'email',
        Endpoint: 'oncall@example.com',
        TopicArn: stack.resolve(stack.alarms.topic.topicArn),
      }),
    ]);
  });
});

describe('outputs', () => {
  it('outputs the API URL, both queue URLs and the alarm topic', () => {
    const { stack, template } = synthesized;
    template.hasOutput('ApiUrl', { Value: stack.resolve(stack.api.url) });
    expect(JSON.stringify(stack.resolve(stack.api.url))).toContain('execute-api');
    template.hasOutput('DeliveryQueueUrl', { Value: stack.resolve(stack.queues.deliveryQueue.queueUrl) });
    template.hasOutput('DeadLetterQueueUrl', { Value: stack.resolve(stack.queues.deadLetterQueue.queueUrl) });
    template.hasOutput('AlarmTopicArn', { Value: stack.resolve(stack.alarms.topic.topicArn) });
  });

  it.each(TABLE_NAMES)('outputs the name of the %s table', (name) => {
    const { stack, template } = synthesized;
    template.hasOutput(`${TABLES[name].localName}TableName`, {
      Value: stack.resolve(stack.tables.table(name).tableName),
    });
  });

  it('outputs nothing else', () => {
    expect(Object.keys(synthesized.template.findOutputs('*')).sort()).toEqual(
      [
        'AlarmTopicArn',
        'ApiUrl',
        'DeadLetterQueueUrl',
        'DeliveryQueueUrl',
        ...TABLE_NAMES.map((name) => `${TABLES[name].localName}TableName`),
      ].sort(),
    );
  });
});

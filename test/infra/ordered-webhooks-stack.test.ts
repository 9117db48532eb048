/**
 * The properties of the deployed stack the design relies on, one `describe` per construct. The
 * stack is synthesized once for the file (the first synthesis of a process costs about 1.5 s),
 * with non-default settings so that each derived value shows it follows the configuration.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  backstopMaxReceiveCount,
  CONSUMER_BATCH_SIZE,
  consumerTimeoutSeconds,
  queueVisibilityTimeoutSeconds,
  REDRIVE_STEP_SECONDS,
  toEnvironment,
  SERVICE_NAMES,
} from '../../lambda/config.js';
import { CONSUMER_METRICS } from '../../lambda/core/consumer-metrics.js';
import { FALLING_BEHIND_MESSAGE, LAG_METRICS } from '../../lambda/core/lag.js';
import { PAUSE_GRACE_SECONDS } from '../../lambda/core/routing-settings.js';
import { isUnscopedAction, NO_RESOURCE, UNSCOPED_ACTIONS, type Access, type IamAction, type ResourceName } from '../../lambda/adapters/access.js';
import { CONSUMER_ACCESS, CONSUMER_RESOURCES } from '../../lambda/handlers/consumer.js';
import { INGEST_ACCESS, INGEST_RESOURCES } from '../../lambda/handlers/ingest.js';
import { LAG_METRICS_ACCESS, LAG_METRICS_RESOURCES } from '../../lambda/handlers/lag-metrics.js';
import { OPERATIONS_ACCESS, OPERATIONS_RESOURCES } from '../../lambda/handlers/operations.js';
import { SUBSCRIPTIONS_ACCESS, SUBSCRIPTIONS_RESOURCES } from '../../lambda/handlers/subscriptions.js';
import { ESTIMATES } from '../../bench/prices.js';
import { NOTICE_TOPIC, PAYLOAD_BUCKET, PAYLOAD_OBJECT_PREFIX, QUEUES, RESOURCE_ENV_VARS, TABLES, type ResourceNames, type TableDefinition } from '../../lambda/resources.js';
import { HANDLER_ENTRIES, ROUTES, type ApiFunction } from '../../lambda/routes.js';
import type { HandlerName } from '../../lib/handler-function.js';
import { OrderedWebhooksStack } from '../../lib/ordered-webhooks-stack.js';
import { KEEP_RETIRED_INDEXES_CONTEXT, type TableName } from '../../lib/state-tables.js';
import {
  actionsByResource,
  actionsOn,
  createApp,
  dashboardBodyOf,
  environmentOf,
  functionResource,
  grantedResources,
  logicalIdOf,
  permissionsOf,
  resourceOf,
  resourcesOfType,
  synthesize,
  SYNTHESIS_TIMEOUT_MS,
  type Permission,
  type SynthesizedStack,
} from './synthesize.js';

const CONFIGURED = {
  DELIVERY_TIMEOUT_MS: '30000',
  MAX_DELIVERY_ATTEMPTS: '8',
  CONSUMER_CONCURRENCY: '7',
  OLDEST_MESSAGE_ALARM_SECONDS: '600',
  STALL_THRESHOLD_SECONDS: '120',
  MAX_GROUP_WAIT_ALARM_SECONDS: '1200',
  STALLED_GROUPS_ALARM_THRESHOLD: '3',
  FALLING_BEHIND_WAIT_SECONDS: '240',
  LOG_LEVEL: 'debug',
};

const HANDLERS = Object.keys(HANDLER_ENTRIES) as HandlerName[];
const API_FUNCTIONS = Object.keys(ROUTES) as ApiFunction[];
const TABLE_NAMES = Object.keys(TABLES) as TableName[];
/** Every table's definition, widened so that the optional fields can be read on each. */
const DEFINITIONS: Readonly<Record<TableName, TableDefinition>> = TABLES;
const ROUTE_CASES = API_FUNCTIONS.flatMap((name) =>
  ROUTES[name].map((routeKey) => ({ name, routeKey })),
);

const FOURTEEN_DAYS_SECONDS = 14 * 24 * 60 * 60;
const DYNAMODB_WRITES = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

let synthesized: SynthesizedStack;
beforeAll(() => {
  synthesized = synthesize(CONFIGURED);
}, SYNTHESIS_TIMEOUT_MS);

describe('StateTables', () => {
  const tableResource = (name: TableName) =>
    resourceOf(synthesized.template, logicalIdOf(synthesized.stack, synthesized.stack.tables.table(name).tableName));

  it('declares one table per definition in TABLES and no other', () => {
    expect(resourcesOfType(synthesized.template, 'AWS::DynamoDB::Table').size).toBe(TABLE_NAMES.length);
  });

  it.each(TABLE_NAMES)('keys the %s table by its string partition key, and its string sort key when it has one', (name) => {
    const { Properties } = tableResource(name);
    const sortKey = DEFINITIONS[name].sortKey;
    expect(Properties.KeySchema).toEqual([
      { AttributeName: TABLES[name].partitionKey, KeyType: 'HASH' },
      ...(sortKey === undefined ? [] : [{ AttributeName: sortKey, KeyType: 'RANGE' }]),
    ]);
    // Index keys are attributes too; every key is a string.
    const indexKeys = (DEFINITIONS[name].indexes ?? []).flatMap((index) => [index.partitionKey, index.sortKey ?? []]);
    const keys = new Set([TABLES[name].partitionKey, ...(sortKey === undefined ? [] : [sortKey]), ...indexKeys.flat()]);
    const attributes = z
      .array(z.object({ AttributeName: z.string(), AttributeType: z.string() }))
      .parse(Properties.AttributeDefinitions);
    expect(attributes.map(({ AttributeName }) => AttributeName).sort()).toEqual([...keys].sort());
    expect(attributes.filter(({ AttributeType }) => AttributeType !== 'S')).toEqual([]);
  });

  it.each(TABLE_NAMES)('declares the secondary indexes of %s from its definition, with its projection', (name) => {
    const expected = (DEFINITIONS[name].indexes ?? []).map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        ...(index.sortKey === undefined ? [] : [{ AttributeName: index.sortKey, KeyType: 'RANGE' }]),
      ],
      // No ProvisionedThroughput: the indexes are billed on demand with their table.
      Projection: { ProjectionType: index.projection },
    }));
    expect(tableResource(name).Properties.GlobalSecondaryIndexes ?? []).toEqual(expected);
  });

  it('keeps dead letters by subscription in position order, with no index, and indexes the keys of active groups by lag shard', () => {
    expect(tableResource('deadLetters').Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'subscription_id', KeyType: 'HASH' },
        { AttributeName: 'position', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
    });
    expect(tableResource('deadLetters').Properties.GlobalSecondaryIndexes).toBeUndefined();
    expect(tableResource('events').Properties.GlobalSecondaryIndexes).toBeUndefined();
    // Keys only: a group's writes change its lag, not its keys, so the index is written only
    // when a group becomes active or drains. The retired `active-groups` (projecting ALL) is gone.
    expect(tableResource('groups').Properties.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'active-group-keys',
        KeySchema: [{ AttributeName: 'lag_shard', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ]);
  });

  it('declares the retired active-groups index beside its replacement only when the upgrade context asks for it', () => {
    const app = createApp();
    app.node.setContext(KEEP_RETIRED_INDEXES_CONTEXT, 'true');
    const upgrading = new OrderedWebhooksStack(app, 'OrderedWebhooks', { config: synthesized.config });
    const groups = Template.fromStack(upgrading).findResources('AWS::DynamoDB::Table');
    const indexes = Object.values(groups).flatMap((table) => z.object({ Properties: z.object({ GlobalSecondaryIndexes: z.array(z.unknown()).optional() }) }).parse(table).Properties.GlobalSecondaryIndexes ?? []);
    expect(indexes).toEqual([
      { IndexName: 'replays-under-way', KeySchema: [{ AttributeName: 'replay_shard', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
      {
        IndexName: 'tenant-subscriptions',
        KeySchema: [
          { AttributeName: 'tenant_id', KeyType: 'HASH' },
          { AttributeName: 'subscription_id', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      { IndexName: 'active-group-keys', KeySchema: [{ AttributeName: 'lag_shard', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } },
      { IndexName: 'active-groups', KeySchema: [{ AttributeName: 'lag_shard', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } },
    ]);
    // Nothing is granted the retired index: it is kept only so that CloudFormation adds one index per update.
    expect(JSON.stringify(Template.fromStack(upgrading).findResources('AWS::IAM::Policy'))).not.toContain('/index/active-groups"');
  });

  it('keeps the routing in a settings table keyed by setting alone, with no index and no TTL', () => {
    expect(TABLES.settings.partitionKey).toBe('setting');
    const { Properties } = tableResource('settings');
    expect(Properties.KeySchema).toEqual([{ AttributeName: 'setting', KeyType: 'HASH' }]);
    expect(Properties.AttributeDefinitions).toEqual([{ AttributeName: 'setting', AttributeType: 'S' }]);
    expect(Properties.GlobalSecondaryIndexes).toBeUndefined();
    expect(Properties.TimeToLiveSpecification).toBeUndefined();
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

  // A subscription's secret, an ordering key's last sequence number, a group's lag and the routing
  // in force must outlive any event.
  const WITHOUT_TTL = TABLE_NAMES.filter((name) => DEFINITIONS[name].ttlAttribute === undefined);
  it.each(WITHOUT_TTL)('never expires items of %s', (name) => {
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
    expect(CONSUMER_BATCH_SIZE).toBe(10);
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

  it('creates the consumer, and so its event source mapping, only once its role may receive', () => {
    // Lambda refuses a mapping whose function's role cannot receive from the queue.
    const { stack, template } = synthesized;
    const consumer = stack.functions.consumer;
    const roleRef = JSON.stringify(stack.resolve(consumer.role.roleName));
    const policySchema = z.object({ Properties: z.object({ Roles: z.array(z.unknown()) }) });
    const policies = [...resourcesOfType(template, 'AWS::IAM::Policy').entries()]
      .filter(([, policy]) => JSON.stringify(policySchema.parse(policy).Properties.Roles).includes(roleRef))
      .map(([logicalId]) => logicalId);
    expect(policies).toHaveLength(1);
    const dependsOn = z
      .record(z.string(), z.object({ DependsOn: z.array(z.string()).optional() }))
      .parse(template.toJSON().Resources)[logicalIdOf(stack, consumer.function.functionName)]?.DependsOn;
    expect(dependsOn).toEqual(expect.arrayContaining(policies));
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
    // One name per function (SERVICE_NAMES): the Logger's `service` key and the metrics' `service` dimension.
    const serviceName = SERVICE_NAMES[handler];
    expect(environmentOf(synthesized, handler)).toEqual(
      expect.objectContaining({ ...toEnvironment(config), POWERTOOLS_SERVICE_NAME: serviceName }),
    );
    expect(environmentOf(synthesized, handler).STALL_THRESHOLD_SECONDS).toBe('120');
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

  it.each(API_FUNCTIONS)('keeps the API function %s within API Gateway’s 30 s integration timeout', (name) => {
    expect(functionOf(name).Properties.Timeout).toBeLessThanOrEqual(30);
  });

  it('gives the operations function 29 s: a 20 s redrive step and its last batch, ending before API Gateway does', () => {
    expect(functionOf('operations').Properties.Timeout).toBe(29);
    expect(REDRIVE_STEP_SECONDS + 5).toBeLessThan(29);
  });

  it('lets no ingest request outlive the pause grace of a routing switch', () => {
    // A request that read the routing before a pause must be over when the switch may happen.
    expect(functionOf('ingest').Properties.Timeout).toBeLessThanOrEqual(PAUSE_GRACE_SECONDS);
  });

  it('updates the consumer before ingest, so that no consumer meets a message format it cannot read', () => {
    const { stack, template } = synthesized;
    const dependsOn = z
      .record(z.string(), z.object({ DependsOn: z.array(z.string()).optional() }))
      .parse(template.toJSON().Resources)[logicalIdOf(stack, stack.functions.ingest.function.functionName)]?.DependsOn;
    expect(dependsOn).toContain(logicalIdOf(stack, stack.functions.consumer.function.functionName));
  });

  it('attaches no managed policy to any function role', () => {
    const roles = resourcesOfType(synthesized.template, 'AWS::IAM::Role');
    expect(roles.size).toBe(HANDLERS.length);
    for (const role of roles.values()) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });
});

describe('LagMetricsJob', () => {
  const lagFunctionArn = (): unknown =>
    synthesized.stack.resolve(synthesized.stack.lagMetrics.handler.function.functionArn);
  const ruleArn = (): unknown => synthesized.stack.resolve(synthesized.stack.lagMetrics.rule.ruleArn);

  it('runs the lag job every minute from one enabled EventBridge rule', () => {
    const rules = [...resourcesOfType(synthesized.template, 'AWS::Events::Rule').values()];
    expect(rules).toHaveLength(1);
    expect(rules[0]?.Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect(rules[0]?.Properties.Targets).toEqual([expect.objectContaining({ Arn: lagFunctionArn() })]);
  });

  it('lets only that rule invoke the lag job', () => {
    const { stack, template } = synthesized;
    const functionName = JSON.stringify(stack.resolve(stack.lagMetrics.handler.function.functionName));
    const permissions = [...resourcesOfType(template, 'AWS::Lambda::Permission').values()].filter((permission) =>
      [JSON.stringify(lagFunctionArn()), functionName].includes(JSON.stringify(permission.Properties.FunctionName)),
    );
    expect(permissions.map((permission) => permission.Properties)).toEqual([
      {
        Action: 'lambda:InvokeFunction',
        FunctionName: lagFunctionArn(),
        Principal: 'events.amazonaws.com',
        SourceArn: ruleArn(),
      },
    ]);
  });

  it('gives a run at most its one-minute interval and never retries a failed run', () => {
    const { stack, template } = synthesized;
    expect(functionResource(synthesized, 'lagMetrics').Properties.Timeout).toBe(60);
    const invokeConfigs = [...resourcesOfType(template, 'AWS::Lambda::EventInvokeConfig').values()];
    expect(invokeConfigs.map((config) => config.Properties)).toEqual([
      expect.objectContaining({
        FunctionName: stack.resolve(stack.lagMetrics.handler.function.functionName),
        MaximumRetryAttempts: 0,
        MaximumEventAgeInSeconds: 60,
      }),
    ]);
    const rule = [...resourcesOfType(template, 'AWS::Events::Rule').values()][0];
    expect(rule?.Properties.Targets).toEqual([expect.objectContaining({ RetryPolicy: { MaximumRetryAttempts: 0 } })]);
  });

  it('publishes its metrics under the namespace and service dimension that the alarms watch', () => {
    expect(environmentOf(synthesized, 'lagMetrics')).toMatchObject({
      POWERTOOLS_METRICS_NAMESPACE: LAG_METRICS.namespace,
      POWERTOOLS_SERVICE_NAME: LAG_METRICS.service,
    });
    const metrics = [
      synthesized.stack.lagMetrics.metricMaxOldestWaitSeconds(),
      synthesized.stack.lagMetrics.metricStalledGroups(),
      synthesized.stack.lagMetrics.metricBacklog(),
      synthesized.stack.lagMetrics.metricFallingBehindKeys(),
    ];
    expect(metrics.map((metric) => [metric.namespace, metric.metricName, metric.dimensions])).toEqual(
      [LAG_METRICS.maxOldestWaitSeconds, LAG_METRICS.stalledGroups, LAG_METRICS.backlog, LAG_METRICS.fallingBehindKeys].map((metricName) => [
        LAG_METRICS.namespace,
        metricName,
        { service: LAG_METRICS.service },
      ]),
    );
  });

  it('gives the consumer the namespace its count alarms watch, and no other function a metrics namespace', () => {
    expect(environmentOf(synthesized, 'consumer').POWERTOOLS_METRICS_NAMESPACE).toBe(CONSUMER_METRICS.namespace);
    const others = HANDLERS.filter((handler) => handler !== 'lagMetrics' && handler !== 'consumer');
    const withNamespace = others.filter(
      (handler) => 'POWERTOOLS_METRICS_NAMESPACE' in environmentOf(synthesized, handler),
    );
    expect(withNamespace).toEqual([]);
  });
});

describe('permissions', () => {
  const permissions = (handler: HandlerName): Permission[] =>
    permissionsOf(synthesized.template, synthesized.stack.resolve(synthesized.stack.functions[handler].role.roleName));
  const table = (name: TableName): unknown => synthesized.stack.resolve(synthesized.stack.tables.table(name).tableArn);
  const indexOf = (name: TableName, indexName: string): unknown =>
    synthesized.stack.resolve(`${synthesized.stack.tables.table(name).tableArn}/index/${indexName}`);
  const activeGroupsIndex = (): unknown => indexOf('groups', 'active-group-keys');
  const replaysIndex = (): unknown => indexOf('subscriptions', 'replays-under-way');
  const tenantSubscriptionsIndex = (): unknown => indexOf('subscriptions', 'tenant-subscriptions');
  const payloadObjects = (): unknown => synthesized.stack.resolve(synthesized.stack.payloads.bucket.arnForObjects(`${PAYLOAD_OBJECT_PREFIX}*`));
  const deliveryQueue = (): unknown => synthesized.stack.resolve(synthesized.stack.queues.deliveryQueue.queueArn);
  const deadLetterQueue = (): unknown => synthesized.stack.resolve(synthesized.stack.queues.deadLetterQueue.queueArn);
  const noticeTopic = (): unknown => synthesized.stack.resolve(synthesized.stack.webhooks.noticeTopic.topicArn);
  const logGroup = (handler: HandlerName): unknown =>
    synthesized.stack.resolve(synthesized.stack.functions[handler].logGroup.logGroupArn);
  const asJson = (values: readonly unknown[]): string[] => values.map((value) => JSON.stringify(value)).sort();

  const LOG_WRITES = ['logs:CreateLogStream', 'logs:PutLogEvents'];
  /** Lambda's poller's calls on the delivery queue, made with the consumer's role: AWS's, not the code's. */
  const EVENT_SOURCE_MAPPING_ACTIONS = ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'];

  // Typed by HandlerName: a new function cannot be left out.
  const HANDLER_ACCESS: Readonly<Record<HandlerName, readonly Access[]>> = {
    ingest: INGEST_ACCESS,
    subscriptions: SUBSCRIPTIONS_ACCESS,
    consumer: CONSUMER_ACCESS,
    operations: OPERATIONS_ACCESS,
    lagMetrics: LAG_METRICS_ACCESS,
  };

  /**
   * Each resource as the template names it, resolved here rather than by the stack's grants: the
   * ARN a grant on it names (an index's own ARN, the bucket's objects under their prefix), its
   * environment variable, and the physical name that variable carries. Typed by ResourceName: a
   * new resource cannot be left out.
   */
  interface ResourceInTemplate {
    /** The ARN a grant on it names: the table's, or one of its indexes'. */
    readonly arn: (index?: string) => unknown;
    /** Every ARN a grant on it may name: a table's and each of its indexes'. */
    readonly arns: () => unknown[];
    readonly envVar: string;
    readonly name: () => unknown;
  }
  const RESOURCES: Readonly<Record<ResourceName, ResourceInTemplate>> = (() => {
    const onTable = (name: TableName): ResourceInTemplate => ({
      arn: (index?: string) => (index === undefined ? table(name) : indexOf(name, index)),
      arns: () => [table(name), ...(DEFINITIONS[name].indexes ?? []).map((index) => indexOf(name, index.name))],
      envVar: TABLES[name].envVar,
      name: () => synthesized.stack.resolve(synthesized.stack.tables.table(name).tableName),
    });
    const queueUrl = (queue: () => { readonly queueUrl: string }) => () => synthesized.stack.resolve(queue().queueUrl);
    return {
      subscriptionsTable: onTable('subscriptions'),
      eventsTable: onTable('events'),
      deadLettersTable: onTable('deadLetters'),
      orderingKeysTable: onTable('orderingKeys'),
      groupsTable: onTable('groups'),
      settingsTable: onTable('settings'),
      deliveryQueueUrl: { arn: deliveryQueue, arns: () => [deliveryQueue()], envVar: QUEUES.delivery.envVar, name: queueUrl(() => synthesized.stack.queues.deliveryQueue) },
      deadLetterQueueUrl: { arn: deadLetterQueue, arns: () => [deadLetterQueue()], envVar: QUEUES.deadLetter.envVar, name: queueUrl(() => synthesized.stack.queues.deadLetterQueue) },
      payloadBucket: {
        arn: payloadObjects,
        arns: () => [payloadObjects()],
        envVar: PAYLOAD_BUCKET.envVar,
        name: () => synthesized.stack.resolve(synthesized.stack.payloads.bucket.bucketName),
      },
      noticeTopic: { arn: noticeTopic, arns: () => [noticeTopic()], envVar: NOTICE_TOPIC.envVar, name: noticeTopic },
    };
  })();

  /** A role's whole expected grant, keyed as {@link actionsByResource} keys it, the actions of a resource named twice merged. */
  const expected = (entries: readonly (readonly [unknown, readonly string[]])[]): Record<string, string[]> => {
    const byResource = new Map<string, Set<string>>();
    for (const [resource, actions] of entries) {
      const key = JSON.stringify(resource);
      byResource.set(key, new Set([...(byResource.get(key) ?? []), ...actions]));
    }
    return Object.fromEntries([...byResource].map(([key, actions]) => [key, [...actions].sort()]));
  };

  /** What `handler`'s role must grant: its handler's accesses, its log writes, and for the consumer its mapping's calls. */
  const expectedGrant = (handler: HandlerName): Record<string, string[]> =>
    expected([
      [logGroup(handler), LOG_WRITES],
      ...HANDLER_ACCESS[handler].map((access) => [access.resource === NO_RESOURCE ? NO_RESOURCE : RESOURCES[access.resource].arn(access.index), access.actions] as const),
      ...(handler === 'consumer' ? [[deliveryQueue(), EVENT_SOURCE_MAPPING_ACTIONS] as const] : []),
    ]);

  it.each(HANDLERS)('grants %s exactly the accesses its handler exports, each on its resource, and its log writes', (handler) => {
    expect(actionsByResource(permissions(handler))).toEqual(expectedGrant(handler));
  });

  it('grants the consumer’s event source mapping its calls on the delivery queue, which the consumer’s code does not make', () => {
    expect(actionsOn(permissions('consumer'), deliveryQueue())).toEqual(
      ['sqs:ChangeMessageVisibility', 'sqs:SendMessage', ...EVENT_SOURCE_MAPPING_ACTIONS].sort(),
    );
    // Its code holds and lets go, and sends back events it parked behind a resumed backlog.
    const codeOnDeliveryQueue = CONSUMER_ACCESS.filter((access) => access.resource === 'deliveryQueueUrl').flatMap((access) => access.actions);
    expect([...new Set(codeOnDeliveryQueue)].sort()).toEqual(['sqs:ChangeMessageVisibility', 'sqs:SendMessage']);
  });

  it('lets no function scan a table, write items in batches, or purge a queue', () => {
    const refused = ['dynamodb:Scan', 'dynamodb:BatchWriteItem', 'sqs:PurgeQueue'];
    expect(HANDLERS.flatMap(permissions).filter((permission) => refused.includes(permission.action))).toEqual([]);
  });

  it('lets the operations function put or delete no item but dead letters, and never consume the delivery queue', () => {
    const granted = permissions('operations');
    // It writes and deletes dead letters (the import, the redrive), and no other item.
    for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem']) {
      expect(granted.filter((permission) => permission.action === action).map((permission) => permission.resource)).toEqual([table('deadLetters')]);
    }
    expect(actionsOn(granted, deliveryQueue())).not.toContain('sqs:ReceiveMessage');
    expect(actionsOn(granted, deliveryQueue())).not.toContain('sqs:DeleteMessage');
  });

  it('lets only the consumer receive from or delete on the delivery queue, and only ingest, operations, the lag job, a resume and the consumer (a parked backlog) send to it', () => {
    const granting = (action: string): HandlerName[] => HANDLERS.filter((handler) => actionsOn(permissions(handler), deliveryQueue()).includes(action));
    expect(granting('sqs:ReceiveMessage')).toEqual(['consumer']);
    expect(granting('sqs:DeleteMessage')).toEqual(['consumer']);
    // The lag job steps a replay nobody steps, and sends a resumed subscription's parked backlog
    // back, as a resume does first and the consumer does for events it parks behind one: each
    // sends as the operations function does.
    expect(granting('sqs:SendMessage').sort()).toEqual(['consumer', 'ingest', 'lagMetrics', 'operations', 'subscriptions']);
  });

  it('lets only ingest, the operations function, subscriptions (a resume reads the routing) and the lag job (a replay reads it) reach the settings table, and only operations write it', () => {
    const { stack } = synthesized;
    const settingsId = logicalIdOf(stack, stack.tables.table('settings').tableName);
    const reaching = HANDLERS.filter((handler) =>
      permissions(handler).some((permission) => JSON.stringify(permission.resource).includes(`"${settingsId}"`)),
    );
    expect(reaching.sort()).toEqual(['ingest', 'lagMetrics', 'operations', 'subscriptions']);
    const writers = HANDLERS.filter((handler) =>
      actionsOn(permissions(handler), table('settings')).some((action) => DYNAMODB_WRITES.includes(action)),
    );
    expect(writers).toEqual(['operations']);
  });

  it('lets the subscriptions function write its table, list a tenant\'s, read the lag\'s active groups (for an ordering change and a resume), let held groups go and send a parked backlog back', () => {
    expect(actionsByResource(permissions('subscriptions'))).toEqual(
      expected([
        [logGroup('subscriptions'), LOG_WRITES],
        // A tenant's list: the tenant index's keys, then the items.
        [table('subscriptions'), ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']],
        [tenantSubscriptionsIndex(), ['dynamodb:Query']],
        [activeGroupsIndex(), ['dynamodb:Query']],
        // A resume reads its key's group (or the active ones) and forgets the holds it let go.
        [table('groups'), ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']],
        // The routing in force, for the group of a subscription's key.
        [table('settings'), ['dynamodb:GetItem']],
        // A resume lets held heads go and sends a parked backlog back: no receive, no delete.
        [deliveryQueue(), ['sqs:ChangeMessageVisibility', 'sqs:SendMessage']],
        // The parked backlog: each group's state read, its parked events read (large ones from the
        // bucket), removed once sent, and a park ended (its state deleted) once its copies were settled.
        [table('deadLetters'), ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query']],
        [payloadObjects(), ['s3:DeleteObject', 's3:GetObject']],
      ]),
    );
  });

  it('lets only the consumer, ingest (a large kept event), the operations function, the lag job and a resume (a large kept or parked event) reach the payload objects', () => {
    const reaching = HANDLERS.filter((handler) => actionsOn(permissions(handler), payloadObjects()).length > 0);
    expect(reaching.sort()).toEqual(['consumer', 'ingest', 'lagMetrics', 'operations', 'subscriptions']);
    expect(actionsOn(permissions('lagMetrics'), payloadObjects())).toEqual(['s3:DeleteObject', 's3:GetObject']);
    expect(actionsOn(permissions('subscriptions'), payloadObjects())).toEqual(['s3:DeleteObject', 's3:GetObject']);
    expect(actionsOn(permissions('ingest'), payloadObjects())).toEqual(['s3:PutObject']);
  });

  it('lets the lag job only query the active-group-keys index, read those groups by key and take idle ones out, let go the holds of resumed subscriptions, step the replays nobody steps, and publish metrics through its logs alone', () => {
    // Embedded metric format: CloudWatch reads the metrics from the log lines, no PutMetricData.
    expect(actionsByResource(permissions('lagMetrics'))).toEqual(
      expected([
        [logGroup('lagMetrics'), LOG_WRITES],
        [activeGroupsIndex(), ['dynamodb:Query']],
        [table('groups'), ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem']],
        // Whether a held group's subscription is still paused, and its head let go when it is not;
        // a replay's state, claimed, saved and ended.
        [table('subscriptions'), ['dynamodb:GetItem', 'dynamodb:UpdateItem']],
        [deliveryQueue(), ['sqs:ChangeMessageVisibility', 'sqs:SendMessage']],
        // A replay's step: the replays under way, the kept events and run numbers, the events'
        // records, how far each key's recorded deliveries reach, and the routing in force. And a
        // resumed subscription's parked backlog sent back, as a resume does (see the subscriptions function).
        [replaysIndex(), ['dynamodb:Query']],
        [table('deadLetters'), ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:Query']],
        [payloadObjects(), ['s3:DeleteObject', 's3:GetObject']],
        [table('events'), ['dynamodb:BatchGetItem']],
        [table('orderingKeys'), ['dynamodb:BatchGetItem']],
        [table('settings'), ['dynamodb:GetItem']],
      ]),
    );
  });

  it('names each index it grants, never every index of a table, and only queries it', () => {
    expect(JSON.stringify(activeGroupsIndex())).toContain('/index/active-group-keys');
    const indexGrants = HANDLERS.flatMap(permissions).filter((permission) =>
      JSON.stringify(permission.resource).includes('/index/'),
    );
    expect(new Set(indexGrants.map((permission) => JSON.stringify(permission.resource)))).toEqual(
      new Set(asJson([activeGroupsIndex(), replaysIndex(), tenantSubscriptionsIndex()])),
    );
    expect(new Set(indexGrants.map((permission) => permission.action))).toEqual(new Set(['dynamodb:Query']));
  });

  it.each(HANDLERS)('lets %s write only its own log group, with no wildcard action or resource', (handler) => {
    const granted = permissions(handler);
    expect(actionsOn(granted, logGroup(handler))).toEqual(LOG_WRITES);
    expect(granted.filter((permission) => permission.action.startsWith('logs:'))).toHaveLength(2);
    // The wildcards: the payload bucket's objects, under their prefix (keys are made of ids), and
    // Resource "*" for the actions IAM cannot scope to a resource (UNSCOPED_ACTIONS) alone.
    const isUnscopedGrant = (permission: Permission): boolean => permission.resource === NO_RESOURCE && isUnscopedAction(permission.action as IamAction);
    const wildcards = granted.filter(
      (permission) =>
        permission.action.includes('*') ||
        (JSON.stringify(permission.resource).includes('*') && JSON.stringify(permission.resource) !== JSON.stringify(payloadObjects()) && !isUnscopedGrant(permission)),
    );
    expect(wildcards).toEqual([]);
  });

  it('lets only the operations function read CloudWatch metrics (GET /v1/metrics), on Resource "*" as GetMetricData requires, in a policy holding nothing else', () => {
    expect(UNSCOPED_ACTIONS).toEqual(['cloudwatch:GetMetricData']);
    const reading = HANDLERS.filter((handler) => permissions(handler).some((permission) => permission.action === 'cloudwatch:GetMetricData'));
    expect(reading).toEqual(['operations']);
    expect(permissions('operations').filter((permission) => permission.action.startsWith('cloudwatch:'))).toEqual([{ action: 'cloudwatch:GetMetricData', resource: '*' }]);
    // Its own policy, so that cdk-nag's acknowledgement of the wildcard covers that statement alone.
    const { stack, template } = synthesized;
    const roleRef = stack.resolve(stack.functions.operations.role.roleName);
    const withMetrics = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) => JSON.stringify(policy).includes('cloudwatch:'));
    expect(withMetrics).toEqual([
      { Type: 'AWS::IAM::Policy', Properties: expect.objectContaining({ Roles: [roleRef], PolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'cloudwatch:GetMetricData', Resource: '*' }] } }) },
    ]);
  });

  it.each(HANDLERS)('tells %s the names of exactly the resources it is granted', (handler) => {
    const granted = new Set(grantedResources(permissions(handler)));
    const resourceVariables = new Set<string>(Object.values(RESOURCE_ENV_VARS));
    const given = Object.fromEntries(Object.entries(environmentOf(synthesized, handler)).filter(([name]) => resourceVariables.has(name)));
    const isGranted = (resource: ResourceName): boolean => RESOURCES[resource].arns().some((arn) => granted.has(JSON.stringify(arn)));
    const expectedVariables = Object.fromEntries(
      (Object.keys(RESOURCES) as ResourceName[]).filter(isGranted).map((resource) => [RESOURCES[resource].envVar, RESOURCES[resource].name()]),
    );
    expect(given).toEqual(expectedVariables);
  });

  // Typed by HandlerName: a new function cannot be left out.
  const HANDLER_RESOURCES: Readonly<Record<HandlerName, readonly (keyof ResourceNames)[]>> = {
    ingest: INGEST_RESOURCES,
    subscriptions: SUBSCRIPTIONS_RESOURCES,
    consumer: CONSUMER_RESOURCES,
    operations: OPERATIONS_RESOURCES,
    lagMetrics: LAG_METRICS_RESOURCES,
  };
  it.each(HANDLERS)('gives %s exactly the resource names its handler reads at cold start', (handler) => {
    const resourceVariables = new Set<string>(Object.values(RESOURCE_ENV_VARS));
    const given = Object.keys(environmentOf(synthesized, handler)).filter((name) => resourceVariables.has(name));
    expect(given.sort()).toEqual(HANDLER_RESOURCES[handler].map((name) => RESOURCE_ENV_VARS[name]).sort());
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

  it('declares reading a secret as a route of its own, IAM-authorized, apart from reading its subscription', () => {
    // Its own route key is what lets IAM grant it apart (see OrderedWebhooks.grantReadSecrets).
    const secretRoutes = routes().filter((route) => route.RouteKey === 'GET /v1/subscriptions/{subscription_id}/secret');
    expect(secretRoutes).toEqual([expect.objectContaining({ AuthorizationType: 'AWS_IAM' })]);
    expect(routes().filter((route) => route.RouteKey === 'GET /v1/subscriptions/{subscription_id}')).toEqual([expect.objectContaining({ AuthorizationType: 'AWS_IAM' })]);
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

  it('sends the lag view, the metrics, the dead letters and the operator’s actions to the operations function', () => {
    const operatorRoutes = [
      'GET /v1/lag',
      'GET /v1/groups/{message_group_id}',
      'GET /v1/metrics',
      'GET /v1/dead-letters',
      'POST /v1/dead-letters/redrive',
      'POST /v1/dead-letters/import',
      'POST /v1/groups/{message_group_id}/skip',
      'GET /v1/routing',
      'PUT /v1/routing',
      'POST /v1/routing/pause',
      'POST /v1/routing/resume',
      'POST /v1/subscriptions/{subscription_id}/replay',
      'DELETE /v1/subscriptions/{subscription_id}/replay',
    ];
    const { stack, template } = synthesized;
    const operationsArn = JSON.stringify(stack.resolve(stack.functions.operations.function.functionArn));
    const servedByOperations = routes()
      .filter((route) => {
        const integration = resourceOf(template, route.Target['Fn::Join'][1][1].Ref);
        return JSON.stringify(integration.Properties.IntegrationUri) === operationsArn;
      })
      .map((route) => route.RouteKey);
    expect(servedByOperations.sort()).toEqual([...operatorRoutes].sort());
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

const ALARMS = [
  'oldestMessageAlarm',
  'deadLetteredAlarm',
  'consumerFaultsAlarm',
  'backstopAlarm',
  'maxGroupWaitAlarm',
  'stalledGroupsAlarm',
  'fallingBehindKeysAlarm',
  'oldestHeldAlarm',
  'queueBacklogAlarm',
  'lagJobErrorsAlarm',
] as const;
type AlarmKey = (typeof ALARMS)[number];

describe('DeliveryAlarms', () => {
  const alarmProperties = (which: AlarmKey) =>
    resourceOf(synthesized.template, logicalIdOf(synthesized.stack, synthesized.stack.alarms[which].alarmName))
      .Properties;
  const LAG_DIMENSIONS = [{ Name: 'service', Value: LAG_METRICS.service }];

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

  it('alarms on every minute with a new dead letter, counted by the consumer', () => {
    expect(alarmProperties('deadLetteredAlarm')).toMatchObject({
      Namespace: CONSUMER_METRICS.namespace,
      MetricName: CONSUMER_METRICS.deadLettered,
      Dimensions: [{ Name: 'service', Value: CONSUMER_METRICS.service }],
      Statistic: 'Sum',
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when the consumer meets faults in three minutes of five', () => {
    expect(alarmProperties('consumerFaultsAlarm')).toMatchObject({
      Namespace: CONSUMER_METRICS.namespace,
      MetricName: CONSUMER_METRICS.faults,
      Dimensions: [{ Name: 'service', Value: CONSUMER_METRICS.service }],
      Statistic: 'Sum',
      Period: 60,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on the first message SQS moved to the backstop queue, and treats missing data as not breaching', () => {
    const { stack } = synthesized;
    expect(alarmProperties('backstopAlarm')).toMatchObject({
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

  it('alarms when a pending event of any group has waited the configured time, without flapping on a late run', () => {
    expect(synthesized.config.maxGroupWaitAlarmSeconds).toBe(1200);
    expect(alarmProperties('maxGroupWaitAlarm')).toMatchObject({
      Namespace: LAG_METRICS.namespace,
      MetricName: LAG_METRICS.maxOldestWaitSeconds,
      Dimensions: LAG_DIMENSIONS,
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1200,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when the configured number of groups are stalled', () => {
    expect(synthesized.config.stalledGroupsAlarmThreshold).toBe(3);
    expect(alarmProperties('stalledGroupsAlarm')).toMatchObject({
      Namespace: LAG_METRICS.namespace,
      MetricName: LAG_METRICS.stalledGroups,
      Dimensions: LAG_DIMENSIONS,
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on its own when a key keeps falling behind for three minutes of five, and reads the configured wait', () => {
    expect(synthesized.config.fallingBehindWaitSeconds).toBe(240);
    expect(environmentOf(synthesized, 'lagMetrics').FALLING_BEHIND_WAIT_SECONDS).toBe('240');
    expect(environmentOf(synthesized, 'operations').FALLING_BEHIND_WAIT_SECONDS).toBe('240');
    const properties = alarmProperties('fallingBehindKeysAlarm');
    expect(properties).toMatchObject({
      Namespace: LAG_METRICS.namespace,
      MetricName: LAG_METRICS.fallingBehindKeys,
      Dimensions: LAG_DIMENSIONS,
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    // The description names the levers the README's runbook pulls.
    expect(String(properties.AlarmDescription)).toMatch(/batch_size.*ordering "resource".*answer faster/);
  });

  it('alarms when a paused subscription’s oldest held event has waited the configured time, well before SQS’s 14 days', () => {
    expect(synthesized.config.heldAgeAlarmSeconds).toBe(864_000);
    expect(environmentOf(synthesized, 'lagMetrics').HELD_AGE_ALARM_SECONDS).toBe('864000');
    expect(alarmProperties('oldestHeldAlarm')).toMatchObject({
      Namespace: LAG_METRICS.namespace,
      MetricName: LAG_METRICS.oldestHeldSeconds,
      Dimensions: LAG_DIMENSIONS,
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 864_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when the delivery queue’s visible messages near the 120,000 among which SQS FIFO looks for groups', () => {
    const { stack } = synthesized;
    expect(alarmProperties('queueBacklogAlarm')).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: stack.resolve(stack.queues.deliveryQueue.queueName) }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 100_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms when the lag job fails, so the lag alarms never go quiet unnoticed', () => {
    const { stack } = synthesized;
    expect(alarmProperties('lagJobErrorsAlarm')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: stack.resolve(stack.lagMetrics.handler.function.functionName) }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('declares these ten alarms and no other, as many as the bench prices', () => {
    expect(synthesized.stack.alarms.alarms).toHaveLength(ALARMS.length);
    expect(ESTIMATES.alarms).toBe(ALARMS.length);
    expect(resourcesOfType(synthesized.template, 'AWS::CloudWatch::Alarm').size).toBe(ALARMS.length);
  });

  it.each(ALARMS)(
    'notifies the topic when %s fires and when it recovers',
    (which) => {
      const topic = synthesized.stack.resolve(synthesized.stack.alarms.topic.topicArn);
      expect(alarmProperties(which)).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
    },
  );

  it('refuses publications to the topic without TLS', () => {
    const { stack, template } = synthesized;
    const policies = [...resourcesOfType(template, 'AWS::SNS::TopicPolicy').values()].filter((policy) =>
      JSON.stringify(policy.Properties?.Topics) === JSON.stringify([stack.resolve(stack.alarms.topic.topicArn)]),
    );
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

  it('subscribes the address when ALARM_EMAIL is set, to the alarms and to the notices', () => {
    const { stack, template } = synthesize({ ...CONFIGURED, ALARM_EMAIL: 'oncall@example.com' });
    const subscriptions = [...resourcesOfType(template, 'AWS::SNS::Subscription').values()];
    expect(subscriptions.map((subscription) => subscription.Properties)).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: stack.resolve(stack.webhooks.noticeTopic.topicArn) }),
      expect.objectContaining({ Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: stack.resolve(stack.alarms.topic.topicArn) }),
    ]);
  });
});

describe('NoticeTopic', () => {
  const noticeTopicArn = (): unknown => synthesized.stack.resolve(synthesized.stack.webhooks.noticeTopic.topicArn);

  it('is a topic of its own, encrypted with the AWS managed key of SNS', () => {
    const topics = [...resourcesOfType(synthesized.template, 'AWS::SNS::Topic')];
    expect(topics).toHaveLength(2);
    const notices = topics.find(([logicalId]) => JSON.stringify({ Ref: logicalId }) === JSON.stringify(noticeTopicArn()));
    // The alias's ARN in the stack's account and Region: the key SNS manages there.
    expect(JSON.stringify(notices?.[1].Properties?.KmsMasterKeyId)).toMatch(/":alias\/aws\/sns"\]\]\}$/);
  });

  it('refuses publications without TLS', () => {
    const policies = [...resourcesOfType(synthesized.template, 'AWS::SNS::TopicPolicy').values()].filter((policy) => JSON.stringify(policy.Properties?.Topics) === JSON.stringify([noticeTopicArn()]));
    expect(policies).toHaveLength(1);
    expect(policies[0]?.Properties?.PolicyDocument).toMatchObject({
      Statement: expect.arrayContaining([expect.objectContaining({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
    });
  });

  it('tells the consumer its ARN, and no other function', () => {
    const withArn = [...resourcesOfType(synthesized.template, 'AWS::Lambda::Function').values()].filter(
      (fn) => (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[NOTICE_TOPIC.envVar] !== undefined,
    );
    expect(withArn).toHaveLength(1);
    expect((withArn[0]?.Properties?.Environment as { Variables: Record<string, unknown> }).Variables[NOTICE_TOPIC.envVar]).toEqual(noticeTopicArn());
    expect(withArn[0]?.Properties?.Timeout).toBe(consumerTimeoutSeconds(synthesized.config));
  });
});

describe('OperationsDashboard', () => {
  const widgetSchema = z.object({
    type: z.string(),
    properties: z.object({
      title: z.string().optional(),
      alarms: z.array(z.unknown()).optional(),
      metrics: z.array(z.array(z.unknown())).optional(),
      annotations: z.object({ horizontal: z.array(z.object({ value: z.number() })) }).optional(),
    }),
  });
  const widgets = () =>
    z.object({ widgets: z.array(widgetSchema) }).parse(dashboardBodyOf(synthesized.template)).widgets;
  /** Each graphed metric as `[namespace, name, dimension, value, ...]` and its statistic. */
  const graphedMetrics = () =>
    widgets().flatMap((widget) =>
      (widget.properties.metrics ?? []).map((entry) => {
        const options = z.object({ stat: z.string() }).parse(entry.at(-1));
        return { metric: entry.slice(0, -1), stat: options.stat };
      }),
    );
  const widgetGraphing = (namespace: string, metricName: string) =>
    widgets().find((widget) =>
      (widget.properties.metrics ?? []).some((entry) => entry[0] === namespace && entry[1] === metricName),
    );

  it('declares one dashboard', () => {
    expect(resourcesOfType(synthesized.template, 'AWS::CloudWatch::Dashboard').size).toBe(1);
  });

  it('shows the state of every alarm', () => {
    const { stack } = synthesized;
    const alarmWidgets = widgets().filter((widget) => widget.type === 'alarm');
    expect(alarmWidgets).toHaveLength(1);
    expect(alarmWidgets[0]?.properties.alarms).toEqual(
      ALARMS.map((which) => stack.resolve(stack.alarms[which].alarmArn)),
    );
  });

  it('graphs the queues, ingest and its API, the consumer and the lag', () => {
    const { stack } = synthesized;
    const resolve = (token: string): unknown => stack.resolve(token);
    const deliveryQueue = ['QueueName', resolve(stack.queues.deliveryQueue.queueName)];
    const deadLetterQueue = ['QueueName', resolve(stack.queues.deadLetterQueue.queueName)];
    const ingest = ['FunctionName', resolve(stack.functions.ingest.function.functionName)];
    const consumer = ['FunctionName', resolve(stack.functions.consumer.function.functionName)];
    const api = ['ApiId', resolve(stack.api.httpApi.apiId)];
    const lag = ['service', LAG_METRICS.service];
    const expected = [
      { metric: ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', ...deliveryQueue], stat: 'Maximum' },
      { metric: ['AWS/SQS', 'ApproximateNumberOfMessagesNotVisible', ...deliveryQueue], stat: 'Maximum' },
      { metric: ['AWS/SQS', 'ApproximateAgeOfOldestMessage', ...deliveryQueue], stat: 'Maximum' },
      { metric: ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', ...deadLetterQueue], stat: 'Maximum' },
      { metric: ['AWS/Lambda', 'Invocations', ...ingest], stat: 'Sum' },
      { metric: ['AWS/Lambda', 'Errors', ...ingest], stat: 'Sum' },
      { metric: ['AWS/Lambda', 'Duration', ...ingest], stat: 'p99' },
      { metric: ['AWS/ApiGateway', '4xx', ...api], stat: 'Sum' },
      { metric: ['AWS/ApiGateway', '5xx', ...api], stat: 'Sum' },
      { metric: ['AWS/ApiGateway', 'Latency', ...api], stat: 'p99' },
      { metric: ['AWS/Lambda', 'Invocations', ...consumer], stat: 'Sum' },
      { metric: ['AWS/Lambda', 'Errors', ...consumer], stat: 'Sum' },
      { metric: ['AWS/Lambda', 'Duration', ...consumer], stat: 'p99' },
      { metric: ['AWS/Lambda', 'ConcurrentExecutions', ...consumer], stat: 'Maximum' },
      { metric: [LAG_METRICS.namespace, LAG_METRICS.maxOldestWaitSeconds, ...lag], stat: 'Maximum' },
      { metric: [LAG_METRICS.namespace, LAG_METRICS.stalledGroups, ...lag], stat: 'Maximum' },
      { metric: [LAG_METRICS.namespace, LAG_METRICS.backlog, ...lag], stat: 'Maximum' },
      { metric: [LAG_METRICS.namespace, LAG_METRICS.fallingBehindKeys, ...lag], stat: 'Maximum' },
      { metric: [LAG_METRICS.namespace, LAG_METRICS.heldGroups, ...lag], stat: 'Maximum' },
      { metric: [LAG_METRICS.namespace, LAG_METRICS.oldestHeldSeconds, ...lag], stat: 'Maximum' },
      ...(['delivered', 'failedAttempts', 'deadLettered', 'faults'] as const).map((name) => ({
        metric: [CONSUMER_METRICS.namespace, CONSUMER_METRICS[name], 'service', CONSUMER_METRICS.service],
        stat: 'Sum',
      })),
    ];
    expect(graphedMetrics()).toEqual(expect.arrayContaining(expected));
  });

  it('draws the configured alarm thresholds on the lag graphs', () => {
    const thresholds = (metricName: string) =>
      widgetGraphing(LAG_METRICS.namespace, metricName)?.properties.annotations?.horizontal.map(({ value }) => value);
    expect(thresholds(LAG_METRICS.maxOldestWaitSeconds)).toEqual([1200]);
    expect(thresholds(LAG_METRICS.stalledGroups)).toEqual([3]);
    expect(thresholds(LAG_METRICS.fallingBehindKeys)).toEqual([1]);
    expect(thresholds(LAG_METRICS.oldestHeldSeconds)).toEqual([864_000]);
  });

  it('tabulates the worst keys falling behind with their rates, from the lag job’s log group', () => {
    const { stack } = synthesized;
    const body = z.object({ widgets: z.array(z.object({ type: z.string(), properties: z.object({ title: z.string().optional(), query: z.string().optional() }) })) }).parse(dashboardBodyOf(synthesized.template));
    const logWidgets = body.widgets.filter((widget) => widget.type === 'log');
    expect(logWidgets).toHaveLength(1);
    const query = logWidgets[0]?.properties.query ?? '';
    expect(query).toContain(`filter message = '${FALLING_BEHIND_MESSAGE}'`);
    expect(query).toMatch(/accepted_per_minute.*delivered_per_minute/);
    expect(query).toContain('by message_group_id');
    // The query's SOURCE is the lag job's log group, a reference in the dashboard's body.
    expect(query).toMatch(/^SOURCE '/);
    expect(JSON.stringify(synthesized.template.findResources('AWS::CloudWatch::Dashboard'))).toContain(JSON.stringify(stack.resolve(stack.lagMetrics.handler.logGroup.logGroupName)));
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

  it('outputs the dashboard’s name and its console URL', () => {
    const { stack, template } = synthesized;
    const dashboardName = stack.resolve(stack.dashboard.dashboardName);
    expect(dashboardName).toEqual({ Ref: logicalIdOf(stack, stack.dashboard.dashboardName) });
    template.hasOutput('DashboardName', { Value: dashboardName });
    const url = JSON.stringify(template.findOutputs('DashboardUrl'));
    expect(url).toContain('https://console.aws.amazon.com/cloudwatch/home?region=');
    expect(url).toContain('#dashboards/dashboard/');
    expect(url).toContain(JSON.stringify(dashboardName));
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
        'DashboardName',
        'DashboardUrl',
        'DeadLetterQueueUrl',
        'DeliveryQueueUrl',
        'NoticeTopicArn',
        ...TABLE_NAMES.map((name) => `${TABLES[name].localName}TableName`),
      ].sort(),
    );
  });
});

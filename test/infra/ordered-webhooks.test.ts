/**
 * The OrderedWebhooks construct as a library user meets it: its props (typed, documented,
 * validated and defaulted by lambda/config.ts), what it exposes, and its grants (grantPublish,
 * grantReadSubscriptions, grantReadSecrets). What it
 * declares is asserted in ordered-webhooks-stack.test.ts, through the stack that holds it.
 */
import { readFileSync } from 'node:fs';
import { Stack, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { Deployment, loadConfig, type Config } from '../../lambda/config.js';
import { TABLES, type TableName } from '../../lambda/resources.js';
import {
  configOf,
  OrderedWebhooks,
  OrderedWebhooksPropsError,
  PRODUCER_ROUTES,
  propsOf,
  SECRET_READ_ROUTES,
  SUBSCRIPTION_READ_ROUTES,
  type DeployedSetting,
  type OrderedWebhooksProps,
} from '../../lib/ordered-webhooks.js';
import { createApp, denialsOf, permissionsOf } from './synthesize.js';

/** Each prop's `@default` as its TSDoc writes it. */
function documentedDefaults(): Map<string, string> {
  const source = readFileSync(new URL('../../lib/ordered-webhooks.ts', import.meta.url), 'utf8');
  const start = source.indexOf('export interface OrderedWebhooksProps {');
  const body = source.slice(start, source.indexOf('\n}', start));
  const defaults = new Map<string, string>();
  for (const match of body.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly (\w+)\?:/g)) {
    const [, doc = '', prop = ''] = match;
    defaults.set(prop, /@default (.+)/.exec(doc)?.[1]?.trim() ?? '(none)');
  }
  return defaults;
}

/** A value as a TypeScript literal in a `@default`. */
function asLiteral(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** `props` refused: the problems of the error. */
function refusalOf(props: OrderedWebhooksProps): readonly string[] {
  try {
    configOf(props);
  } catch (error) {
    if (error instanceof OrderedWebhooksPropsError) return error.problems;
    throw error;
  }
  throw new Error(`${JSON.stringify(props)} was accepted`);
}

const DEFAULTS = loadConfig({}, Deployment.deployed);
const TABLE_NAMES = Object.keys(TABLES) as TableName[];

describe('OrderedWebhooksProps', () => {
  it('has one optional prop per deployed setting of Config, of that setting’s type', () => {
    expectTypeOf<Required<OrderedWebhooksProps>>().toEqualTypeOf<{ readonly [K in DeployedSetting]: NonNullable<Config[K]> }>();
  });

  it('documents, for each prop, the default that lambda/config.ts gives its variable', () => {
    const documented = documentedDefaults();
    const defaults = propsOf(DEFAULTS);
    expect([...documented.keys()].sort()).toEqual(Object.keys(defaults).sort());
    for (const [prop, value] of Object.entries(defaults)) {
      // A setting unset by default has its default described (`@default - ...`), not written as a value.
      if (value === undefined) expect(documented.get(prop), prop).toMatch(/^- \S/);
      else expect(documented.get(prop), prop).toBe(asLiteral(value));
    }
  });

  it('are defaulted by lambda/config.ts when none is given', () => {
    const stack = new Stack(createApp(), 'Defaults');
    expect(new OrderedWebhooks(stack, 'Webhooks').config).toEqual(DEFAULTS);
  });

  it('give back, through propsOf, the configuration they were made from', () => {
    const config = loadConfig(
      {
        MAX_DELIVERY_ATTEMPTS: '8', ON_EXHAUSTED: 'stall', RETRY_BASE_SECONDS: '0', RETRY_MAX_SECONDS: '600', DELIVERY_TIMEOUT_MS: '5000',
        PARTITION_COUNT: '16', CONSUMER_CONCURRENCY: '10', ALLOW_PRIVATE_ENDPOINTS: 'true', OLDEST_MESSAGE_ALARM_SECONDS: '120',
        STALL_THRESHOLD_SECONDS: '60', MAX_GROUP_WAIT_ALARM_SECONDS: '300', STALLED_GROUPS_ALARM_THRESHOLD: '3',
        ALARM_EMAIL: 'ops@example.com', DELIVERY_STATE_TTL_DAYS: '29', LOG_LEVEL: 'DEBUG',
      },
      Deployment.deployed,
    );
    expect(configOf(propsOf(config))).toEqual({ ...config, port: DEFAULTS.port, dataDir: undefined });
  });

  it('are refused at synth time with an error naming the prop when a value is out of range', () => {
    const stack = new Stack(createApp(), 'Refused');
    expect(() => new OrderedWebhooks(stack, 'Webhooks', { maxDeliveryAttempts: 0 })).toThrow(
      new OrderedWebhooksPropsError(['maxDeliveryAttempts: must be at least 1 (got "0")']),
    );
  });

  it('are refused naming every prop of a rule between two of them', () => {
    expect(refusalOf({ retryBaseSeconds: 100, retryMaxSeconds: 50, deliveryTimeoutMs: 10.5, alarmEmail: 'ops' })).toEqual([
      'deliveryTimeoutMs: must be an integer between 100 and 60000 (got "10.5")',
      'alarmEmail: must be an e-mail address (got "ops")',
      'retryMaxSeconds: must be at least retryBaseSeconds (got "50")',
    ]);
  });

  it('are refused when a prop is unknown, a token or empty', () => {
    // Plain JavaScript callers have no compiler to catch a misspelt prop.
    const misspelt = { maxDeliveryAttempt: 8, logLevel: 'INFO' as const };
    expect(refusalOf(misspelt)).toEqual(['maxDeliveryAttempt: is no prop of OrderedWebhooks']);
    expect(refusalOf({ consumerConcurrency: Token.asNumber({ Ref: 'Concurrency' }), alarmEmail: '' })).toEqual([
      'consumerConcurrency: must be a value known at synth time, not a token',
      'alarmEmail: must not be empty',
    ]);
  });
});

describe('OrderedWebhooks', () => {
  it('exposes the API, the queues, the tables, the alarm topic and the notice topic', () => {
    const stack = new Stack(createApp(), 'Exposed');
    const webhooks = new OrderedWebhooks(stack, 'Webhooks');
    const template = Template.fromStack(stack);
    // Each kind of resource, by the `Ref` of its logical id, is what the construct's members resolve to.
    const refsOf = (type: string): string[] => Object.keys(template.findResources(type)).map((id) => JSON.stringify({ Ref: id })).sort();
    const resolved = (tokens: readonly string[]): string[] => tokens.map((token) => JSON.stringify(stack.resolve(token))).sort();
    expect(refsOf('AWS::ApiGatewayV2::Api')).toEqual(resolved([webhooks.api.httpApi.apiId]));
    expect(stack.resolve(webhooks.url)).toEqual(stack.resolve(webhooks.api.stage.url));
    expect(refsOf('AWS::SQS::Queue')).toEqual(resolved([webhooks.queues.deliveryQueue.queueUrl, webhooks.queues.deadLetterQueue.queueUrl]));
    expect(refsOf('AWS::DynamoDB::Table')).toEqual(resolved(TABLE_NAMES.map((name) => webhooks.tables.table(name).tableName)));
    expect(refsOf('AWS::SNS::Topic')).toEqual(resolved([webhooks.alarmTopic.topicArn, webhooks.noticeTopic.topicArn]));
  });

  it('grants publish, with grantPublish, on the producer routes of its stage and on nothing else', () => {
    const stack = new Stack(createApp(), 'Publisher');
    const webhooks = new OrderedWebhooks(stack, 'Webhooks');
    const producer = new iam.Role(stack, 'Producer', { assumedBy: new iam.AccountRootPrincipal() });
    expect(webhooks.grantPublish(producer).success).toBe(true);

    const routeArn = (route: string) =>
      stack.resolve(`arn:${stack.partition}:execute-api:${stack.region}:${stack.account}:${webhooks.api.httpApi.apiId}/$default/${route}`);
    expect(PRODUCER_ROUTES).toEqual(['GET /health', 'POST /v1/events']);
    expect(permissionsOf(Template.fromStack(stack), stack.resolve(producer.roleName))).toEqual([
      { action: 'execute-api:Invoke', resource: routeArn('GET/health') },
      { action: 'execute-api:Invoke', resource: routeArn('POST/v1/events') },
    ]);
    expect(denialsOf(Template.fromStack(stack), stack.resolve(producer.roleName))).toEqual([]);
  });

  describe('grants on subscriptions and their secrets', () => {
    const granted = (grant: (webhooks: OrderedWebhooks, grantee: iam.IGrantable) => iam.Grant) => {
      const stack = new Stack(createApp(), 'Reader');
      const webhooks = new OrderedWebhooks(stack, 'Webhooks');
      const reader = new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() });
      expect(grant(webhooks, reader).success).toBe(true);
      const template = Template.fromStack(stack);
      const routeArn = (route: string) =>
        stack.resolve(`arn:${stack.partition}:execute-api:${stack.region}:${stack.account}:${webhooks.api.httpApi.apiId}/$default/${route}`);
      const role = stack.resolve(reader.roleName);
      return { allowed: permissionsOf(template, role), denied: denialsOf(template, role), routeArn };
    };

    it('reads subscriptions with grantReadSubscriptions, and denies their secrets, which the ARN of one subscription also matches', () => {
      const { allowed, denied, routeArn } = granted((webhooks, grantee) => webhooks.grantReadSubscriptions(grantee));
      expect(SUBSCRIPTION_READ_ROUTES).toEqual(['GET /v1/subscriptions', 'GET /v1/subscriptions/{subscription_id}']);
      expect(allowed).toEqual([
        { action: 'execute-api:Invoke', resource: routeArn('GET/v1/subscriptions') },
        { action: 'execute-api:Invoke', resource: routeArn('GET/v1/subscriptions/*') },
      ]);
      expect(denied).toEqual([{ action: 'execute-api:Invoke', resource: routeArn('GET/v1/subscriptions/*/secret') }]);
    });

    it('reads secrets with grantReadSecrets alone: the secret route and nothing else', () => {
      const { allowed, denied, routeArn } = granted((webhooks, grantee) => webhooks.grantReadSecrets(grantee));
      expect(SECRET_READ_ROUTES).toEqual(['GET /v1/subscriptions/{subscription_id}/secret']);
      expect(allowed).toEqual([{ action: 'execute-api:Invoke', resource: routeArn('GET/v1/subscriptions/*/secret') }]);
      expect(denied).toEqual([]);
    });

    it('denies nothing a grant of routes names itself: a subscription and its secret in one call', () => {
      const { allowed, denied, routeArn } = granted((webhooks, grantee) =>
        webhooks.api.grantInvokeRoutes(grantee, ['GET /v1/subscriptions/{subscription_id}', 'GET /v1/subscriptions/{subscription_id}/secret']),
      );
      expect(allowed).toEqual([
        { action: 'execute-api:Invoke', resource: routeArn('GET/v1/subscriptions/*') },
        { action: 'execute-api:Invoke', resource: routeArn('GET/v1/subscriptions/*/secret') },
      ]);
      expect(denied).toEqual([]);
    });
  });
});

/**
 * cdk.json sets the feature flags aws-cdk-lib recommends (so `cdk synth` no longer warns about
 * unconfigured ones), and they take effect in the template. Two of them change this stack's
 * template, and the design was checked against both: IAM policy minimization merges statements
 * without widening any grant (the grants are asserted action by action in
 * ordered-webhooks-stack.test.ts), and partition literals only replace `AWS::Partition` where the
 * region is known.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { FeatureFlags } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Deployment, loadConfig } from '../../lambda/config.js';
import { ROUTES } from '../../lambda/routes.js';
import { OrderedWebhooksStack } from '../../lib/ordered-webhooks-stack.js';
import { cdkJsonContext, createApp, synthesize, SYNTHESIS_TIMEOUT_MS, type SynthesizedStack } from './synthesize.js';

const require = createRequire(import.meta.url);

/** The flags and values aws-cdk-lib recommends for a new app, the ones `cdk init` writes. */
function recommendedFlags(): Record<string, unknown> {
  const file = require.resolve('aws-cdk-lib/recommended-feature-flags.json');
  return z.record(z.string(), z.unknown()).parse(JSON.parse(readFileSync(file, 'utf8')));
}

const statementSchema = z.object({ Effect: z.string(), Action: z.union([z.string(), z.array(z.string())]), Resource: z.unknown() });
const policySchema = z.object({ Properties: z.object({ PolicyDocument: z.object({ Statement: z.array(statementSchema) }) }) });

let synthesized: SynthesizedStack;
beforeAll(() => {
  synthesized = synthesize();
}, SYNTHESIS_TIMEOUT_MS);

describe('cdk.json feature flags', () => {
  it('sets every flag aws-cdk-lib recommends, to its recommended value', () => {
    const recommended = recommendedFlags();
    const context = cdkJsonContext();
    expect(Object.fromEntries(Object.keys(recommended).map((flag) => [flag, context[flag]]))).toEqual(recommended);
  });

  it('reach the stack: it sees the flags whose effect is asserted below', () => {
    const flags = FeatureFlags.of(synthesized.stack);
    expect(flags.isEnabled(cxapi.IAM_MINIMIZE_POLICIES)).toBe(true);
    expect(flags.isEnabled(cxapi.ENABLE_PARTITION_LITERALS)).toBe(true);
  });

  it('merge the statements of a policy that grant the same actions, and the actions granted on one resource (minimizePolicies)', () => {
    const policies = Object.values(synthesized.template.findResources('AWS::IAM::Policy')).map((policy) => policySchema.parse(policy));
    for (const policy of policies) {
      const statements = policy.Properties.PolicyDocument.Statement;
      const actionSets = statements.map((statement) => JSON.stringify([statement.Effect, [statement.Action].flat().sort()]));
      expect(new Set(actionSets).size).toBe(actionSets.length);
      const resources = statements.map((statement) => JSON.stringify(statement.Resource));
      expect(new Set(resources).size).toBe(resources.length);
    }
    // The consumer's calls on the delivery queue and its event source mapping's: one statement.
    const { stack, template } = synthesized;
    const consumerRole = stack.resolve(stack.functions.consumer.role.roleName);
    const deliveryQueue = stack.resolve(stack.queues.deliveryQueue.queueArn);
    const consumerStatements = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [consumerRole] } }))
      .flatMap((policy) => policySchema.parse(policy).Properties.PolicyDocument.Statement)
      .filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(deliveryQueue));
    expect(consumerStatements).toEqual([
      {
        Effect: 'Allow',
        Action: ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage', 'sqs:SendMessage'],
        Resource: deliveryQueue,
      },
    ]);
  });

  it('write the partition as a literal once the stack has a region (enablePartitionLiterals)', () => {
    const app = createApp();
    const stack = new OrderedWebhooksStack(app, 'OrderedWebhooks', {
      config: loadConfig({}, Deployment.deployed),
      env: { account: '123456789012', region: 'eu-west-1' },
    });
    const template = Template.fromStack(stack);
    expect(JSON.stringify(template.toJSON())).not.toContain('AWS::Partition');
    // API Gateway's permission to invoke the function behind each route names the route by a literal ARN.
    const permissionSchema = z.object({ Properties: z.object({ Principal: z.unknown(), SourceArn: z.unknown() }) });
    const sourceArns = Object.values(template.findResources('AWS::Lambda::Permission'))
      .map((permission) => permissionSchema.parse(permission).Properties)
      .filter((permission) => permission.Principal === 'apigateway.amazonaws.com')
      .map((permission) => JSON.stringify(permission.SourceArn));
    expect(sourceArns).toHaveLength(Object.values(ROUTES).flat().length);
    for (const arn of sourceArns) expect(arn).toContain('"arn:aws:execute-api:eu-west-1:123456789012:"');
  });
});

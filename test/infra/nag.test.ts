import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { Deployment, loadConfig } from '../../lambda/config.js';
import { OrderedWebhooksStack } from '../../lib/ordered-webhooks-stack.js';
import { createApp } from './synthesize.js';

/** The app as bin/app.ts builds it, with cdk-nag registered; bundling skipped (nag reads the template). */
function nagCheckedApp(env: Readonly<Record<string, string>>): { app: App; stack: OrderedWebhooksStack } {
  const app = createApp();
  const stack = new OrderedWebhooksStack(app, 'OrderedWebhooks', { config: loadConfig(env, Deployment.deployed) });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}

/** Every acknowledged rule in the tree, as `<construct path>: <rule id>: <reason>`. */
function acknowledgements(root: IConstruct): string[] {
  return root.node
    .findAll()
    .flatMap((construct) =>
      construct.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) =>
          Object.entries(entry.data ?? {}).map(([id, reason]) => `${construct.node.path}: ${id}: ${String(reason)}`),
        ),
    );
}

describe('cdk-nag AwsSolutions', () => {
  it.each([
    ['the default configuration', {}],
    ['an alarm e-mail and partition mode', { ALARM_EMAIL: 'oncall@example.com', PARTITION_COUNT: '16' }],
  ])('finds no error or warning with %s', (_description, env: Record<string, string>) => {
    const { app, stack } = nagCheckedApp(env);
    // The pack, asked directly, lists its findings (warnings included), to show them on failure.
    const report = new AwsSolutionsChecks(undefined, { verbose: true }).validateScope(stack);
    expect(report.violations).toEqual([]);
    // Synthesis runs the registered plugin, as `cdk synth` does, and throws on any finding.
    expect(() => app.synth()).not.toThrow();
  });

  it('needs only the acknowledgements listed here, each with its reason', () => {
    // An acknowledgement added later belongs here, with its reason, so that review sees it.
    const { app } = nagCheckedApp({});
    expect(acknowledgements(app)).toEqual([
      // The payload bucket: its objects are written once each by the functions, which log every write.
      expect.stringMatching(/^OrderedWebhooks\/Default\/Payloads\/Bucket: Annotation::AwsSolutions-S1: Only the project’s own functions .{40,}$/),
      // The objects of dead letters, kept and parked events are named by ids: the grant names their prefix, on these five roles alone.
      expect.stringMatching(/^OrderedWebhooks\/Default\/Ingest\/Role: Annotation::AwsSolutions-IAM5\[Resource::<PayloadsBucket[0-9A-F]+\.Arn>\/dead-letters\/\*\]: Each dead letter.{40,}$/),
      expect.stringMatching(/^OrderedWebhooks\/Default\/Subscriptions\/Role: Annotation::AwsSolutions-IAM5\[Resource::<PayloadsBucket[0-9A-F]+\.Arn>\/dead-letters\/\*\]: Each dead letter.{40,}$/),
      expect.stringMatching(/^OrderedWebhooks\/Default\/Consumer\/Role: Annotation::AwsSolutions-IAM5\[Resource::<PayloadsBucket[0-9A-F]+\.Arn>\/dead-letters\/\*\]: Each dead letter.{40,}$/),
      expect.stringMatching(/^OrderedWebhooks\/Default\/Operations\/Role: Annotation::AwsSolutions-IAM5\[Resource::<PayloadsBucket[0-9A-F]+\.Arn>\/dead-letters\/\*\]: Each dead letter.{40,}$/),
      // GET /v1/metrics reads CloudWatch: GetMetricData has no resource-level permissions, so its own policy, on the operations function alone, names Resource "*".
      expect.stringMatching(/^OrderedWebhooks\/Default\/Operations\/Function\/UnscopedActions: Annotation::AwsSolutions-IAM5\[Resource::\*\]: cloudwatch:GetMetricData supports no resource-level permissions.{40,}$/),
      expect.stringMatching(/^OrderedWebhooks\/Default\/LagMetrics\/Handler\/Role: Annotation::AwsSolutions-IAM5\[Resource::<PayloadsBucket[0-9A-F]+\.Arn>\/dead-letters\/\*\]: Each dead letter.{40,}$/),
    ]);
  });
});

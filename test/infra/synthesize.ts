/**
 * Builds the deployed stack the way bin/app.ts does, for assertions. `new App()` does not read
 * cdk.json, so its context (feature flags) is passed in here: tests and `cdk synth` see one app.
 */
import { readFileSync } from 'node:fs';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as z from 'zod';
import { Deployment, loadConfig, type Config } from '../../lambda/config.js';
import type { HandlerName } from '../../lib/handler-function.js';
import { OrderedWebhooksStack } from '../../lib/ordered-webhooks-stack.js';

const cdkJsonSchema = z.object({ context: z.record(z.string(), z.unknown()).optional() });

/** The context of cdk.json, as `cdk synth` passes it to the app. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = cdkJsonSchema.parse(JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')));
  return cdkJson.context ?? {};
}

export interface SynthesizedStack {
  readonly app: App;
  readonly stack: OrderedWebhooksStack;
  readonly config: Config;
  readonly template: Template;
}

export interface SynthesizeOptions {
  /**
   * Whether to bundle the functions with esbuild (about 3 s). Without it the assets are
   * placeholders; everything else in the template is the same.
   * @default false
   */
  readonly bundle?: boolean;
}

/**
 * The time a hook that synthesizes the stack gets: about 2 s alone (CloudFormation's validation of
 * the template included), but several times that while other test files, or another process, keep
 * both cores busy, past vitest's 30 s for a hook. The hook returns as soon as the synthesis ends.
 */
export const SYNTHESIS_TIMEOUT_MS = 120_000;

/** An app with the context of cdk.json, as `cdk synth` builds it. */
export function createApp(options: SynthesizeOptions = {}): App {
  // `aws:cdk:bundling-stacks` lists the stacks whose assets are bundled; empty means none.
  const bundling = options.bundle === true ? {} : { 'aws:cdk:bundling-stacks': [] };
  return new App({ context: { ...cdkJsonContext(), ...bundling } });
}

/** The stack for a deployment environment (defaults where empty) in its own app, with its template. */
export function synthesize(
  env: Readonly<Record<string, string>> = {},
  options: SynthesizeOptions = {},
): SynthesizedStack {
  const config = loadConfig(env, Deployment.deployed);
  const app = createApp(options);
  const stack = new OrderedWebhooksStack(app, 'OrderedWebhooks', { config });
  return { app, stack, config, template: Template.fromStack(stack) };
}

const refSchema = z.object({ Ref: z.string() });

/** The logical id behind a token that resolves to a `Ref`, such as `table.tableName` or `role.roleName`. */
export function logicalIdOf(stack: Stack, token: string): string {
  return refSchema.parse(stack.resolve(token)).Ref;
}

const resourceSchema = z.object({
  Type: z.string(),
  Properties: z.record(z.string(), z.unknown()).default({}),
  DeletionPolicy: z.string().optional(),
});
export type TemplateResource = z.infer<typeof resourceSchema>;

/** The template's resource `logicalId`. */
export function resourceOf(template: Template, logicalId: string): TemplateResource {
  const resources: unknown = template.toJSON().Resources;
  return resourceSchema.parse(z.record(z.string(), z.unknown()).parse(resources)[logicalId]);
}

/** Every resource of `type`, by logical id. */
export function resourcesOfType(template: Template, type: string): Map<string, TemplateResource> {
  return new Map(
    Object.entries(template.findResources(type)).map(([logicalId, resource]) => [
      logicalId,
      resourceSchema.parse(resource),
    ]),
  );
}

/** The template's AWS::Lambda::Function of `handler`. */
export function functionResource(synthesized: SynthesizedStack, handler: HandlerName): TemplateResource {
  const { stack, template } = synthesized;
  return resourceOf(template, logicalIdOf(stack, stack.functions[handler].function.functionName));
}

const environmentSchema = z.object({ Variables: z.record(z.string(), z.unknown()) });

/** The environment variables of `handler`'s function. */
export function environmentOf(synthesized: SynthesizedStack, handler: HandlerName): Record<string, unknown> {
  return environmentSchema.parse(functionResource(synthesized, handler).Properties.Environment).Variables;
}

const statementSchema = z.object({
  Effect: z.enum(['Allow', 'Deny']),
  Action: z.union([z.string(), z.array(z.string())]),
  Resource: z.unknown(),
});
const policySchema = z.object({
  Properties: z.object({
    PolicyDocument: z.object({ Statement: z.array(statementSchema) }),
    Roles: z.array(z.unknown()),
  }),
});

/** One allowed action on one resource, the resource as the template writes it. */
export interface Permission {
  readonly action: string;
  readonly resource: unknown;
}

/** Every action the inline policies attached to `roleRef` allow, one entry per action and resource. */
export function permissionsOf(template: Template, roleRef: unknown): Permission[] {
  return statementsOf(template, roleRef, 'Allow');
}

/** Every action the inline policies attached to `roleRef` deny, one entry per action and resource. */
export function denialsOf(template: Template, roleRef: unknown): Permission[] {
  return statementsOf(template, roleRef, 'Deny');
}

function statementsOf(template: Template, roleRef: unknown, effect: 'Allow' | 'Deny'): Permission[] {
  const permissions: Permission[] = [];
  for (const resource of Object.values(template.findResources('AWS::IAM::Policy'))) {
    const policy = policySchema.parse(resource);
    if (!policy.Properties.Roles.some((role) => JSON.stringify(role) === JSON.stringify(roleRef))) continue;
    for (const statement of policy.Properties.PolicyDocument.Statement) {
      if (statement.Effect !== effect) continue;
      const actions = typeof statement.Action === 'string' ? [statement.Action] : statement.Action;
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      for (const action of actions) for (const target of resources) permissions.push({ action, resource: target });
    }
  }
  return permissions;
}

/** The actions of `permissions` on `resource`, sorted. */
export function actionsOn(permissions: readonly Permission[], resource: unknown): string[] {
  const key = JSON.stringify(resource);
  return [...new Set(permissions.filter((p) => JSON.stringify(p.resource) === key).map((p) => p.action))].sort();
}

/**
 * Every resource of `permissions` (as JSON) with its actions, sorted: a role's whole grant in one
 * value, so that one `toEqual` shows any action or resource too many or too few.
 */
export function actionsByResource(permissions: readonly Permission[]): Record<string, string[]> {
  const byResource: Record<string, string[]> = {};
  for (const resource of grantedResources(permissions)) byResource[resource] = actionsOn(permissions, JSON.parse(resource));
  return byResource;
}

/** The distinct resources of `permissions`, as JSON, sorted. */
export function grantedResources(permissions: readonly Permission[]): string[] {
  return [...new Set(permissions.map((p) => JSON.stringify(p.resource)))].sort();
}

const joinSchema = z.object({ 'Fn::Join': z.tuple([z.literal(''), z.array(z.unknown())]) });
const dashboardSchema = z.object({ Properties: z.object({ DashboardBody: z.union([z.string(), joinSchema]) }) });

/**
 * The body of the template's one dashboard, parsed. CloudFormation builds it with `Fn::Join` around
 * tokens (a queue's `GetAtt`, a function's `Ref`); a JSON string that is exactly one token comes
 * back as that token, as `stack.resolve` writes it, so it compares with the resource it names.
 */
export function dashboardBodyOf(template: Template): unknown {
  const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  if (dashboards.length !== 1) throw new Error(`Expected one dashboard, found ${dashboards.length}`);
  const body = dashboardSchema.parse(dashboards[0]).Properties.DashboardBody;
  if (typeof body === 'string') return JSON.parse(body);
  const tokens: unknown[] = [];
  const source = body['Fn::Join'][1]
    .map((part) => (typeof part === 'string' ? part : `@@token${tokens.push(part) - 1}@@`))
    .join('');
  const restore = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const match = /^@@token(\d+)@@$/.exec(value);
      return match === null ? value : tokens[Number(match[1])];
    }
    if (Array.isArray(value)) return value.map(restore);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, restore(entry)]));
    }
    return value;
  };
  return restore(JSON.parse(source));
}

/**
 * The published package works in someone else's CDK app: `npm pack` (which builds), installed
 * with `npm ci --offline` into a new app outside the repository, synthesized there by plain
 * `node`, type-checked there by `tsc`. About 35 s on two cores: one pack, one install, one synth.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { HANDLER_ENTRIES } from '../../lambda/routes.js';
import { OrderedWebhooks } from '../../lib/ordered-webhooks.js';
import { cdkJsonContext } from '../infra/synthesize.js';
import { installThrowawayApp, pack, REPOSITORY_ROOT, run, type PackedPackage, type ThrowawayApp } from './support/throwaway-app.js';

const FIXTURES = path.join(REPOSITORY_ROOT, 'test/package/fixtures');
const HANDLERS = Object.keys(HANDLER_ENTRIES).sort();

const resourceSchema = z.looseObject({ Type: z.string(), Properties: z.record(z.string(), z.unknown()).default({}) });
const templateSchema = z.looseObject({ Resources: z.record(z.string(), resourceSchema) });
type TemplateJson = z.infer<typeof templateSchema>;
const reportSchema = z.object({ refusal: z.string().nullable() });
const manifestSchema = z.looseObject({ dependencies: z.record(z.string(), z.string()).optional(), peerDependencies: z.record(z.string(), z.string()) });
const policySchema = z.object({
  Properties: z.object({
    PolicyDocument: z.object({ Statement: z.array(z.object({ Effect: z.string(), Action: z.unknown(), Resource: z.unknown() })) }),
    Roles: z.array(z.unknown()),
  }),
});

/** Every resource of `type`, by logical id. */
function resourcesOfType(template: TemplateJson, type: string): [string, z.infer<typeof resourceSchema>][] {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}

/** The SHA-256 of a file, to compare bundles. */
function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * The resources, with what legitimately differs between the packaged construct and the
 * repository's taken out: each function's code (a shipped bundle there, a placeholder for a
 * skipped bundling here) and the construct metadata.
 */
function comparable(template: TemplateJson): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(template.Resources).map(([logicalId, { Metadata: _metadata, ...resource }]) => {
      if (resource.Type !== 'AWS::Lambda::Function') return [logicalId, resource];
      const { Code: _code, ...properties } = resource.Properties;
      return [logicalId, { ...resource, Properties: properties }];
    }),
  );
}

let packed: PackedPackage;
let app: ThrowawayApp;
/** The directories to remove: the pack's and the app's. */
const temporary: string[] = [];
let outdir: string;
let template: TemplateJson;
let refusal: string | null;

beforeAll(() => {
  const work = mkdtempSync(path.join(tmpdir(), 'ordered-webhooks-pack-'));
  temporary.push(work);
  packed = pack(work);
  app = installThrowawayApp(packed.tarball);
  temporary.push(app.directory);
  copyFileSync(path.join(FIXTURES, 'app.mjs'), path.join(app.directory, 'app.mjs'));
  writeFileSync(path.join(app.directory, 'context.json'), JSON.stringify(cdkJsonContext()));
  outdir = path.join(app.directory, 'cdk.out');
  run(process.execPath, ['app.mjs', outdir, 'context.json', 'report.json'], app.directory);
  template = templateSchema.parse(JSON.parse(readFileSync(path.join(outdir, 'Consumer.template.json'), 'utf8')));
  refusal = reportSchema.parse(JSON.parse(readFileSync(path.join(app.directory, 'report.json'), 'utf8'))).refusal;
}, 180_000);

afterAll(() => {
  // The app holds its own aws-cdk-lib: a few hundred MB a run.
  for (const directory of temporary) rmSync(directory, { recursive: true, force: true });
});

describe('the packed ordered-webhooks package', () => {
  it('holds the library, its declarations and one bundle per function, and nothing else', () => {
    const unexpected = packed.files.filter(
      (file) =>
        !['package.json', 'README.md', 'LICENSE', 'dist/index.js'].includes(file) &&
        !/^dist\/types\/(lib|lambda)\/[\w/-]+\.d\.ts$/.test(file) &&
        !/^dist\/lambda\/\w+\/index\.mjs$/.test(file),
    );
    expect(unexpected).toEqual([]);
    expect(packed.files.filter((file) => file.startsWith('dist/lambda/')).map((file) => file.split('/')[2]).sort()).toEqual(HANDLERS);
    expect(packed.files).toContain('dist/types/lib/index.d.ts');
  });

  it('installs with no dependency beyond its peers, so no esbuild', () => {
    const manifest = manifestSchema.parse(JSON.parse(readFileSync(path.join(app.installed, 'package.json'), 'utf8')));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    expect(existsSync(path.join(app.directory, 'node_modules', 'esbuild'))).toBe(false);
  });
});

describe('OrderedWebhooks from the installed package', () => {
  it('synthesizes the API, the FIFO queues, the tables, the alarm and notice topics with the props given', () => {
    expect(resourcesOfType(template, 'AWS::ApiGatewayV2::Api')).toHaveLength(1);
    const queues = resourcesOfType(template, 'AWS::SQS::Queue').map(([, queue]) => queue.Properties.FifoQueue);
    expect(queues).toEqual([true, true]);
    expect(resourcesOfType(template, 'AWS::DynamoDB::Table')).toHaveLength(6);
    // The alarm e-mail gets the alarms and the notices (an automatic pause).
    expect(resourcesOfType(template, 'AWS::SNS::Subscription').map(([, subscription]) => subscription.Properties)).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com' }),
      expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com' }),
    ]);
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(HANDLERS.length);
    for (const [, fn] of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
      expect(fn.Properties.Environment).toMatchObject({ Variables: { MAX_DELIVERY_ATTEMPTS: '8' } });
    }
  });

  it('deploys the bundles the package ships as the functions’ code', () => {
    const codeSchema = z.object({ S3Key: z.string().regex(/^[0-9a-f]{64}\.zip$/) });
    const deployed = resourcesOfType(template, 'AWS::Lambda::Function').map(([, fn]) => {
      const { S3Key } = codeSchema.parse(fn.Properties.Code);
      return sha256(path.join(outdir, `asset.${S3Key.replace(/\.zip$/, '')}`, 'index.mjs'));
    });
    const shipped = HANDLERS.map((handler) => sha256(path.join(app.installed, 'dist/lambda', handler, 'index.mjs')));
    expect(deployed.sort()).toEqual(shipped.sort());
  });

  it('grants publish on the producer routes of the API’s stage, and nothing else', () => {
    const [apiId] = resourcesOfType(template, 'AWS::ApiGatewayV2::Api').map(([logicalId]) => logicalId);
    const [roleId] = resourcesOfType(template, 'AWS::IAM::Role').map(([logicalId]) => logicalId).filter((id) => id.startsWith('Producer'));
    const statements = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy')
      .map((resource) => policySchema.parse(resource).Properties)
      .filter((policy) => policy.Roles.some((role) => JSON.stringify(role) === JSON.stringify({ Ref: roleId })))
      .flatMap((policy) => policy.PolicyDocument.Statement);
    const routeArn = (route: string) => ({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':execute-api:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':', { Ref: apiId }, `/$default/${route}`]],
    });
    expect(statements).toEqual([
      { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: [routeArn('GET/health'), routeArn('POST/v1/events')] },
    ]);
  });

  it('declares what the construct of this repository declares, with the same props', () => {
    // The published library takes each handler's grants as data (scripts/build-library.ts): they must be the handlers' own.
    const reference = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(reference, 'Consumer');
    const webhooks = new OrderedWebhooks(stack, 'Webhooks', { maxDeliveryAttempts: 8, alarmEmail: 'ops@example.com' });
    webhooks.grantPublish(new iam.Role(stack, 'Producer', { assumedBy: new iam.AccountRootPrincipal() }));
    expect(comparable(template)).toEqual(comparable(templateSchema.parse(Template.fromStack(stack).toJSON())));
  });

  it('refuses a bad prop at synth time with an error naming the prop', () => {
    expect(refusal).toBe('OrderedWebhooksPropsError: Invalid OrderedWebhooks props:\n  - maxDeliveryAttempts: must be at least 1 (got "0")');
  });

  it('type-checks in a TypeScript app against the declarations it ships', () => {
    copyFileSync(path.join(FIXTURES, 'app.ts'), path.join(app.directory, 'app.ts'));
    const tsconfig = {
      compilerOptions: {
        module: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        // The package's own declarations are checked too: an import they cannot resolve fails here.
        skipLibCheck: false,
        typeRoots: [path.join(REPOSITORY_ROOT, 'node_modules/@types')],
        types: ['node'],
      },
      files: ['app.ts'],
    };
    writeFileSync(path.join(app.directory, 'tsconfig.json'), JSON.stringify(tsconfig));
    // Throws with tsc's diagnostics on any error, an unused @ts-expect-error included.
    expect(() => run(path.join(REPOSITORY_ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], app.directory)).not.toThrow();
  }, 60_000);
});

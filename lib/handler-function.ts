import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { HANDLER_ENTRIES } from '../lambda/routes.js';

/** The repository root: HANDLER_ENTRIES are relative to it, and it holds the lock file esbuild resolves from. */
const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A function the project bundles, by its name in HANDLER_ENTRIES. */
export type HandlerName = keyof typeof HANDLER_ENTRIES;

/** Properties of a {@link HandlerFunction}. */
export interface HandlerFunctionProps {
  /** Which entry point of HANDLER_ENTRIES to bundle. */
  readonly handler: HandlerName;
  /**
   * Environment the handler rebuilds its Config from (`toEnvironment(config)`). Resource names are
   * not given here: the grant methods of the constructs that own the resources add them.
   */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Powertools' service name (`POWERTOOLS_SERVICE_NAME`): the `service` key of its log lines and
   * the `service` dimension of the metrics it publishes.
   * @default `ordered-webhooks-<handler>`
   */
  readonly serviceName?: string;
  /**
   * Maximum run time of one invocation.
   * @default Duration.seconds(30)
   */
  readonly timeout?: Duration;
  /**
   * Memory, and with it the CPU share, of the function.
   * @default 256
   */
  readonly memorySize?: number;
  /**
   * How long the function's log group keeps its events.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
}

/**
 * One Lambda function of the project: Node.js 24 on arm64, bundled from its HANDLER_ENTRIES file
 * by the local esbuild, with its own role and its own log group.
 *
 * The role starts with nothing but writing to that log group (no AWSLambdaBasicExecutionRole,
 * whose `logs:*` on `*` would reach every log group of the account); every other permission comes
 * from a grant method that also sets the environment variable the permission is for.
 */
export class HandlerFunction extends Construct {
  /** The bundled function, for grants and event sources. */
  readonly function: lambda.Function;
  /** The function's execution role. */
  readonly role: iam.Role;
  /** Where the function's logs go. */
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: HandlerFunctionProps) {
    super(scope, id);

    this.logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${props.handler} function`,
    });
    // The log group exists before the function, so CreateLogGroup is never needed.
    this.logGroup.grantWrite(this.role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: path.join(REPOSITORY_ROOT, HANDLER_ENTRIES[props.handler]),
      handler: 'handler',
      projectRoot: REPOSITORY_ROOT,
      depsLockFilePath: path.join(REPOSITORY_ROOT, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(30),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        ...props.environment,
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? `ordered-webhooks-${props.handler}`,
      },
      bundling: {
        // Bundle with the esbuild devDependency on this machine: no Docker needed to synthesize.
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: 'node24',
        mainFields: ['module', 'main'],
        // CommonJS dependencies bundled into an ES module still call `require` for Node built-ins.
        banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        minify: true,
        sourceMap: false,
        // The nodejs24.x runtime ships the AWS SDK for JavaScript v3: leaving it out of the bundle
        // shrinks each function by hundreds of KB and its cold start with it.
        externalModules: ['@aws-sdk/*'],
      },
    });
  }
}

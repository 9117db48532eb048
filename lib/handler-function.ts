import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { SERVICE_NAMES } from '../lambda/config.js';
import { HANDLER_ENTRIES } from '../lambda/routes.js';
import { HANDLER_BUNDLE_FILE, HANDLER_BUNDLING, PREBUILT_BUNDLES_DIRECTORY } from './handler-bundling.js';

/** This module's directory: `lib/` in this repository, `dist/` in the published package. */
const MODULE_DIRECTORY = path.dirname(fileURLToPath(import.meta.url));

/** The repository root: HANDLER_ENTRIES are relative to it, and it holds the lock file esbuild resolves from. */
const REPOSITORY_ROOT = path.resolve(MODULE_DIRECTORY, '..');

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
 * One Lambda function of the project: Node.js 24 on arm64, with its own role and its own log group.
 *
 * Its code, by one rule: where its HANDLER_ENTRIES source exists (this repository), it is bundled
 * from that source by the local esbuild at synth time, so a deploy always runs the code of the
 * working tree; where it does not (the published package ships no sources), the bundle built at
 * pack time (`dist/lambda/<handler>/index.mjs`, scripts/build-lambda.ts) is the asset, so an app
 * using the package needs neither esbuild nor this repository's dependencies. Both builds take
 * their options from HANDLER_BUNDLING.
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

    const common = {
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(30),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        ...props.environment,
        // The Logger names itself from SERVICE_NAMES too; Metrics reads this as its `service` dimension.
        POWERTOOLS_SERVICE_NAME: SERVICE_NAMES[props.handler],
      },
    } satisfies Partial<lambda.FunctionProps>;

    const entry = path.join(REPOSITORY_ROOT, HANDLER_ENTRIES[props.handler]);
    this.function = existsSync(entry)
      ? new NodejsFunction(this, 'Function', {
          ...common,
          entry,
          handler: 'handler',
          projectRoot: REPOSITORY_ROOT,
          depsLockFilePath: path.join(REPOSITORY_ROOT, 'package-lock.json'),
          bundling: {
            ...HANDLER_BUNDLING,
            mainFields: [...HANDLER_BUNDLING.mainFields],
            externalModules: [...HANDLER_BUNDLING.externalModules],
            // Bundle with the esbuild devDependency on this machine: no Docker needed to synthesize.
            forceDockerBundling: false,
            format: OutputFormat.ESM,
          },
        })
      : new lambda.Function(this, 'Function', {
          ...common,
          code: lambda.Code.fromAsset(prebuiltBundleDirectory(props.handler)),
          // The `handler` export of index.mjs, as NodejsFunction names it.
          handler: 'index.handler',
        });
  }
}

/** The directory of the pre-built bundle of `handler` in the published package; refuses to synthesize without it. */
function prebuiltBundleDirectory(handler: HandlerName): string {
  const directory = path.join(MODULE_DIRECTORY, PREBUILT_BUNDLES_DIRECTORY, handler);
  if (!existsSync(path.join(directory, HANDLER_BUNDLE_FILE))) {
    throw new Error(
      `The ${handler} function has neither its source (${HANDLER_ENTRIES[handler]}) nor its pre-built bundle ` +
        `(${path.join(directory, HANDLER_BUNDLE_FILE)}): the package was packed without \`npm run build\`.`,
    );
  }
  return directory;
}

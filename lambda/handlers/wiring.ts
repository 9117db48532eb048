import type { Logger } from '@aws-lambda-powertools/logger';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, createS3Client, createSnsClient, createSqsClient } from '../adapters/aws-clients.js';
import { Deployment, loadProcessConfig, loadProcessResourceNames, SERVICE_NAMES, type Config, type FunctionName } from '../config.js';
import type { ResourceNames } from '../resources.js';
import { createLogger, withLambdaContext, type LambdaContextOptions, type LambdaHandler } from './logger.js';

/**
 * What a handler is wired from: the configuration, the resources' names and the SDK clients.
 * Lambda builds it from its environment; the local stack from the emulators it started.
 */
export interface HandlerWiring<K extends keyof ResourceNames = keyof ResourceNames> {
  readonly config: Config;
  /** The names of the resources the handler uses (the local stack may pass all of them). */
  readonly resources: Pick<ResourceNames, K>;
  readonly dynamo: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  readonly sns: SNSClient;
  readonly logger: Logger;
}

/**
 * A function's wiring in Lambda: its configuration, the names of the resources it is granted, and
 * a logger under its service name (SERVICE_NAMES, the one place it is written).
 */
export function wiringFromEnvironment<K extends keyof ResourceNames>(name: FunctionName, needed: readonly K[]): HandlerWiring<K> {
  const config = loadProcessConfig(Deployment.deployed);
  return {
    config,
    resources: loadProcessResourceNames(needed),
    dynamo: createDocumentClient(),
    sqs: createSqsClient(),
    s3: createS3Client(),
    sns: createSnsClient(),
    logger: createLogger(SERVICE_NAMES[name], config.logLevel),
  };
}

/**
 * A Lambda entry point wired on its first invocation, once per cold start: importing the module
 * reads no environment, so tests and the local stack can import the factories beside it.
 */
export function wiredOnFirstCall<A extends unknown[], R>(wire: () => (...args: A) => R): (...args: A) => R {
  let wired: ((...args: A) => R) | undefined;
  return (...args) => (wired ??= wire())(...args);
}

/**
 * A function's Lambda entry point: wired from its environment on the first invocation, once per
 * cold start, and with Lambda's context on every line of each invocation (`withLambdaContext`).
 */
export function lambdaEntry<K extends keyof ResourceNames, E, R>(
  name: FunctionName,
  needed: readonly K[],
  wire: (wiring: HandlerWiring<K>) => LambdaHandler<E, R>,
  options: LambdaContextOptions<E> = {},
): LambdaHandler<E, R> {
  return wiredOnFirstCall(() => {
    const wiring = wiringFromEnvironment(name, needed);
    return withLambdaContext(wiring.logger, wire(wiring), options);
  });
}

import type { Logger } from '@aws-lambda-powertools/logger';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, createS3Client, createSqsClient } from '../adapters/aws-clients.js';
import { Deployment, loadProcessConfig, loadProcessResourceNames, type Config } from '../config.js';
import type { ResourceNames } from '../resources.js';
import { createLogger } from './logger.js';

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
  readonly logger: Logger;
}

/** A function's wiring in Lambda: its configuration and the names of the resources it is granted. */
export function wiringFromEnvironment<K extends keyof ResourceNames>(service: string, needed: readonly K[]): HandlerWiring<K> {
  const config = loadProcessConfig(Deployment.deployed);
  return {
    config,
    resources: loadProcessResourceNames(needed),
    dynamo: createDocumentClient(),
    sqs: createSqsClient(),
    s3: createS3Client(),
    logger: createLogger(service, config.logLevel),
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

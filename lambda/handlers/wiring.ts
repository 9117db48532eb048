import type { Logger } from '@aws-lambda-powertools/logger';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from '../config.js';
import type { ResourceNames } from '../resources.js';

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
  readonly logger: Logger;
}

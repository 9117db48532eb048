/**
 * SDK clients pointed at the emulators, built with the same factories the handlers use in Lambda.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, createSqsClient } from '../lambda/adapters/aws-clients.js';
import { LOCAL_REGION, type Emulators } from './emulators.js';

/** The emulators accept any credentials; fixed ones keep the SDK from searching the machine for real ones. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

export interface LocalClients {
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
  /** Closes the clients' keep-alive sockets. */
  readonly destroy: () => void;
}

/**
 * fauxqs names its queues `http://sqs.<region>.localhost:<port>/…`, a host that does not resolve
 * here. An SQS client with an explicit `endpoint` sends every call there and never uses the
 * queue URL's host, so the URLs can stay as fauxqs gives them.
 */
export function createLocalClients(emulators: Pick<Emulators, 'sqsEndpoint' | 'dynamoEndpoint'>): LocalClients {
  const sqs = createSqsClient({ endpoint: emulators.sqsEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const dynamo = createDocumentClient({ endpoint: emulators.dynamoEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  return {
    sqs,
    dynamo,
    destroy: () => {
      sqs.destroy();
      dynamo.destroy();
    },
  };
}

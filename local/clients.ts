/**
 * SDK clients pointed at the emulators, built with the same factories the handlers use in Lambda.
 * Given the emulators of this process, the DynamoDB client reaches dynalite in process rather
 * than over its loopback socket (in-process-http.ts).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, createS3Client, createSnsClient, createSqsClient, type ClientOptions } from '../lambda/adapters/aws-clients.js';
import { LOCAL_REGION, type Emulators } from './emulators.js';
import { createUnsignedRequestSigner } from './unsigned-requests.js';

/** The emulators accept any credentials; fixed ones keep the SDK from searching the machine for real ones. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * The options of a local client of `service` (SigV4's name for it). The emulators never check a
 * signature: the local clients spend no CPU computing one (unsigned-requests.ts).
 */
function localClientOptions(service: string, endpoint: string): ClientOptions {
  return {
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    signer: createUnsignedRequestSigner({ accessKeyId: LOCAL_CREDENTIALS.accessKeyId, region: LOCAL_REGION, service }),
  };
}

export interface LocalClients {
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
  /** fauxqs's S3, on the same endpoint as its SQS, with path-style bucket addresses. */
  readonly s3: S3Client;
  /** fauxqs's SNS, on the same endpoint as its SQS. */
  readonly sns: SNSClient;
  /** Closes the clients' keep-alive sockets. */
  readonly destroy: () => void;
}

/**
 * fauxqs names its queues `http://sqs.<region>.localhost:<port>/…`, a host that does not resolve
 * here. An SQS client with an explicit `endpoint` sends every call there and never uses the
 * queue URL's host, so the URLs can stay as fauxqs gives them.
 */
export function createLocalClients(emulators: Pick<Emulators, 'sqsEndpoint' | 'dynamoEndpoint'> & Partial<Pick<Emulators, 'dynamoHandler'>>): LocalClients {
  const sqs = createSqsClient(localClientOptions('sqs', emulators.sqsEndpoint));
  const dynamo = createDocumentClient(localClientOptions('dynamodb', emulators.dynamoEndpoint));
  if (emulators.dynamoHandler !== undefined) {
    // The client is the handlers' own (same factory, middleware and endpoint); only its transport
    // changes, read by the SDK at each send. Nothing has been sent yet, so the socket handler
    // replaced has no connection to close.
    dynamo.config.requestHandler.destroy?.();
    dynamo.config.requestHandler = emulators.dynamoHandler;
  }
  const s3 = createS3Client({ ...localClientOptions('s3', emulators.sqsEndpoint), forcePathStyle: true });
  const sns = createSnsClient(localClientOptions('sns', emulators.sqsEndpoint));
  return {
    sqs,
    dynamo,
    s3,
    sns,
    destroy: () => {
      sns.destroy();
      sqs.destroy();
      dynamo.destroy();
      s3.destroy();
    },
  };
}

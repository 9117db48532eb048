/**
 * SDK clients, created once per cold start. `endpoint` points them at the local emulators.
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type UpdateCommand, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';

/** How the SDK's clients sign a request (`RequestSigner` of `@smithy/types`, the same for every client). */
export type RequestSigner = Extract<NonNullable<DynamoDBClientConfig['signer']>, { readonly sign: unknown }>;

/** Where the clients connect; empty in Lambda, where the SDK finds region and credentials itself. */
export interface ClientOptions {
  readonly endpoint?: string;
  readonly region?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /**
   * Replaces the SDK's SigV4 signer. Only the local stack sets it (local/unsigned-requests.ts),
   * for emulators that never check a signature; in Lambda the SDK's own signer is the only one.
   */
  readonly signer?: RequestSigner;
}

export function createDocumentClient(options: ClientOptions = {}): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ ...options }), {
    marshallOptions: { removeUndefinedValues: true },
  });
}

export function createSqsClient(options: ClientOptions = {}): SQSClient {
  return new SQSClient({ ...options });
}

export function createSnsClient(options: ClientOptions = {}): SNSClient {
  return new SNSClient({ ...options });
}

/** Deployed only: the local stack has no CloudWatch (its metrics source is local/metrics-recorder.ts). */
export function createCloudWatchClient(options: ClientOptions = {}): CloudWatchClient {
  return new CloudWatchClient({ ...options });
}

/** `forcePathStyle` for an emulator that serves every bucket on one host (fauxqs). */
export function createS3Client(options: ClientOptions & { readonly forcePathStyle?: boolean } = {}): S3Client {
  return new S3Client({ ...options });
}

/** Whether an SDK error is DynamoDB's refusal of a condition expression: an expected outcome, not a fault. */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/**
 * Awaits a conditional write whose refused condition is an expected outcome, not a fault.
 * @returns the output, or undefined when the condition was not met
 */
export async function unlessConditionFails<Output>(write: Promise<Output>): Promise<Output | undefined> {
  try {
    return await write;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/**
 * Sends a conditional UpdateItem whose refused condition is an expected outcome, not a fault.
 * @returns the output, or undefined when the condition was not met
 */
export function updateIfCondition(client: DynamoDBDocumentClient, command: UpdateCommand): Promise<UpdateCommandOutput | undefined> {
  return unlessConditionFails(client.send(command));
}

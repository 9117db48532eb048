/**
 * The payload bucket: dead letters too large for a DynamoDB item, one object each, written before
 * the item that points at it and removed after it.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { AccessMap } from './access.js';
import type { PayloadStore } from '../core/dead-letter.js';

/** The IAM actions of each method of the payload store, on the bucket's objects (under PAYLOAD_OBJECT_PREFIX). */
export const PAYLOAD_BUCKET_ACCESS = {
  put: [{ resource: 'payloadBucket', actions: ['s3:PutObject'] }],
  get: [{ resource: 'payloadBucket', actions: ['s3:GetObject'] }],
  remove: [{ resource: 'payloadBucket', actions: ['s3:DeleteObject'] }],
} as const satisfies AccessMap<PayloadStore>;

/** S3 answered a GetObject without a body: a fault, as every object is written with one. */
export class MissingPayloadBodyError extends Error {
  override readonly name = 'MissingPayloadBodyError';
  constructor(
    readonly bucket: string,
    readonly key: string,
  ) {
    super(`object ${key} of bucket ${bucket} has no body`);
  }
}

export function createPayloadBucket(client: S3Client, bucket: string): PayloadStore {
  return {
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' }));
    },
    async get(key) {
      const output = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (output.Body === undefined) throw new MissingPayloadBodyError(bucket, key);
      return output.Body.transformToString('utf-8');
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
}

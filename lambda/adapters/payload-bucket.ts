/**
 * The payload bucket: dead letters too large for a DynamoDB item, one object each, written before
 * the item that points at it and removed after it.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { PayloadStore } from './dead-letter-store.js';

export function createPayloadBucket(client: S3Client, bucket: string): PayloadStore {
  return {
    async put(key, body) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' }));
    },
    async get(key) {
      const output = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (output.Body === undefined) throw new Error(`object ${key} of bucket ${bucket} has no body`);
      return output.Body.transformToString('utf-8');
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
}

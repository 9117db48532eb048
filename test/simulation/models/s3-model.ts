/**
 * The few S3 object calls of the payload bucket, in memory: PutObject, GetObject, DeleteObject.
 * Strongly consistent, as S3 is for these calls since December 2020.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { createModelClient, type CallGate } from './sqs-fifo-model.js';

export class S3Model {
  readonly objects = new Map<string, string>();

  execute(operation: string, input: unknown): unknown {
    const { Bucket, Key, Body } = input as { Bucket?: string; Key?: string; Body?: unknown };
    const path = `${Bucket ?? ''}/${Key ?? ''}`;
    switch (operation) {
      case 'PutObject':
        this.objects.set(path, String(Body));
        return {};
      case 'GetObject': {
        const body = this.objects.get(path);
        if (body === undefined) throw Object.assign(new Error('The specified key does not exist.'), { name: 'NoSuchKey' });
        return { Body: { transformToString: async () => body } };
      }
      case 'DeleteObject':
        this.objects.delete(path);
        return {};
      default:
        throw new Error(`the S3 model has no ${operation}`);
    }
  }
}

/** An S3 client whose `send` answers from the model through `gate`. */
export function createModelS3Client(model: S3Model, gate: CallGate): S3Client {
  return createModelClient<S3Client>('s3', model, gate);
}

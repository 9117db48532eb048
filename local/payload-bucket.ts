/**
 * The payload bucket (PAYLOAD_BUCKET, lambda/resources.ts) in fauxqs's S3, as the CDK stack
 * declares it: created once, kept across restarts with DATA_DIR.
 */
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { PAYLOAD_BUCKET } from '../lambda/resources.js';

/** Creates the bucket unless it exists; resolves to its name. */
export async function ensurePayloadBucket(s3: S3Client): Promise<string> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: PAYLOAD_BUCKET.localName }));
  } catch {
    await s3.send(new CreateBucketCommand({ Bucket: PAYLOAD_BUCKET.localName }));
  }
  return PAYLOAD_BUCKET.localName;
}

import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { IamAction } from '../lambda/adapters/access.js';
import { PAYLOAD_BUCKET, PAYLOAD_OBJECT_PREFIX } from '../lambda/resources.js';

/** One S3 action of the calls the adapters make (IamAction). */
export type ObjectAction = Extract<IamAction, `s3:${string}`>;

/** Properties of {@link PayloadBucket}. */
export interface PayloadBucketProps {
  /**
   * How long an object is kept. Objects are dead letters too large for a DynamoDB item, removed
   * when redriven; this only collects what a crash left behind, so it outlives the dead letters' TTL.
   */
  readonly expiration: Duration;
  /**
   * What happens to the bucket when it leaves the stack: it holds dead letters' payloads.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The bucket for dead letters too large for a DynamoDB item (an event may be up to 1 MiB, an item
 * at most 400 KB). Private (all public access blocked, owner-enforced objects), encrypted with
 * S3-managed keys, reachable over TLS only, objects expiring after `expiration`.
 */
export class PayloadBucket extends Construct {
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: PayloadBucketProps) {
    super(scope, id);
    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: props.expiration, abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Only the project’s own functions read and write this bucket, each object once, and every such write is logged by the function with the event id; server access logs would add a second bucket that only repeats those lines.',
    });
  }

  /**
   * Lets `fn` make exactly `actions` (`s3:PutObject`, `s3:GetObject`, `s3:DeleteObject`) on the
   * dead letters' objects, and tells it the bucket's name. Object keys are made of subscription
   * ids and positions, so the grant names their prefix; cdk-nag's IAM5 finding on that wildcard
   * is acknowledged on the function's role alone, for this resource alone.
   */
  grantObjectActions(fn: lambda.Function, actions: readonly ObjectAction[]): void {
    if (actions.length === 0) throw new Error('A grant on the payload bucket names no action');
    iam.Grant.addToPrincipal({ grantee: fn, actions: [...actions], resourceArns: [this.bucket.arnForObjects(`${PAYLOAD_OBJECT_PREFIX}*`)] });
    fn.addEnvironment(PAYLOAD_BUCKET.envVar, this.bucket.bucketName);
    const logicalId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket);
    Validations.of(fn.role ?? fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${PAYLOAD_OBJECT_PREFIX}*]`,
      reason: 'Each dead letter, kept or parked event too large for a DynamoDB item is one object under this prefix, named by its subscription and position: the keys cannot be listed in a policy.',
    });
  }
}

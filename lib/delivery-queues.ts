import { Duration, Names, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONSUMER_BATCH_SIZE } from '../lambda/config.js';
import { FIFO_QUEUE_SETTINGS, QUEUES } from '../lambda/resources.js';

/** Properties of {@link DeliveryQueues}. */
export interface DeliveryQueuesProps {
  /**
   * Visibility timeout of the delivery queue. AWS asks for at least 6 × the consumer's timeout
   * (`queueVisibilityTimeoutSeconds`), or a batch still being worked on is handed out again.
   */
  readonly visibilityTimeout: Duration;
  /**
   * Receives after which SQS itself moves a message to the dead-letter queue. Only a backstop for
   * crash loops (`backstopMaxReceiveCount`): the consumer dead-letters after real attempts, because
   * messages riding behind a failing head are received without being attempted.
   */
  readonly maxReceiveCount: number;
  /**
   * What happens to the queues when they leave the stack.
   * @default RemovalPolicy.DESTROY, the CDK default for queues
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** Options of {@link DeliveryQueues.addConsumer}. */
export interface DeliveryConsumerOptions {
  /** Most concurrent invocations the event source mapping starts (2 to 1000). */
  readonly maxConcurrency: number;
}

/**
 * The SQS FIFO delivery queue, whose message groups are the partitions of the ordering contract,
 * and its FIFO dead-letter queue.
 *
 * Both run in high-throughput mode (deduplication and throughput per message group), so an
 * ordering key's volume is not capped by the queue-wide 300 calls/s of a plain FIFO queue.
 * Deduplication ids are the events' ids, never a hash of the body.
 *
 * The grants name exactly the SQS actions of the calls a function (or its event source mapping)
 * makes, a batch call being authorized as its single action (`SendMessageBatch` as
 * `sqs:SendMessage`). Not the CDK's `grantSendMessages` and `grantConsumeMessages`: they add
 * `GetQueueUrl`, which no function calls as each is given its queue's URL, and give senders
 * `GetQueueAttributes`.
 */
export class DeliveryQueues extends Construct {
  /** The ordered queue the ingest function sends to and the consumer reads. */
  readonly deliveryQueue: sqs.Queue;
  /** Events the consumer gave up on, and SQS's backstop redrive. */
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: DeliveryQueuesProps) {
    super(scope, id);
    // The same settings the local stack gives its queues (FIFO_QUEUE_SETTINGS); the CDK enums'
    // values are SQS's attribute values.
    const common = {
      fifo: true,
      contentBasedDeduplication: FIFO_QUEUE_SETTINGS.contentBasedDeduplication,
      deduplicationScope: FIFO_QUEUE_SETTINGS.deduplicationScope as sqs.DeduplicationScope,
      fifoThroughputLimit: FIFO_QUEUE_SETTINGS.fifoThroughputLimit as sqs.FifoThroughputLimit,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(FIFO_QUEUE_SETTINGS.retentionSeconds),
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
    } satisfies sqs.QueueProps;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', common);
    this.deliveryQueue = new sqs.Queue(this, 'DeliveryQueue', {
      ...common,
      visibilityTimeout: props.visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }

  /** Lets `fn` send to the delivery queue (`SendMessageBatch`) and tells it the queue's URL. */
  grantSendToDelivery(fn: lambda.Function): void {
    grantOnQueue(fn, this.deliveryQueue, QUEUES.delivery.envVar, ['sqs:SendMessage']);
  }

  /**
   * Makes `fn` the delivery queue's consumer: an event source mapping with Lambda's FIFO maximum
   * batch of 10 and partial batch responses, so one group's failure does not send the other
   * groups of the batch back. Tells `fn` the queue's URL.
   *
   * Lambda's poller acts with the function's role: it needs `ReceiveMessage`, `DeleteMessage`
   * (the records the function did not report as failed) and `GetQueueAttributes`. The function
   * itself calls `ChangeMessageVisibilityBatch` (backoff of a failed head, release of its
   * successors), which is `sqs:ChangeMessageVisibility`. The queue is encrypted with SQS-managed
   * keys, so no KMS action is needed.
   *
   * The mapping is declared here rather than by `SqsEventSource`, whose `grantConsumeMessages`
   * would add `GetQueueUrl`; it keeps the construct id `SqsEventSource` gives it, and so its
   * logical id. The function's resource depends on its role's policy, so the mapping, which
   * names the function, is created once the role may receive.
   */
  addConsumer(fn: lambda.Function, options: DeliveryConsumerOptions): void {
    grantOnQueue(fn, this.deliveryQueue, QUEUES.delivery.envVar, [
      'sqs:ReceiveMessage',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:ChangeMessageVisibility',
    ]);
    fn.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(this.deliveryQueue.node)}`, {
      eventSourceArn: this.deliveryQueue.queueArn,
      batchSize: CONSUMER_BATCH_SIZE,
      reportBatchItemFailures: true,
      maxConcurrency: options.maxConcurrency,
    });
  }

  /** Lets `fn` dead-letter events itself (`SendMessage`) and tells it the dead-letter queue's URL. */
  grantSendToDeadLetter(fn: lambda.Function): void {
    grantOnQueue(fn, this.deadLetterQueue, QUEUES.deadLetter.envVar, ['sqs:SendMessage']);
  }

  /**
   * Lets `fn` redrive dead letters from the store into the delivery queue (`SendMessageBatch` is
   * `sqs:SendMessage`), and tells it the queue's URL.
   */
  grantRedrive(fn: lambda.Function): void {
    grantOnQueue(fn, this.deliveryQueue, QUEUES.delivery.envVar, ['sqs:SendMessage']);
  }

  /**
   * Lets `fn` import the backstop queue into the store of dead letters, and tells it the queue's
   * URL: receive, release what it cannot import (a batched `ChangeMessageVisibility`), delete
   * what it imported. Nothing else: no send, no purge.
   */
  grantImportBackstop(fn: lambda.Function): void {
    grantOnQueue(fn, this.deadLetterQueue, QUEUES.deadLetter.envVar, ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage']);
  }

  /**
   * Lets `fn` read the delivery queue's approximate counts (`GetQueueAttributes`), which the
   * routing view shows and the routing switch requires to be zero, and tells it the queue's URL.
   */
  grantReadDeliveryCounts(fn: lambda.Function): void {
    grantOnQueue(fn, this.deliveryQueue, QUEUES.delivery.envVar, ['sqs:GetQueueAttributes']);
  }
}

/** Grants exactly `actions` on `queue`, by its ARN, and sets the variable that carries its URL. */
function grantOnQueue(fn: lambda.Function, queue: sqs.IQueue, envVar: string, actions: readonly string[]): void {
  iam.Grant.addToPrincipal({ grantee: fn, actions: [...actions], resourceArns: [queue.queueArn] });
  fn.addEnvironment(envVar, queue.queueUrl);
}

import { Duration, Names, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { IamAction } from '../lambda/adapters/access.js';
import { CONSUMER_BATCH_SIZE } from '../lambda/config.js';
import { FIFO_QUEUE_SETTINGS, QUEUES } from '../lambda/resources.js';

/** A queue of QUEUES, by its key there. */
export type QueueName = keyof typeof QUEUES;

/** One SQS action of the calls the adapters make (IamAction). */
export type QueueAction = Extract<IamAction, `sqs:${string}`>;

/**
 * The calls Lambda's poller makes on the delivery queue for the event source mapping, with the
 * consumer's role: receive, delete the records the function did not report as failed, and read the
 * queue's attributes. They are AWS's calls, not the code's, so no adapter declares them.
 */
const EVENT_SOURCE_MAPPING_ACTIONS = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'] as const satisfies readonly QueueAction[];

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
  private readonly queues: Readonly<Record<QueueName, sqs.Queue>>;

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
    this.queues = { delivery: this.deliveryQueue, deadLetter: this.deadLetterQueue };
  }

  /** The queue declared for `name`. */
  queue(name: QueueName): sqs.Queue {
    return this.queues[name];
  }

  /**
   * Lets `fn` make exactly `actions` on the queue `name`, by its ARN, and tells it the queue's
   * URL. `actions` are the IAM actions of the calls its code makes on the queue.
   */
  grantQueueActions(name: QueueName, fn: lambda.Function, actions: readonly QueueAction[]): void {
    if (actions.length === 0) throw new Error(`A grant on the ${name} queue names no action`);
    const queue = this.queue(name);
    iam.Grant.addToPrincipal({ grantee: fn, actions: [...actions], resourceArns: [queue.queueArn] });
    fn.addEnvironment(QUEUES[name].envVar, queue.queueUrl);
  }

  /**
   * Makes `fn` the delivery queue's consumer: an event source mapping with Lambda's FIFO maximum
   * batch of 10 and partial batch responses, so one group's failure does not send the other
   * groups of the batch back.
   *
   * Lambda's poller acts with the function's role: this grants its calls
   * (EVENT_SOURCE_MAPPING_ACTIONS) and no other. The function's own calls on the queue (its
   * visibility changes) are its code's, granted with the rest of them, which also tells it the
   * queue's URL. The queue is encrypted with SQS-managed keys, so no KMS action is needed.
   *
   * The mapping is declared here rather than by `SqsEventSource`, whose `grantConsumeMessages`
   * would add `GetQueueUrl`; it keeps the construct id `SqsEventSource` gives it, and so its
   * logical id. The function's resource depends on its role's policy, so the mapping, which
   * names the function, is created once the role may receive.
   */
  addConsumer(fn: lambda.Function, options: DeliveryConsumerOptions): void {
    iam.Grant.addToPrincipal({ grantee: fn, actions: [...EVENT_SOURCE_MAPPING_ACTIONS], resourceArns: [this.deliveryQueue.queueArn] });
    fn.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(this.deliveryQueue.node)}`, {
      eventSourceArn: this.deliveryQueue.queueArn,
      batchSize: CONSUMER_BATCH_SIZE,
      reportBatchItemFailures: true,
      maxConcurrency: options.maxConcurrency,
    });
  }
}

/**
 * The two FIFO queues of QUEUES (lambda/resources.ts) with the attributes the design gives them,
 * every number derived from the one configuration (lambda/config.ts).
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  SetQueueAttributesCommand,
  type QueueAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { backstopMaxReceiveCount, queueVisibilityTimeoutSeconds, type Config } from '../lambda/config.js';
import { FIFO_QUEUE_SETTINGS, QUEUES, type QueueDefinition } from '../lambda/resources.js';

type QueueAttributes = Partial<Record<QueueAttributeName, string>>;

/** Fixed at creation (FIFO_QUEUE_SETTINGS), on SQS as on fauxqs. */
const FIFO_ATTRIBUTES: QueueAttributes = {
  FifoQueue: 'true',
  ContentBasedDeduplication: String(FIFO_QUEUE_SETTINGS.contentBasedDeduplication),
  DeduplicationScope: FIFO_QUEUE_SETTINGS.deduplicationScope,
  FifoThroughputLimit: FIFO_QUEUE_SETTINGS.fifoThroughputLimit,
};

const RETENTION_ATTRIBUTES: QueueAttributes = { MessageRetentionPeriod: String(FIFO_QUEUE_SETTINGS.retentionSeconds) };

/**
 * The delivery queue's attributes that follow the configuration, and so may change between two
 * starts on one DATA_DIR. The dead-letter queue keeps SQS's default visibility timeout, as the
 * CDK stack declares it.
 */
export function deliveryQueueAttributes(config: Config, deadLetterQueueArn: string): QueueAttributes {
  return {
    ...RETENTION_ATTRIBUTES,
    VisibilityTimeout: String(queueVisibilityTimeoutSeconds(config)),
    // A backstop for crash loops only: the consumer dead-letters after real attempts itself.
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterQueueArn, maxReceiveCount: backstopMaxReceiveCount(config) }),
  };
}

/** A queue as the local stack uses it. */
export interface LocalQueue {
  readonly url: string;
  readonly arn: string;
}

async function findQueueUrl(sqs: SQSClient, name: string): Promise<string | undefined> {
  const output = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }));
  return output.QueueUrls?.find((url) => url.endsWith(`/${name}`));
}

/**
 * Creates the queue, or brings an existing one (a restart on the same DATA_DIR) to the configured
 * attributes. The FIFO attributes cannot change after creation, on SQS as on fauxqs, and are
 * constants, so an existing queue already has them.
 */
async function ensureQueue(sqs: SQSClient, definition: QueueDefinition, configured: QueueAttributes): Promise<LocalQueue> {
  let url = await findQueueUrl(sqs, definition.localName);
  if (url === undefined) {
    const created = await sqs.send(new CreateQueueCommand({ QueueName: definition.localName, Attributes: { ...FIFO_ATTRIBUTES, ...configured } }));
    url = created.QueueUrl;
  } else {
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: configured }));
  }
  if (url === undefined) throw new Error(`CreateQueue returned no URL for ${definition.localName}`);
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`GetQueueAttributes returned no ARN for ${definition.localName}`);
  return { url, arn };
}

/** Creates (or updates) the dead-letter queue, then the delivery queue that redrives to it. */
export async function ensureQueues(sqs: SQSClient, config: Config): Promise<{ delivery: LocalQueue; deadLetter: LocalQueue }> {
  const deadLetter = await ensureQueue(sqs, QUEUES.deadLetter, RETENTION_ATTRIBUTES);
  const delivery = await ensureQueue(sqs, QUEUES.delivery, deliveryQueueAttributes(config, deadLetter.arn));
  return { delivery, deadLetter };
}

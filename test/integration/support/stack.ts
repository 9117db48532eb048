/**
 * An in-process local stack for a test file: the real handlers and adapters against the embedded
 * emulators, on a port the OS chooses, with the configuration read by the same `loadConfig`.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { ScanCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Deployment, loadConfig } from '../../../lambda/config.js';
import { TABLES } from '../../../lambda/resources.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../../local/stack.js';

/** Fast defaults for tests: no backoff floor, short timeouts, quiet logs. */
const TEST_ENVIRONMENT: Readonly<Record<string, string>> = {
  RETRY_BASE_SECONDS: '0',
  RETRY_MAX_SECONDS: '2',
  DELIVERY_TIMEOUT_MS: '2000',
  LOG_LEVEL: 'WARN',
};

export interface TestStack extends LocalStack {
  /** Every log line, for a failing test's message. */
  readonly logs: readonly string[];
  /** Messages in the delivery queue: visible, in flight and delayed. */
  readonly queueDepth: () => Promise<number>;
  /** The Events table item of an event, or undefined. */
  readonly eventItem: (eventId: string) => Promise<Record<string, unknown> | undefined>;
  /** Reads up to 10 messages of the backstop dead-letter queue with all their attributes, leaving them there. */
  readonly receiveDeadLetters: () => Promise<Message[]>;
  /** The items of a subscription's dead letters in the store, in position order (the count item and kept events left out). */
  readonly deadLetterItems: (subscriptionId: string) => Promise<Record<string, unknown>[]>;
}

/** What a test may set of the local stack besides its environment: the rest is the test stack's. */
export type TestStackOptions = Omit<LocalStackOptions, 'config' | 'port' | 'logSink'>;

export async function startTestStack(environment: Readonly<Record<string, string>> = {}, options: TestStackOptions = {}): Promise<TestStack> {
  const config = loadConfig({ ...TEST_ENVIRONMENT, ...environment }, Deployment.local);
  const logs: string[] = [];
  const stack = await startLocalStack({ ...options, config, port: 0, logSink: (line) => logs.push(line) });
  const { sqs, dynamo } = stack.clients;
  return {
    ...stack,
    logs,
    queueDepth: async () => {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.resources.deliveryQueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible) + Number(Attributes.ApproximateNumberOfMessagesDelayed);
    },
    eventItem: async (eventId) => {
      // An event's item goes by the id of its scope, `<event_id> s<hash>` (see `namedEventId`): found
      // by its producer's id, which the tests keep unique across subscriptions.
      const key = TABLES.events.partitionKey;
      const found: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamo.send(
          new ScanCommand({
            TableName: stack.resources.eventsTable,
            FilterExpression: '#key = :id OR begins_with(#key, :scoped)',
            ExpressionAttributeNames: { '#key': key },
            ExpressionAttributeValues: { ':id': eventId, ':scoped': `${eventId} s` },
            ConsistentRead: true,
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        found.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      if (found.length > 1) throw new Error(`event id ${eventId} names ${found.length} events (${found.map((item) => String(item[key])).join(', ')}): give each test event an id of its own`);
      return found[0];
    },
    receiveDeadLetters: async () => {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: stack.resources.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          // Left visible: a test may read the same dead letters again while it polls.
          VisibilityTimeout: 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      return Messages;
    },
    deadLetterItems: async (subscriptionId) => {
      const { Items = [] } = await dynamo.send(
        new QueryCommand({
          TableName: stack.resources.deadLettersTable,
          KeyConditionExpression: 'subscription_id = :subscription',
          ExpressionAttributeValues: { ':subscription': subscriptionId },
          ConsistentRead: true,
        }),
      );
      // Kept events and runs' numbers sort first, under `!` (see `kept-event-store.ts`).
      return Items.filter((item) => item.position !== '#count' && !String(item.position).startsWith('!'));
    },
  };
}

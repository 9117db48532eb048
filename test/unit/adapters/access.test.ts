/**
 * The accesses each adapter declares are the calls it makes. Every method runs against mocked SDK
 * clients on each of its paths (found, absent, a refused condition, a large event), and every
 * command it sends must map, by its IAM action and the resource it names, into the method's
 * declared accesses: a call a method does not declare fails here, before its function lacks the
 * grant in AWS. Conversely, every declared action must be sent on some path, so that no grant is
 * wider than the calls.
 */
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { BatchGetCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { sdkStreamMixin } from '@smithy/core/serde';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { NO_RESOURCE, type AccessMap, type AccessTarget, type IamAction, type ResourceName } from '../../../lambda/adapters/access.js';
import { createCloudWatchClient, createDocumentClient, createS3Client, createSnsClient, createSqsClient } from '../../../lambda/adapters/aws-clients.js';
import { createMetricsSource, METRICS_SOURCE_ACCESS } from '../../../lambda/adapters/metrics-source.js';
import { BACKSTOP_QUEUE_ACCESS, createBackstopQueue } from '../../../lambda/adapters/backstop-queue.js';
import { createDeadLetterStore, DEAD_LETTER_STORE_ACCESS, MAX_INLINE_EVENT_BYTES } from '../../../lambda/adapters/dead-letter-store.js';
import { createKeptEventStore, KEPT_EVENT_STORE_ACCESS } from '../../../lambda/adapters/kept-event-store.js';
import { createReplayStateStore, REPLAY_STATE_STORE_ACCESS } from '../../../lambda/adapters/replay-state-store.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../../../lambda/adapters/delivery-queue.js';
import { createEventStore, EVENT_STORE_ACCESS } from '../../../lambda/adapters/event-store.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../../../lambda/adapters/group-store.js';
import { createNoticeTopic, NOTICE_TOPIC_ACCESS } from '../../../lambda/adapters/notice-topic.js';
import { createOrderingKeyStore, deliveredItemKey, ORDERING_KEY_STORE_ACCESS } from '../../../lambda/adapters/ordering-key-store.js';
import { createPayloadBucket, PAYLOAD_BUCKET_ACCESS } from '../../../lambda/adapters/payload-bucket.js';
import { createSettingsStore, SETTINGS_STORE_ACCESS } from '../../../lambda/adapters/settings-store.js';
import { createSubscriptionStore, SUBSCRIPTION_STORE_ACCESS } from '../../../lambda/adapters/subscription-store.js';
import type { BackstopMessage } from '../../../lambda/core/backstop-import.js';
import type { StoredDeadLetter } from '../../../lambda/core/dead-letter.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { HeadState } from '../../../lambda/core/lag.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { PAYLOAD_OBJECT_PREFIX, type ResourceNames } from '../../../lambda/resources.js';

const dynamoMock = mockClient(DynamoDBDocumentClient);
const sqsMock = mockClient(SQSClient);
const s3Mock = mockClient(S3Client);
const snsMock = mockClient(SNSClient);
const cloudWatchMock = mockClient(CloudWatchClient);
const dynamo = createDocumentClient({ region: 'us-east-1' });
const sqs = createSqsClient({ region: 'us-east-1' });
const s3 = createS3Client({ region: 'us-east-1' });
const sns = createSnsClient({ region: 'us-east-1' });
const cloudWatch = createCloudWatchClient({ region: 'us-east-1' });
const logger = createLogger('test', 'SILENT');

/** A distinct physical name per resource, so that each command's resource can be told. */
const NAMES: ResourceNames = {
  subscriptionsTable: 'Subscriptions',
  eventsTable: 'Events',
  deadLettersTable: 'DeadLetters',
  orderingKeysTable: 'OrderingKeys',
  groupsTable: 'Groups',
  settingsTable: 'Settings',
  deliveryQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/delivery.fifo',
  deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/dead-letter.fifo',
  payloadBucket: 'payloads',
  noticeTopic: 'arn:aws:sns:us-east-1:123456789012:notices',
};

/** The resource whose physical name is `name`. */
function resourceNamed(name: string | undefined): ResourceName {
  const found = (Object.keys(NAMES) as ResourceName[]).find((resource) => NAMES[resource] === name);
  if (found === undefined) throw new Error(`a command names ${String(name)}, which is no resource of the stack`);
  return found;
}

/** One action on one resource (or on none, for an action IAM cannot scope), as IAM authorizes a command. */
interface SentAccess {
  readonly action: IamAction;
  readonly resource: AccessTarget;
  readonly index?: string;
}

/**
 * What IAM authorizes a command by: its action, on the table (or the index a Query names), the
 * queue, or the object. An object outside PAYLOAD_OBJECT_PREFIX is outside every grant.
 */
function accessesOfCommand(command: object): SentAccess[] {
  const item = (action: IamAction, input: { readonly TableName?: string | undefined }): SentAccess[] => [{ action, resource: resourceNamed(input.TableName) }];
  const queue = (action: IamAction, input: { readonly QueueUrl?: string | undefined }): SentAccess[] => [{ action, resource: resourceNamed(input.QueueUrl) }];
  const object = (action: IamAction, input: { readonly Bucket?: string | undefined; readonly Key?: string | undefined }): SentAccess[] => {
    if (!(input.Key ?? '').startsWith(PAYLOAD_OBJECT_PREFIX)) throw new Error(`object key ${String(input.Key)} is outside ${PAYLOAD_OBJECT_PREFIX}`);
    return [{ action, resource: resourceNamed(input.Bucket) }];
  };
  if (command instanceof GetCommand) return item('dynamodb:GetItem', command.input);
  if (command instanceof PutCommand) return item('dynamodb:PutItem', command.input);
  if (command instanceof UpdateCommand) return item('dynamodb:UpdateItem', command.input);
  if (command instanceof DeleteCommand) return item('dynamodb:DeleteItem', command.input);
  if (command instanceof QueryCommand) {
    const { TableName, IndexName } = command.input;
    return [{ action: 'dynamodb:Query', resource: resourceNamed(TableName), ...(IndexName === undefined ? {} : { index: IndexName }) }];
  }
  if (command instanceof BatchGetCommand) {
    return Object.keys(command.input.RequestItems ?? {}).map((table) => ({ action: 'dynamodb:BatchGetItem', resource: resourceNamed(table) }));
  }
  if (command instanceof SendMessageCommand || command instanceof SendMessageBatchCommand) return queue('sqs:SendMessage', command.input);
  if (command instanceof ReceiveMessageCommand) return queue('sqs:ReceiveMessage', command.input);
  if (command instanceof DeleteMessageCommand || command instanceof DeleteMessageBatchCommand) return queue('sqs:DeleteMessage', command.input);
  if (command instanceof ChangeMessageVisibilityCommand || command instanceof ChangeMessageVisibilityBatchCommand) {
    return queue('sqs:ChangeMessageVisibility', command.input);
  }
  if (command instanceof GetQueueAttributesCommand) return queue('sqs:GetQueueAttributes', command.input);
  if (command instanceof PutObjectCommand) return object('s3:PutObject', command.input);
  if (command instanceof GetObjectCommand) return object('s3:GetObject', command.input);
  if (command instanceof DeleteObjectCommand) return object('s3:DeleteObject', command.input);
  if (command instanceof PublishCommand) return [{ action: 'sns:Publish', resource: resourceNamed(command.input.TopicArn) }];
  // GetMetricData names no resource: IAM authorizes it on Resource "*" alone.
  if (command instanceof GetMetricDataCommand) return [{ action: 'cloudwatch:GetMetricData', resource: NO_RESOURCE }];
  throw new Error(`no IAM action is known for ${command.constructor.name}: add it here, and to IamAction`);
}

/** Every command sent to the mocked clients since the last reset, as the accesses IAM checks. */
function sentAccesses(): SentAccess[] {
  const commands: object[] = [...dynamoMock.calls(), ...sqsMock.calls(), ...s3Mock.calls(), ...snsMock.calls(), ...cloudWatchMock.calls()].map((call) => call.args[0]);
  return commands.flatMap(accessesOfCommand);
}

const keyOf = (access: SentAccess): string => `${access.action} on ${access.resource}${access.index === undefined ? '' : `/index/${access.index}`}`;

/** One path through an adapter method: the answers it gets, and the call. */
interface Path<T> {
  readonly path: string;
  /** Answers for this path, over the default answer `{}` to every command. */
  readonly answer?: () => void;
  readonly run: (adapter: T) => Promise<unknown>;
}

/** An adapter under test: every method has its paths, so that a new method cannot go untested. */
interface AdapterCase<T> {
  readonly create: () => T;
  readonly access: AccessMap<T>;
  readonly paths: { readonly [K in keyof T]-?: readonly Path<T>[] };
}

/** One path of one method: what the method declares, and what the path sends (as {@link keyOf} writes them). */
interface PathRow {
  readonly method: string;
  readonly path: string;
  readonly declared: () => Set<string>;
  readonly sent: () => Promise<string[]>;
}

/** One method: what it declares, and what all its paths send. */
interface MethodRow {
  readonly method: string;
  readonly declared: () => Set<string>;
  readonly sentOnEveryPath: () => Promise<Set<string>>;
}

/** The rows of one adapter's table: one per path, and one per method with all its paths. */
function rowsOf<T>(adapterCase: AdapterCase<T>): { readonly paths: readonly PathRow[]; readonly methods: readonly MethodRow[] } {
  const methods = Object.keys(adapterCase.paths) as (keyof T & string)[];
  const declaredOf = (method: keyof T & string): Set<string> =>
    new Set(adapterCase.access[method].flatMap((access) => access.actions.map((action) => keyOf({ action, resource: access.resource, ...(access.index === undefined ? {} : { index: access.index }) }))));
  const runPath = async (path: Path<T>): Promise<string[]> => {
    resetMocks();
    path.answer?.();
    await path.run(adapterCase.create());
    return sentAccesses().map(keyOf);
  };
  return {
    paths: methods.flatMap((method) => adapterCase.paths[method].map((path) => ({ method, path: path.path, declared: () => declaredOf(method), sent: () => runPath(path) }))),
    methods: methods.map((method) => ({
      method,
      declared: () => declaredOf(method),
      sentOnEveryPath: async () => {
        const sent = new Set<string>();
        for (const path of adapterCase.paths[method]) for (const access of await runPath(path)) sent.add(access);
        return sent;
      },
    })),
  };
}

function resetMocks(): void {
  for (const mock of [dynamoMock, sqsMock, s3Mock, snsMock, cloudWatchMock]) mock.reset();
  dynamoMock.onAnyCommand().resolves({});
  sqsMock.onAnyCommand().resolves({});
  s3Mock.onAnyCommand().resolves({});
  cloudWatchMock.onAnyCommand().resolves({});
}

beforeEach(resetMocks);

const conditionFailed = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
const at = '2026-12-02T12:00:00.000Z';
const queued: QueuedEvent = {
  version: 1,
  event: { event_id: 'evt_1', tenant_id: 't', subscription_id: 'sub_1', type: 'x', payload_json: '{}' },
  ordering_key: 'k1',
  message_group_id: 'g1',
  accepted_at: at,
};
/** An event beyond what a DynamoDB item holds: its dead letter goes to the payload bucket. */
const largeQueued: QueuedEvent = { ...queued, event: { ...queued.event, payload_json: JSON.stringify({ blob: 'x'.repeat(MAX_INLINE_EVENT_BYTES) }) } };
const settled = { queued, sequence: 1, attempts: 1, at };
const objectBody = (body: string) => sdkStreamMixin(Readable.from([Buffer.from(body, 'utf8')]));
const deadLetterItem = (stored: { readonly queued_event: string } | { readonly payload_key: string }) => ({
  subscription_id: 'sub_1',
  position: 'abc#000000000001',
  event_id: 'evt_1',
  ordering_key: 'k1',
  message_group_id: 'g1',
  sequence: 1,
  attempts: 3,
  reason: 'HTTP 500',
  dead_lettered_at: at,
  ...stored,
});
const storedLetter: StoredDeadLetter = {
  queued,
  sequence: 1,
  attempts: 3,
  reason: 'HTTP 500',
  deadLetteredAt: at,
  subscriptionId: 'sub_1',
  position: 'abc#000000000001',
  orderingKey: 'k1',
  messageGroupId: 'g1',
};
const backstopMessage: BackstopMessage = { messageId: 'm1', receiptHandle: 'rh-1', messageGroupId: 'g1', body: '{}', receiveCount: 4 };
const head = { head_event_id: 'evt_1', head_sequence: 4, head_attempts: 2 };
const group = (depth: number) => ({ Attributes: { message_group_id: 'g1', depth } });

const ADAPTERS = {
  SubscriptionStore: rowsOf({
    create: () => createSubscriptionStore(dynamo, NAMES.subscriptionsTable),
    access: SUBSCRIPTION_STORE_ACCESS,
    paths: {
      get: [
        {
          path: 'the subscription exists',
          answer: () => dynamoMock.on(GetCommand).resolves({ Item: { subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', created_at: at } }),
          run: (store) => store.get('sub_1'),
        },
        { path: 'it does not', run: (store) => store.get('sub_1') },
      ],
      pause: [
        {
          path: 'the subscription exists',
          answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', created_at: at, paused_at: at, pause_reason: 'r' } }),
          run: (store) => store.pause({ subscriptionId: 'sub_1', reason: 'r', now: at }),
        },
        { path: 'it does not', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.pause({ subscriptionId: 'sub_1', reason: 'r', now: at }) },
      ],
      resume: [
        {
          path: 'the subscription exists',
          answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', created_at: at, resumed_at: at } }),
          run: (store) => store.resume({ subscriptionId: 'sub_1', now: at }),
        },
        { path: 'it does not', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.resume({ subscriptionId: 'sub_1', now: at }) },
      ],
      put: [
        { path: 'it is new', run: (store) => store.put({ subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', now: at }) },
        {
          path: 'it replaces one',
          answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/old', secret: 'whsec_y', created_at: at } }),
          run: (store) => store.put({ subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', now: at }),
        },
        {
          path: 'it keeps the existing secret',
          answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/old', secret: 'whsec_y', created_at: at } }),
          run: (store) => store.put({ subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com/hook', secret: 'whsec_x', shouldKeepExistingSecret: true, now: at }),
        },
        {
          path: 'another tenant holds the id',
          answer: () => dynamoMock.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'no', $metadata: {} })),
          run: (store) => store.put({ subscription_id: 'sub_1', tenant_id: 't2', url: 'https://example.com/hook', secret: 'whsec_x', now: at }),
        },
      ],
      beginOrderingChange: [
        { path: 'the subscription is ordered as read', run: (store) => store.beginOrderingChange({ subscriptionId: 'sub_1', tenantId: 't', from: 'subscription', mark: { ordering: 'resource', startedAt: at } }) },
        {
          path: 'it changed meanwhile',
          answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()),
          run: (store) => store.beginOrderingChange({ subscriptionId: 'sub_1', tenantId: 't', from: 'subscription', mark: { ordering: 'resource', startedAt: at } }),
        },
      ],
      liftOrderingChange: [
        { path: 'the mark is there', run: (store) => store.liftOrderingChange({ subscriptionId: 'sub_1', mark: { ordering: 'resource', startedAt: at } }) },
        { path: 'it is gone', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.liftOrderingChange({ subscriptionId: 'sub_1', mark: { ordering: 'resource', startedAt: at } }) },
      ],
      rotateSecret: [
        { path: 'the subscription exists', run: (store) => store.rotateSecret({ subscriptionId: 'sub_1', secret: 'whsec_x', previousSecretExpiresAt: at, now: at }) },
        {
          path: 'it does not',
          answer: () => dynamoMock.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'no', $metadata: {} })),
          run: (store) => store.rotateSecret({ subscriptionId: 'sub_1', secret: 'whsec_x', previousSecretExpiresAt: at, now: at }),
        },
      ],
      findRouting: [
        {
          path: 'some subscriptions exist',
          answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.subscriptionsTable]: [{ subscription_id: 'sub_1', tenant_id: 't' }] } }),
          run: (store) => store.findRouting(['sub_1', 'sub_2']),
        },
      ],
      list: [
        {
          path: 'a page of the tenant’s subscriptions',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [{ subscription_id: 'sub_1', tenant_id: 't' }], LastEvaluatedKey: { subscription_id: 'sub_1', tenant_id: 't' } });
            dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.subscriptionsTable]: [{ subscription_id: 'sub_1', tenant_id: 't', url: 'https://example.com', secret: 's', created_at: at }] } });
          },
          run: (store) => store.list({ tenantId: 't', after: 'sub_0', limit: 1 }),
        },
        { path: 'a tenant with none', answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [] }), run: (store) => store.list({ tenantId: 't', after: undefined, limit: 10 }) },
      ],
      findTenantSubscriptions: [
        {
          path: 'the tenant has subscriptions',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [{ subscription_id: 'sub_1', tenant_id: 't' }] });
            dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.subscriptionsTable]: [{ subscription_id: 'sub_1', tenant_id: 't', event_types: ['a'] }] } });
          },
          run: (store) => store.findTenantSubscriptions(['t']),
        },
        { path: 'the tenant has none', answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [] }), run: (store) => store.findTenantSubscriptions(['t']) },
      ],
    },
  }),

  EventStore: rowsOf({
    create: () => createEventStore(dynamo, { tableName: NAMES.eventsTable, ttlDays: 30 }),
    access: EVENT_STORE_ACCESS,
    paths: {
      recordAccepted: [
        { path: 'the event is new', run: (store) => store.recordAccepted({ eventId: 'evt_1', subscriptionId: 'sub_1', tenantId: 't', orderingKey: 'k1', messageGroupId: 'g1', acceptedAt: at }) },
        {
          path: 'it was recorded already (refused condition)',
          answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()),
          run: (store) => store.recordAccepted({ eventId: 'evt_1', subscriptionId: 'sub_1', tenantId: 't', orderingKey: 'k1', messageGroupId: 'g1', acceptedAt: at }),
        },
        {
          path: 'refused with a place in the queue: is it its own write, repeated?',
          answer: () => {
            dynamoMock.on(UpdateCommand).rejects(conditionFailed());
            dynamoMock.on(GetCommand).resolves({ Item: { status: 'accepted', queue_position: 'g1/1' } });
          },
          run: (store) => store.recordAccepted({ eventId: 'evt_1', subscriptionId: 'sub_1', tenantId: 't', orderingKey: 'k1', messageGroupId: 'g1', acceptedAt: at, queuePosition: 'g1/1' }),
        },
      ],
      isSettled: [
        { path: 'the event was delivered', answer: () => dynamoMock.on(GetCommand).resolves({ Item: { status: 'delivered' } }), run: (store) => store.isSettled({ eventId: 'evt_1', redrivenAt: undefined }) },
        { path: 'the event is unknown', run: (store) => store.isSettled({ eventId: 'evt_1', redrivenAt: at }) },
      ],
      findSettled: [
        {
          path: 'one event was delivered',
          answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.eventsTable]: [{ event_id: 'evt_1', status: 'delivered' }] } }),
          run: (store) => store.findSettled([{ eventId: 'evt_1', redrivenAt: undefined }, { eventId: 'evt_2', redrivenAt: at }]),
        },
      ],
      markDelivered: [{ path: 'always', run: (store) => store.markDelivered(settled) }],
      markDeliveredUnlessSettled: [
        { path: 'the event is not settled', run: (store) => store.markDeliveredUnlessSettled(settled) },
        { path: 'it was settled (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.markDeliveredUnlessSettled(settled) },
      ],
      markDeadLettered: [{ path: 'always', run: (store) => store.markDeadLettered({ ...settled, reason: 'HTTP 500' }) }],
      recordSequence: [
        { path: 'the number is recorded already', answer: () => dynamoMock.on(GetCommand).resolves({ Item: { sequence: 3 } }), run: (store) => store.recordSequence({ eventId: 'evt_1', sequence: 3 }) },
        { path: 'it is not', run: (store) => store.recordSequence({ eventId: 'evt_1', sequence: 3 }) },
      ],
      findSequence: [
        { path: 'it was given one', answer: () => dynamoMock.on(GetCommand).resolves({ Item: { sequence: 3 } }), run: (store) => store.findSequence('evt_1') },
        { path: 'the event is unknown', run: (store) => store.findSequence('evt_1') },
      ],
      findFanOuts: [
        {
          path: 'a fan-out was recorded',
          answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.eventsTable]: [{ event_id: 'evt_1 fan-out', fan_out_event_id: 'evt_1', tenant_id: 't', subscription_ids: ['sub_1'], accepted_at: at }] } }),
          run: (store) => store.findFanOuts(['evt_1 fan-out 0123', 'evt_2 fan-out 0123']),
        },
      ],
      findRecorded: [
        {
          path: 'the events were recorded',
          answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.eventsTable]: [{ event_id: 'evt_1', accepted_at: at, tenant_id: 't', subscription_id: 'sub_1', fingerprint: 'f' }] } }),
          run: (store) => store.findRecorded(['evt_1', 'evt_2']),
        },
      ],
      recordFanOut: [
        { path: 'the first record', run: (store) => store.recordFanOut({ eventId: 'evt_1', tenantId: 't', subscriptionIds: ['sub_1'], acceptedAt: at }) },
        {
          path: 'another request recorded it first (refused condition, then a read)',
          answer: () => {
            dynamoMock.on(PutCommand).rejects(conditionFailed());
            dynamoMock.on(GetCommand).resolves({ Item: { event_id: 'evt_1 fan-out', fan_out_event_id: 'evt_1', tenant_id: 't', subscription_ids: [], accepted_at: at } });
          },
          run: (store) => store.recordFanOut({ eventId: 'evt_1', tenantId: 't', subscriptionIds: ['sub_1'], acceptedAt: at }),
        },
      ],
      readOutcomes: [
        {
          path: 'the events were recorded',
          answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.eventsTable]: [{ event_id: 'evt_1', status: 'delivered', sequence: 3, queue_position: 'g1/1' }] } }),
          run: (store) => store.readOutcomes(['evt_1', 'evt_2']),
        },
      ],
    },
  }),

  KeptEventStore: rowsOf({
    create: () => createKeptEventStore(dynamo, { tableName: NAMES.deadLettersTable, retentionDays: 7, payloads: createPayloadBucket(s3, NAMES.payloadBucket) }),
    access: KEPT_EVENT_STORE_ACCESS,
    paths: {
      keep: [
        { path: 'an event small enough for an item', run: (store) => store.keep({ events: [{ queued, queuePosition: 'g1/1' }], body: JSON.stringify(queued) }) },
        { path: 'an event too large for an item even compressed', run: (store) => store.keep({ events: [{ queued, queuePosition: 'g1/2' }], body: randomBytes(400_000).toString('base64') }) },
      ],
      keepNumbers: [{ path: 'always', run: (store) => store.keepNumbers({ subscriptionId: 'sub_1', orderingKey: 'k1', firstPosition: 'g1/1', firstSequence: 1, eventIds: ['evt_1', 'evt_2'], at }) }],
      findNumbers: [
        {
          path: 'a run starts at or before the place',
          answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [{ position: '!numbers#x#g1/1', ordering_key: 'k1', first_position: 'g1/1', first_sequence: 1, event_ids: ['evt_1'] }] }),
          run: (store) => store.findNumbers({ subscriptionId: 'sub_1', orderingKey: 'k1', queuePosition: 'g1/1' }),
        },
        { path: 'none does', run: (store) => store.findNumbers({ subscriptionId: 'sub_1', orderingKey: 'k1', queuePosition: 'g1/1' }) },
      ],
      newestAcceptedAt: [
        {
          path: 'the subscription has kept events',
          answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [{ position: `!event#${at}#g1/1` }] }),
          run: (store) => store.newestAcceptedAt('sub_1'),
        },
        { path: 'it has none', run: (store) => store.newestAcceptedAt('sub_1') },
      ],
      readWindow: [
        {
          path: 'the bodies are in the items',
          answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [{ subscription_id: 'sub_1', position: `!event#${at}#g1/1`, event_ids: ['evt_1'], body_gz: new Uint8Array(gzipSync(JSON.stringify(queued))) }] }),
          run: (store) => store.readWindow({ subscriptionId: 'sub_1', since: at, until: at, after: undefined, limit: 10 }),
        },
        {
          path: 'a body is in the bucket',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [{ subscription_id: 'sub_1', position: `!event#${at}#g1/1`, event_ids: ['evt_1'], payload_key: `${PAYLOAD_OBJECT_PREFIX}sub_1/x.gz.b64` }] });
            s3Mock.on(GetObjectCommand).resolves({ Body: objectBody(gzipSync(JSON.stringify(queued)).toString('base64')) });
          },
          run: (store) => store.readWindow({ subscriptionId: 'sub_1', since: at, until: at, after: `!event#${at}#g1/0`, limit: 10 }),
        },
      ],
    },
  }),

  ReplayStateStore: rowsOf({
    create: () => createReplayStateStore(dynamo, NAMES.subscriptionsTable),
    access: REPLAY_STATE_STORE_ACCESS,
    paths: {
      start: [
        { path: 'none is under way', run: (store) => store.start('sub_1', { since: at, until: at, startedAt: at, replayed: 0, deadLettered: 0, notDelivered: 0 }, { isUntilGiven: true }) },
        {
          path: 'one is (refused condition, the item read)',
          answer: () => {
            dynamoMock.on(UpdateCommand).rejects(conditionFailed());
            dynamoMock.on(GetCommand).resolves({ Item: { subscription_id: 'sub_1', replay: { since: at, until: at, started_at: at, replayed: 1, dead_lettered: 0, not_delivered: 0 } } });
          },
          run: (store) => store.start('sub_1', { since: at, until: at, startedAt: at, replayed: 0, deadLettered: 0, notDelivered: 0 }, { isUntilGiven: false }),
        },
      ],
      claim: [
        {
          path: 'no step holds it',
          answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { subscription_id: 'sub_1', replay: { since: at, until: at, started_at: at, replayed: 1, dead_lettered: 0, not_delivered: 0, lease_until: at } } }),
          run: (store) => store.claim({ subscriptionId: 'sub_1', startedAt: at, now: at, leaseUntil: at }),
        },
      ],
      listUnderWay: [
        {
          path: 'over two pages',
          answer: () => dynamoMock.on(QueryCommand).resolvesOnce({ Items: [{ subscription_id: 'sub_1' }], LastEvaluatedKey: { subscription_id: 'sub_1' } }).resolves({ Items: [{ subscription_id: 'sub_2' }] }),
          run: (store) => store.listUnderWay(),
        },
      ],
      save: [{ path: 'always', run: (store) => store.save('sub_1', { since: at, until: at, startedAt: at, replayed: 1, deadLettered: 0, notDelivered: 0 }) }],
      finish: [{ path: 'always', run: (store) => store.finish('sub_1', { since: at, until: at, startedAt: at, replayed: 1, deadLettered: 0, notDelivered: 0 }) }],
      cancel: [
        {
          path: 'one is under way',
          answer: () => dynamoMock.on(GetCommand).resolves({ Item: { subscription_id: 'sub_1', replay: { since: at, until: at, started_at: at, replayed: 1, dead_lettered: 0, not_delivered: 0 } } }),
          run: (store) => store.cancel('sub_1', at),
        },
      ],
    },
  }),

  DeadLetterStore: rowsOf({
    create: () => createDeadLetterStore(dynamo, { tableName: NAMES.deadLettersTable, ttlDays: 30, payloads: createPayloadBucket(s3, NAMES.payloadBucket) }),
    access: DEAD_LETTER_STORE_ACCESS,
    paths: {
      put: [
        { path: 'a first dead letter, inline', run: (store) => store.put({ queued, sequence: 1, attempts: 3, reason: 'HTTP 500', deadLetteredAt: at }) },
        {
          path: 'it replaces the same one',
          answer: () => dynamoMock.on(PutCommand).resolves({ Attributes: deadLetterItem({ queued_event: JSON.stringify(queued) }) }),
          run: (store) => store.put({ queued, sequence: 1, attempts: 3, reason: 'HTTP 500', deadLetteredAt: at }),
        },
        { path: 'its event is too large for an item', run: (store) => store.put({ queued: largeQueued, sequence: 1, attempts: 3, reason: 'HTTP 500', deadLetteredAt: at }) },
      ],
      readPage: [
        {
          path: 'the events are in the items',
          answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [deadLetterItem({ queued_event: JSON.stringify(queued) })] }),
          run: (store) => store.readPage({ subscriptionId: 'sub_1', after: undefined, limit: 10 }),
        },
        {
          path: 'an event is in the bucket',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [deadLetterItem({ payload_key: `${PAYLOAD_OBJECT_PREFIX}sub_1/abc/${at}.json` })] });
            s3Mock.on(GetObjectCommand).resolves({ Body: objectBody(JSON.stringify(queued)) });
          },
          run: (store) => store.readPage({ subscriptionId: 'sub_1', after: 'abc#000000000000', limit: 10 }),
        },
      ],
      listRows: [
        {
          path: 'the subscription has dead letters',
          answer: () => dynamoMock.on(QueryCommand).resolves({ Items: [deadLetterItem({ queued_event: JSON.stringify(queued) })], LastEvaluatedKey: { subscription_id: 'sub_1' } }),
          run: (store) => store.listRows({ subscriptionId: 'sub_1', after: undefined, limit: 1 }),
        },
      ],
      remove: [
        {
          path: 'it is still there, its event in the bucket',
          answer: () => dynamoMock.on(DeleteCommand).resolves({ Attributes: deadLetterItem({ payload_key: `${PAYLOAD_OBJECT_PREFIX}sub_1/abc/${at}.json` }) }),
          run: (store) => store.remove(storedLetter),
        },
        {
          path: 'it was dead-lettered again (refused condition, its place read)',
          answer: () => {
            dynamoMock.on(DeleteCommand).rejects(conditionFailed());
            dynamoMock.on(GetCommand).resolves({ Item: { event_id: 'evt_1' } });
          },
          run: (store) => store.remove(storedLetter),
        },
      ],
      count: [{ path: 'the subscription has a count', answer: () => dynamoMock.on(GetCommand).resolves({ Item: { dead_letters: 2 } }), run: (store) => store.count('sub_1') }],
    },
  }),

  PayloadBucket: rowsOf({
    create: () => createPayloadBucket(s3, NAMES.payloadBucket),
    access: PAYLOAD_BUCKET_ACCESS,
    paths: {
      put: [{ path: 'always', run: (bucket) => bucket.put(`${PAYLOAD_OBJECT_PREFIX}sub_1/a.json`, '{}') }],
      get: [{ path: 'the object exists', answer: () => s3Mock.on(GetObjectCommand).resolves({ Body: objectBody('{}') }), run: (bucket) => bucket.get(`${PAYLOAD_OBJECT_PREFIX}sub_1/a.json`) }],
      remove: [{ path: 'always', run: (bucket) => bucket.remove(`${PAYLOAD_OBJECT_PREFIX}sub_1/a.json`) }],
    },
  }),

  GroupStore: rowsOf({
    create: () => createGroupStore(dynamo, NAMES.groupsTable),
    access: GROUP_STORE_ACCESS,
    paths: {
      recordIntake: [
        { path: 'the group has pending events', answer: () => dynamoMock.on(UpdateCommand).resolves(group(3)), run: (store) => store.recordIntake({ messageGroupId: 'g1', events: 3, orderingKeys: ['k1'], acceptedAt: at }) },
        {
          path: 'it remembers all the keys it may (refused condition)',
          answer: () => dynamoMock.on(UpdateCommand).rejectsOnce(conditionFailed()).resolves(group(3)),
          run: (store) => store.recordIntake({ messageGroupId: 'g1', events: 3, orderingKeys: ['k1'], acceptedAt: at }),
        },
        { path: 'the consumer drained it first', answer: () => dynamoMock.on(UpdateCommand).resolves(group(0)), run: (store) => store.recordIntake({ messageGroupId: 'g1', events: 1, orderingKeys: ['k1'], acceptedAt: at }) },
      ],
      recordProgress: [
        {
          path: 'its head waits',
          answer: () => dynamoMock.on(UpdateCommand).resolves(group(2)),
          run: (store) =>
            store.recordProgress(
              { messageGroupId: 'g1', settled: 0, lastSettledAcceptedAt: undefined, head: { state: HeadState.waiting, attempts: 2, lastError: 'HTTP 500', acceptedAt: at, eventId: 'evt_1', orderingKey: 'k1' } },
              new Date(at),
            ),
        },
        {
          path: 'it drained',
          answer: () => dynamoMock.on(UpdateCommand).resolves(group(0)),
          run: (store) => store.recordProgress({ messageGroupId: 'g1', settled: 2, lastSettledAcceptedAt: at, head: { state: HeadState.clear } }, new Date(at)),
        },
      ],
      forgetHold: [
        { path: 'the hold is the one let go', answer: () => dynamoMock.on(UpdateCommand).resolves({}), run: (store) => store.forgetHold('g1', 'rh-1') },
        { path: 'a later hold replaced it', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.forgetHold('g1', 'rh-1') },
      ],
      listActiveGroups: [
        {
          path: 'a shard holds a group',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [{ message_group_id: 'g1', lag_shard: 'shard-0' }] });
            dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.groupsTable]: [{ message_group_id: 'g1', lag_shard: 'shard-0', depth: 1 }] } });
          },
          run: (store) => store.listActiveGroups(),
        },
      ],
      listActiveForgettingIdle: [
        {
          path: 'an idle group is taken out of the index',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [{ message_group_id: 'g1', lag_shard: 'shard-0' }] });
            dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.groupsTable]: [{ message_group_id: 'g1', lag_shard: 'shard-0', depth: 0, idle_since: at }] } });
          },
          run: (store) => store.listActiveForgettingIdle('2099-01-01T00:00:00.000Z'),
        },
        {
          path: 'it took events meanwhile (refused condition)',
          answer: () => {
            dynamoMock.on(QueryCommand).resolves({ Items: [{ message_group_id: 'g1', lag_shard: 'shard-0' }] });
            dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.groupsTable]: [{ message_group_id: 'g1', lag_shard: 'shard-0', depth: 0, idle_since: at }] } });
            dynamoMock.on(UpdateCommand).rejects(conditionFailed());
          },
          run: (store) => store.listActiveForgettingIdle('2099-01-01T00:00:00.000Z'),
        },
      ],
      getGroup: [
        { path: 'the group exists', answer: () => dynamoMock.on(GetCommand).resolves({ Item: { message_group_id: 'g1', depth: 1 } }), run: (store) => store.getGroup('g1') },
        { path: 'it does not', run: (store) => store.getGroup('g1') },
      ],
      readGroups: [
        { path: 'some groups', answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.groupsTable]: [{ message_group_id: 'g1', depth: 1 }] } }), run: (store) => store.readGroups(['g1', 'g2']) },
      ],
      recordRedrive: [
        { path: 'always', answer: () => dynamoMock.on(UpdateCommand).resolves(group(1)), run: (store) => store.recordRedrive({ toGroup: 'g2', orderingKey: 'k1', events: 1, at }) },
      ],
      countDeadLetter: [
        { path: 'its place is new', answer: () => dynamoMock.on(UpdateCommand).resolves(group(1)), run: (store) => store.countDeadLetter({ messageGroupId: 'g1', subscriptionId: 'sub_1', position: 'p1' }) },
        {
          path: 'the group is past its cap of marks (refused condition, marks read)',
          answer: () => {
            dynamoMock.on(UpdateCommand).rejectsOnce(conditionFailed()).resolves(group(1));
            dynamoMock.on(GetCommand).resolves({ Item: { dead_letter_places: new Set(['other']) } });
          },
          run: (store) => store.countDeadLetter({ messageGroupId: 'g1', subscriptionId: 'sub_1', position: 'p1' }),
        },
      ],
      uncountDeadLetter: [
        { path: 'its place is marked', answer: () => dynamoMock.on(UpdateCommand).resolves(group(1)), run: (store) => store.uncountDeadLetter({ messageGroupId: 'g1', subscriptionId: 'sub_1', position: 'p1' }) },
        {
          path: 'it was uncounted already and the group drained (refused conditions, count read)',
          answer: () => {
            dynamoMock.on(UpdateCommand).rejects(conditionFailed());
            dynamoMock.on(GetCommand).resolves({ Item: { dead_lettered: 0, dead_letters_version: 2 } });
          },
          run: (store) => store.uncountDeadLetter({ messageGroupId: 'g1', subscriptionId: 'sub_1', position: 'p1' }),
        },
      ],
    },
  }),

  OrderingKeyStore: rowsOf({
    create: () => createOrderingKeyStore(dynamo, NAMES.orderingKeysTable),
    access: ORDERING_KEY_STORE_ACCESS,
    paths: {
      beginAttempt: [
        { path: 'a new head', answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: head }), run: (store) => store.beginAttempt({ orderingKey: 'k1', eventId: 'evt_1', maxAttempts: 8 }) },
        {
          path: 'the same head again (one refused condition)',
          answer: () => dynamoMock.on(UpdateCommand).rejectsOnce(conditionFailed()).resolves({ Attributes: head }),
          run: (store) => store.beginAttempt({ orderingKey: 'k1', eventId: 'evt_1', maxAttempts: 8, redrive: { redrivenAt: at, sequence: 4 } }),
        },
        {
          path: 'the head is exhausted (both conditions refused)',
          answer: () => {
            dynamoMock.on(UpdateCommand).rejects(conditionFailed());
            dynamoMock.on(GetCommand).resolves({ Item: head });
          },
          run: (store) => store.beginAttempt({ orderingKey: 'k1', eventId: 'evt_1', maxAttempts: 2 }),
        },
      ],
      findNumber: [
        { path: 'the key keeps the number', answer: () => dynamoMock.on(GetCommand).resolves({ Item: head }), run: (store) => store.findNumber({ orderingKey: 'k1', eventId: 'evt_1' }) },
        { path: 'the key was never attempted', run: (store) => store.findNumber({ orderingKey: 'k1', eventId: 'evt_1' }) },
      ],
      beginBatch: [
        {
          path: 'a batch is numbered',
          answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { ...head, ahead: { evt_2: 1 }, ahead_base: head.head_sequence } }),
          run: (store) => store.beginBatch({ orderingKey: 'k1', events: [{ eventId: 'evt_1' }, { eventId: 'evt_2' }] }),
        },
        {
          path: 'it cannot begin (refused condition)',
          answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()),
          run: (store) => store.beginBatch({ orderingKey: 'k1', events: [{ eventId: 'evt_1' }, { eventId: 'evt_2' }] }),
        },
      ],
      findDelivered: [
        {
          path: 'keys record deliveries',
          answer: () => dynamoMock.on(BatchGetCommand).resolves({ Responses: { [NAMES.orderingKeysTable]: [{ ordering_key: deliveredItemKey('k1'), delivered_group: 'g1', delivered_position: '1', delivered_sequence: 3 }] } }),
          run: (store) => store.findDelivered(['k1', 'k2']),
        },
      ],
      recordDelivered: [
        { path: 'the place is later', run: (store) => store.recordDelivered({ orderingKey: 'k1', message: { messageGroupId: 'g1', sequenceNumber: '7' }, sequence: 3 }) },
        {
          path: 'it is not (refused condition)',
          answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()),
          run: (store) => store.recordDelivered({ orderingKey: 'k1', message: { messageGroupId: 'g1', sequenceNumber: '7' }, sequence: 3 }),
        },
      ],
      recordFailure: [
        { path: 'the event is the head', run: (store) => store.recordFailure({ orderingKey: 'k1', eventId: 'evt_1', reason: 'HTTP 500', at, failingSince: at }) },
        { path: 'another event is (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.recordFailure({ orderingKey: 'k1', eventId: 'evt_1', reason: 'HTTP 500', at, failingSince: at }) },
      ],
      recordGivenUp: [
        { path: 'a later give-up than the one remembered', run: (store) => store.recordGivenUp({ orderingKey: 'k1', sequence: 4, previousDelivered: 2 }) },
        { path: 'this one or a later one remembered (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.recordGivenUp({ orderingKey: 'k1', sequence: 4, previousDelivered: 2 }) },
      ],
      recordRecovered: [
        { path: 'the streak is the one seen', run: (store) => store.recordRecovered({ orderingKey: 'k1', failingSince: at }) },
        { path: 'it is over already (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.recordRecovered({ orderingKey: 'k1', failingSince: at }) },
      ],
      grantAttempts: [
        { path: 'the event is the head', run: (store) => store.grantAttempts({ orderingKey: 'k1', eventId: 'evt_1', attempts: 5, more: 5 }) },
        { path: 'it is not (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.grantAttempts({ orderingKey: 'k1', eventId: 'evt_1', attempts: 5, more: 5 }) },
      ],
      findHead: [
        { path: 'the key has a head', answer: () => dynamoMock.on(GetCommand).resolves({ Item: head }), run: (store) => store.findHead('k1') },
        { path: 'the key was never attempted', run: (store) => store.findHead('k1') },
      ],
      requestSkip: [
        { path: 'the event is the head', run: (store) => store.requestSkip({ orderingKey: 'k1', eventId: 'evt_1', at }) },
        { path: 'it is not (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.requestSkip({ orderingKey: 'k1', eventId: 'evt_1', at }) },
      ],
    },
  }),

  SettingsStore: rowsOf({
    create: () => createSettingsStore(dynamo, NAMES.settingsTable, 8),
    access: SETTINGS_STORE_ACCESS,
    paths: {
      getRouting: [
        { path: 'a switch stored one', answer: () => dynamoMock.on(GetCommand).resolves({ Item: { version: 1, partition_count: 16, is_paused: false } }), run: (store) => store.getRouting() },
        { path: 'none is stored', run: (store) => store.getRouting() },
      ],
      setPaused: [{ path: 'always', answer: () => dynamoMock.on(UpdateCommand).resolves({ Attributes: { version: 0, is_paused: true, paused_at: at } }), run: (store) => store.setPaused(true, at) }],
      switchRouting: [
        { path: 'the version is the expected one', run: (store) => store.switchRouting({ expectedVersion: 0, partitionCount: 16, at }) },
        { path: 'it changed (refused condition)', answer: () => dynamoMock.on(UpdateCommand).rejects(conditionFailed()), run: (store) => store.switchRouting({ expectedVersion: 0, partitionCount: undefined, at }) },
      ],
    },
  }),

  BackstopQueue: rowsOf({
    create: () => createBackstopQueue(sqs, NAMES.deadLetterQueueUrl),
    access: BACKSTOP_QUEUE_ACCESS,
    paths: {
      quarantine: [{ path: 'always', run: (queue) => queue.quarantine({ messageId: 'm1', messageGroupId: 'g1', body: 'garbage', reason: 'body is not JSON', at }) }],
      receive: [
        {
          path: 'messages wait',
          answer: () => sqsMock.on(ReceiveMessageCommand).resolves({ Messages: [{ MessageId: 'm1', ReceiptHandle: 'rh-1', Body: '{}', Attributes: { MessageGroupId: 'g1', ApproximateReceiveCount: '4' } }] }),
          run: (queue) => queue.receive(),
        },
      ],
      release: [{ path: 'a message is released', run: (queue) => queue.release([backstopMessage]) }],
      remove: [{ path: 'always', run: (queue) => queue.remove(backstopMessage) }],
    },
  }),

  DeliveryQueue: rowsOf({
    create: () => createDeliveryQueue(sqs, NAMES.deliveryQueueUrl, logger),
    access: DELIVERY_QUEUE_ACCESS,
    paths: {
      sendBatch: [
        {
          path: 'SQS takes the entries',
          answer: () => sqsMock.on(SendMessageBatchCommand).resolves({ Successful: [{ Id: '0', MessageId: 'm1', MD5OfMessageBody: '', SequenceNumber: '1' }], Failed: [], $metadata: { attempts: 1 } }),
          run: (queue) => queue.sendBatch([{ index: 0, orderingKey: 'k1', messageGroupId: 'g1', deduplicationId: 'evt_1', body: '{}' }]),
        },
        {
          path: 'the call fails as a whole',
          answer: () => sqsMock.on(SendMessageBatchCommand).rejects(new Error('throttled')),
          run: (queue) => queue.sendBatch([{ index: 0, orderingKey: 'k1', messageGroupId: 'g1', deduplicationId: 'evt_1', body: '{}' }]),
        },
      ],
      changeVisibility: [{ path: 'a head backs off', run: (queue) => queue.changeVisibility([{ messageId: 'm1', receiptHandle: 'rh-1', timeoutSeconds: 40 }]) }],
      letGo: [
        {
          path: 'a held message is let go',
          answer: () => sqsMock.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [{ Id: '0' }], Failed: [] }),
          run: (queue) => queue.letGo(['rh-1']),
        },
      ],
      counts: [{ path: 'always', answer: () => sqsMock.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '1' } }), run: (queue) => queue.counts() }],
    },
  }),

  MetricsSource: rowsOf({
    create: () => createMetricsSource(cloudWatch),
    access: METRICS_SOURCE_ACCESS,
    paths: {
      readConsumerSeries: [
        { path: 'no minute has data', run: (source) => source.readConsumerSeries({ since: new Date(at), until: new Date(Date.parse(at) + 60_000) }) },
        {
          path: 'the answer comes in two pages',
          answer: () =>
            cloudWatchMock
              .on(GetMetricDataCommand)
              .resolvesOnce({ MetricDataResults: [{ Id: 'delivered', Timestamps: [new Date(at)], Values: [1], StatusCode: 'PartialData' }], NextToken: 't1' })
              .resolves({ MetricDataResults: [{ Id: 'delivered', Timestamps: [], Values: [], StatusCode: 'Complete' }] }),
          run: (source) => source.readConsumerSeries({ since: new Date(at), until: new Date(Date.parse(at) + 60_000) }),
        },
      ],
    },
  }),

  NoticeTopic: rowsOf({
    create: () => createNoticeTopic(sns, NAMES.noticeTopic),
    access: NOTICE_TOPIC_ACCESS,
    paths: {
      publishPause: [
        {
          path: 'a subscription was paused',
          run: (topic) =>
            topic.publishPause({
              notice: 'subscription_auto_paused',
              subscription_id: 'sub_1',
              message_group_id: 'g1',
              event_id: 'evt_1',
              attempts: 5,
              failing_since: at,
              paused_at: at,
              pause_reason: 'auto: failing since …; HTTP 500',
            }),
        },
      ],
    },
  }),
};

describe.each(Object.entries(ADAPTERS))('%s', (_adapter, rows) => {
  it.each(rows.paths)('$method sends only commands it declares when $path', async ({ declared, sent }) => {
    const accesses = await sent();
    // A path that sends nothing would show nothing about the declarations.
    expect(accesses.length).toBeGreaterThan(0);
    const allowed = declared();
    expect(accesses.filter((access) => !allowed.has(access))).toEqual([]);
  });

  it.each(rows.methods)('$method declares no action that none of its paths sends', async ({ declared, sentOnEveryPath }) => {
    const sent = await sentOnEveryPath();
    expect([...declared()].filter((access) => !sent.has(access))).toEqual([]);
  });
});

describe('accessesOfCommand', () => {
  it('maps a Query of an index to the index, not the table', () => {
    expect(accessesOfCommand(new QueryCommand({ TableName: NAMES.groupsTable, IndexName: 'active-group-keys', KeyConditionExpression: 'lag_shard = :s' }))).toEqual([
      { action: 'dynamodb:Query', resource: 'groupsTable', index: 'active-group-keys' },
    ]);
  });

  it('refuses an object outside the granted prefix, and a command it does not know', () => {
    expect(() => accessesOfCommand(new PutObjectCommand({ Bucket: NAMES.payloadBucket, Key: 'elsewhere/a.json' }))).toThrow(/outside dead-letters\//);
    expect(() => accessesOfCommand(new Date())).toThrow(/no IAM action is known for Date/);
  });
});

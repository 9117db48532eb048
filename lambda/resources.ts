/**
 * The cloud resources the handlers use, described once as data: the CDK stack declares them from
 * these definitions and the local stack creates the same ones in the emulators. Physical names
 * differ (CloudFormation generates them; the local stack uses `localName`), so handlers receive
 * them through the environment variables named here.
 */

/**
 * What a global secondary index holds of each item: the table's and the index's key attributes
 * alone (`KEYS_ONLY`), or every attribute (`ALL`). A write to an indexed item that changes only
 * attributes the index does not hold costs the index nothing, so a key-only index is written only
 * when an item enters it, leaves it or changes its index key. DynamoDB cannot change an existing
 * index's projection: a new projection is a new index, under a new name.
 */
export const IndexProjection = { keysOnly: 'KEYS_ONLY', all: 'ALL' } as const;
export type IndexProjection = (typeof IndexProjection)[keyof typeof IndexProjection];

/** The index of the subscriptions with a replay under way (see TABLES.subscriptions). */
export const REPLAYS_INDEX = 'replays-under-way';

/** The index of each tenant's subscriptions, for fan-outs (see TABLES.subscriptions). */
export const TENANT_SUBSCRIPTIONS_INDEX = 'tenant-subscriptions';

/** A global secondary index. Sparse: only items that carry its key are in it. */
export interface IndexDefinition {
  readonly name: string;
  /** String partition key. */
  readonly partitionKey: string;
  /** String sort key, when the index is read in order. */
  readonly sortKey?: string;
  /** What the index holds of each item: the one source for the CDK stack, the local stack, the bench and the simulation. */
  readonly projection: IndexProjection;
}

/** A DynamoDB table: its key, its TTL attribute and its secondary indexes. */
export interface TableDefinition {
  /** CDK construct id, and the table name in the local stack. */
  readonly localName: string;
  /** Environment variable that carries the physical table name to the handlers. */
  readonly envVar: string;
  /** String partition key. */
  readonly partitionKey: string;
  /** String sort key, for a table whose items are read in order by Query. */
  readonly sortKey?: string;
  /** Epoch-seconds attribute after which DynamoDB may delete the item. */
  readonly ttlAttribute?: string;
  readonly indexes?: readonly IndexDefinition[];
  /**
   * Indexes an earlier version declared, which nothing reads or is granted any more. CloudFormation
   * adds or deletes one global secondary index per table update, never both, so a stack deployed
   * before an index was replaced keeps these for one deploy (docs/upgrading.md) and drops them on the next.
   */
  readonly retiredIndexes?: readonly IndexDefinition[];
}

/** The tables, one concept each. */
export const TABLES = {
  /** One item per subscription: endpoint URL, tenant and signing secret. */
  subscriptions: {
    localName: 'Subscriptions',
    envVar: 'SUBSCRIPTIONS_TABLE',
    partitionKey: 'subscription_id',
    indexes: [
      /**
       * The subscriptions with a replay under way, and only those (`replay_shard` is set with a
       * replay and removed when it ends): the lag job steps them each minute, so that a replay
       * ends without its caller. Keys only; written only when a replay starts or ends.
       */
      { name: REPLAYS_INDEX, partitionKey: 'replay_shard', projection: IndexProjection.keysOnly },
      /**
       * Each tenant's subscriptions, for a fan-out (an event naming its tenant and no subscription,
       * docs/api.md#fan-out-by-event-type): ingest queries a tenant's keys here and reads their routing from the table. Keys
       * only (never a secret); written only when a subscription is created.
       */
      { name: TENANT_SUBSCRIPTIONS_INDEX, partitionKey: 'tenant_id', sortKey: 'subscription_id', projection: IndexProjection.keysOnly },
    ],
  },
  /**
   * One item per accepted event: the idempotency record (outlives the 5-minute SQS
   * deduplication window) and its delivery outcome.
   */
  events: {
    localName: 'Events',
    envVar: 'EVENTS_TABLE',
    partitionKey: 'event_id',
    ttlAttribute: 'expires_at',
  },
  /**
   * The store of dead letters, and their only source of truth: one item per dead letter, holding
   * the whole queued event (or, beyond what an item holds, a pointer to it in the payload bucket),
   * its sequence, attempts and reason. Keyed by subscription, sorted by `position` (the ordering
   * key's digest, then the zero-padded sequence), so one Query reads a subscription's (or, with
   * `begins_with`, one key's) dead letters in sequence order, page by page. An item leaves the
   * store when it is redriven; a redriven event given up again is written back.
   */
  deadLetters: {
    localName: 'DeadLetters',
    envVar: 'DEAD_LETTERS_TABLE',
    partitionKey: 'subscription_id',
    sortKey: 'position',
    ttlAttribute: 'expires_at',
  },
  /**
   * One item per ordering key: the last `webhook-sequence` given out and the head event being
   * attempted with its real attempt count. One item, so that giving a sequence number and
   * counting an attempt is a single conditional write. Beside it, an item of the key's recorded
   * deliveries, under a key no ordering key can take (`deliveredItemKey`).
   */
  orderingKeys: {
    localName: 'OrderingKeys',
    envVar: 'ORDERING_KEYS_TABLE',
    partitionKey: 'ordering_key',
  },
  /**
   * One item per message group: its lag (depth, oldest wait, the head's failures, dead letters).
   * Written once per group per ingest request and once per group per consumer batch.
   */
  groups: {
    localName: 'Groups',
    envVar: 'GROUPS_TABLE',
    partitionKey: 'message_group_id',
    indexes: [
      /**
       * The groups with pending or dead-lettered events, and only those: the lag view and the lag
       * job query this index for their keys and read those items, never the whole table, so their
       * cost follows the active groups, not the keys. Keys only, because every group write changes
       * the group's lag: an index holding that lag would be written on every group write, this one
       * only when a group becomes active or drains. Spread over LAG_SHARDS shards so that no index
       * partition runs hot.
       */
      { name: 'active-group-keys', partitionKey: 'lag_shard', projection: IndexProjection.keysOnly },
    ],
    retiredIndexes: [
      /** The index `active-group-keys` replaced: the same key, every attribute projected. */
      { name: 'active-groups', partitionKey: 'lag_shard', projection: IndexProjection.all },
    ],
  },
  /**
   * Settings that change without a redeploy; one item, `routing`: the versioned routing (partition
   * count) and whether ingest is paused, for the drain-and-switch of a repartitioning.
   */
  settings: {
    localName: 'Settings',
    envVar: 'SETTINGS_TABLE',
    partitionKey: 'setting',
  },
} as const satisfies Record<string, TableDefinition>;

/** A table of TABLES, by its key there. */
export type TableName = keyof typeof TABLES;

/** The names of the secondary indexes TABLES declares on table `T`; on any table by default. */
export type IndexName<T extends TableName = TableName> = T extends TableName
  ? (typeof TABLES)[T] extends { readonly indexes: readonly (infer I extends { readonly name: string })[] }
    ? I['name']
    : never
  : never;

/** An SQS FIFO queue. */
export interface QueueDefinition {
  /** CDK construct id, and the queue name (with `.fifo`) in the local stack. */
  readonly localName: string;
  readonly envVar: string;
}

/**
 * What both FIFO queues are, in the CDK stack and in the local stack alike. Deduplication by event
 * id, never by content (two events with equal bodies are two events); high-throughput mode
 * (deduplication and throughput per message group), since every key is its own group; messages
 * kept as long as SQS allows (14 days).
 */
export const FIFO_QUEUE_SETTINGS = {
  contentBasedDeduplication: false,
  deduplicationScope: 'messageGroup',
  fifoThroughputLimit: 'perMessageGroupId',
  retentionSeconds: 1_209_600,
} as const;

export const QUEUES = {
  /** The ordered queue: one message group per ordering key (or per partition). */
  delivery: { localName: 'delivery.fifo', envVar: 'DELIVERY_QUEUE_URL' },
  /**
   * SQS's backstop redrive for crash loops (a message that kills the consumer every time), and
   * the records the consumer cannot read. Never the store of dead letters: the operations
   * function imports what lands here into the DeadLetters table.
   */
  deadLetter: { localName: 'dead-letter.fifo', envVar: 'DEAD_LETTER_QUEUE_URL' },
} as const satisfies Record<string, QueueDefinition>;

/**
 * The S3 bucket that holds dead letters too large for a DynamoDB item (an event may be up to
 * 1 MiB, an item at most 400 KB). Encrypted, private, objects expiring with the dead letters.
 */
export const PAYLOAD_BUCKET = { localName: 'ordered-webhooks-payloads', envVar: 'PAYLOAD_BUCKET' } as const;

/** Every object of the payload bucket is under this prefix: the functions are granted it alone. */
export const PAYLOAD_OBJECT_PREFIX = 'dead-letters/';

/**
 * The SNS topic of operational notices (an automatic pause): one message per notice, ids and
 * reasons only, never an event's payload. Its ARN is the name handlers receive.
 */
export const NOTICE_TOPIC = { localName: 'ordered-webhooks-notices', envVar: 'NOTICE_TOPIC_ARN' } as const;

/** Physical names of every resource, as handlers receive them. */
export interface ResourceNames {
  readonly subscriptionsTable: string;
  readonly eventsTable: string;
  readonly deadLettersTable: string;
  readonly orderingKeysTable: string;
  readonly groupsTable: string;
  readonly settingsTable: string;
  readonly deliveryQueueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly payloadBucket: string;
  /** The ARN of the notice topic. */
  readonly noticeTopic: string;
}

/** The environment variable that carries each resource name to the handlers. */
export const RESOURCE_ENV_VARS = {
  subscriptionsTable: TABLES.subscriptions.envVar,
  eventsTable: TABLES.events.envVar,
  deadLettersTable: TABLES.deadLetters.envVar,
  orderingKeysTable: TABLES.orderingKeys.envVar,
  groupsTable: TABLES.groups.envVar,
  settingsTable: TABLES.settings.envVar,
  deliveryQueueUrl: QUEUES.delivery.envVar,
  deadLetterQueueUrl: QUEUES.deadLetter.envVar,
  payloadBucket: PAYLOAD_BUCKET.envVar,
  noticeTopic: NOTICE_TOPIC.envVar,
} as const satisfies Record<keyof ResourceNames, string>;

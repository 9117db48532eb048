/**
 * The Subscriptions table: one item per subscription. Items are validated when read.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { batchGetItems } from './batch-get.js';
import { parseItem } from './dynamo-item.js';
import { updateIfCondition } from './aws-clients.js';

const subscriptionItemSchema = z.object({
  subscription_id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  secret: z.string(),
  created_at: z.string(),
});
export type Subscription = z.infer<typeof subscriptionItemSchema>;

const tenantItemSchema = subscriptionItemSchema.pick({ subscription_id: true, tenant_id: true });

/** What a {@link SubscriptionStore.put} did. */
export const SubscriptionPutKind = {
  created: 'created',
  replaced: 'replaced',
  /** The id belongs to another tenant: nothing was changed. */
  tenantMismatch: 'tenant_mismatch',
} as const;
export type SubscriptionPutKind = (typeof SubscriptionPutKind)[keyof typeof SubscriptionPutKind];

/** The input of {@link SubscriptionStore.put}. */
export type SubscriptionPutInput = Omit<Subscription, 'created_at'> & {
  readonly now: string;
  /**
   * When true, `secret` is stored only if the subscription has none yet (a generated one for a
   * new subscription), so that replacing without a secret keeps the one the receiver verifies.
   * Default: false, `secret` replaces the stored one.
   */
  readonly shouldKeepExistingSecret?: boolean;
};

/** The outcome of {@link SubscriptionStore.put}: the subscription as stored, or the refusal. */
export type SubscriptionPutOutcome =
  | { readonly kind: typeof SubscriptionPutKind.created | typeof SubscriptionPutKind.replaced; readonly subscription: Subscription }
  | { readonly kind: typeof SubscriptionPutKind.tenantMismatch };

export interface SubscriptionStore {
  readonly get: (subscriptionId: string) => Promise<Subscription | undefined>;
  /**
   * Creates or replaces, in one conditional write: an id another tenant holds is refused
   * (`tenant_mismatch`), and a replacement keeps its `created_at`. The subscription returned is
   * what is stored, its secret included, with no read-modify-write race between two PUTs.
   */
  readonly put: (input: SubscriptionPutInput) => Promise<SubscriptionPutOutcome>;
  /** The tenant of each existing subscription among `ids`. */
  readonly findTenants: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>;
}

/** The IAM actions of each method of {@link SubscriptionStore}, all on the Subscriptions table. */
export const SUBSCRIPTION_STORE_ACCESS = {
  get: [{ resource: 'subscriptionsTable', actions: ['dynamodb:GetItem'] }],
  // One conditional UpdateItem creates or replaces, returning the old item; a refused tenant is an outcome.
  put: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  findTenants: [{ resource: 'subscriptionsTable', actions: ['dynamodb:BatchGetItem'] }],
} as const satisfies AccessMap<SubscriptionStore>;

export function createSubscriptionStore(client: DynamoDBDocumentClient, tableName: string): SubscriptionStore {
  const keyName = TABLES.subscriptions.partitionKey;
  return {
    async get(subscriptionId) {
      const output = await client.send(new GetCommand({ TableName: tableName, Key: { [keyName]: subscriptionId }, ConsistentRead: true }));
      return output.Item === undefined ? undefined : parseItem(subscriptionItemSchema, output.Item, tableName, subscriptionId);
    },
    async put(input) {
      const { now, shouldKeepExistingSecret = false, ...fields } = input;
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: fields.subscription_id },
          UpdateExpression: `SET tenant_id = :tenant, #url = :url, secret = ${shouldKeepExistingSecret ? 'if_not_exists(secret, :secret)' : ':secret'}, updated_at = :now, created_at = if_not_exists(created_at, :now)`,
          // An id is its tenant's: another tenant's PUT must not take over its events and secret.
          ConditionExpression: 'attribute_not_exists(#id) OR tenant_id = :tenant',
          ExpressionAttributeNames: { '#url': 'url', '#id': keyName },
          ExpressionAttributeValues: { ':tenant': fields.tenant_id, ':url': fields.url, ':secret': fields.secret, ':now': now },
          ReturnValues: 'ALL_OLD',
        }),
      );
      if (output === undefined) return { kind: SubscriptionPutKind.tenantMismatch };
      const previous = output.Attributes === undefined ? undefined : parseItem(subscriptionItemSchema, output.Attributes, tableName, fields.subscription_id);
      // The write was atomic: the old item tells exactly which secret it kept.
      const secret = shouldKeepExistingSecret && previous !== undefined ? previous.secret : fields.secret;
      return {
        kind: previous === undefined ? SubscriptionPutKind.created : SubscriptionPutKind.replaced,
        subscription: { ...fields, secret, created_at: previous?.created_at ?? now },
      };
    },
    async findTenants(ids) {
      const items = await batchGetItems(client, { tableName, keyName, keys: ids, attributes: [keyName, 'tenant_id'] });
      return new Map(
        items.map((item) => {
          const parsed = parseItem(tenantItemSchema, item, tableName, String(item[keyName]));
          return [parsed.subscription_id, parsed.tenant_id] as const;
        }),
      );
    },
  };
}

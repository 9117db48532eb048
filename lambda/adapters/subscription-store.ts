/**
 * The Subscriptions table: one item per subscription. Items are validated when read.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { batchGetItems } from './batch-get.js';
import { parseItem } from './dynamo-item.js';

const subscriptionItemSchema = z.object({
  subscription_id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  secret: z.string(),
  created_at: z.string(),
});
export type Subscription = z.infer<typeof subscriptionItemSchema>;

const tenantItemSchema = subscriptionItemSchema.pick({ subscription_id: true, tenant_id: true });

export interface SubscriptionStore {
  readonly get: (subscriptionId: string) => Promise<Subscription | undefined>;
  /** Creates or replaces; `isCreated` is false when it replaced one (which keeps its `created_at`). */
  readonly put: (input: Omit<Subscription, 'created_at'> & { readonly now: string }) => Promise<{ isCreated: boolean; subscription: Subscription }>;
  /** The tenant of each existing subscription among `ids`. */
  readonly findTenants: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>;
}

/** The IAM actions of each method of {@link SubscriptionStore}, all on the Subscriptions table. */
export const SUBSCRIPTION_STORE_ACCESS = {
  get: [{ resource: 'subscriptionsTable', actions: ['dynamodb:GetItem'] }],
  // One UpdateItem creates or replaces, returning the old item.
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
      const output = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: input.subscription_id },
          UpdateExpression: 'SET tenant_id = :tenant, #url = :url, secret = :secret, updated_at = :now, created_at = if_not_exists(created_at, :now)',
          ExpressionAttributeNames: { '#url': 'url' },
          ExpressionAttributeValues: { ':tenant': input.tenant_id, ':url': input.url, ':secret': input.secret, ':now': input.now },
          ReturnValues: 'ALL_OLD',
        }),
      );
      const previous = output.Attributes === undefined ? undefined : parseItem(subscriptionItemSchema, output.Attributes, tableName, input.subscription_id);
      const { now, ...fields } = input;
      return { isCreated: previous === undefined, subscription: { ...fields, created_at: previous?.created_at ?? now } };
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

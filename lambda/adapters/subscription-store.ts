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
  /** Set by a rotation: the secret before it, which keeps signing until `previous_secret_expires_at`. */
  previous_secret: z.string().optional(),
  previous_secret_expires_at: z.iso.datetime().optional(),
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
export type SubscriptionPutInput = Omit<Subscription, 'created_at' | 'previous_secret' | 'previous_secret_expires_at'> & {
  readonly now: string;
  /**
   * When true, `secret` is stored only if the subscription has none yet (a generated one for a
   * new subscription), so that replacing without a secret keeps the one the receiver verifies.
   * Default: false, `secret` replaces the stored one and ends a rotation's grace: the previous
   * secret stops signing at once, as a PUT replaces the whole subscription.
   */
  readonly shouldKeepExistingSecret?: boolean;
};

/** The input of {@link SubscriptionStore.rotateSecret}; times are ISO 8601. */
export interface SecretRotationInput {
  readonly subscriptionId: string;
  readonly secret: string;
  readonly previousSecretExpiresAt: string;
  readonly now: string;
}

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
  /**
   * Rotates the secret in one UpdateItem: the current secret becomes the previous one, signing
   * until `previousSecretExpiresAt`, and `secret` the current one. A previous secret still in its
   * grace is dropped at once (as Svix does): at most two secrets ever sign. False when there is no
   * such subscription (nothing is written).
   */
  readonly rotateSecret: (input: SecretRotationInput) => Promise<boolean>;
  /** The tenant of each existing subscription among `ids`. */
  readonly findTenants: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>;
}

/** The IAM actions of each method of {@link SubscriptionStore}, all on the Subscriptions table. */
export const SUBSCRIPTION_STORE_ACCESS = {
  get: [{ resource: 'subscriptionsTable', actions: ['dynamodb:GetItem'] }],
  // One conditional UpdateItem creates or replaces, returning the old item; a refused tenant is an outcome.
  put: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  // One conditional UpdateItem moves the secret to previous_secret; an unknown id is an outcome.
  rotateSecret: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
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
      const secretAction = shouldKeepExistingSecret
        ? 'SET tenant_id = :tenant, #url = :url, secret = if_not_exists(secret, :secret)'
        : 'SET tenant_id = :tenant, #url = :url, secret = :secret';
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: fields.subscription_id },
          // A given secret replaces both: the rotated-out one must not sign beside a secret set on purpose.
          UpdateExpression: `${secretAction}, updated_at = :now, created_at = if_not_exists(created_at, :now)${shouldKeepExistingSecret ? '' : ' REMOVE previous_secret, previous_secret_expires_at'}`,
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
      const isKept = shouldKeepExistingSecret && previous !== undefined;
      const kept = isKept ? { secret: previous.secret, previous_secret: previous.previous_secret, previous_secret_expires_at: previous.previous_secret_expires_at } : {};
      return {
        kind: previous === undefined ? SubscriptionPutKind.created : SubscriptionPutKind.replaced,
        subscription: { ...fields, ...kept, created_at: previous?.created_at ?? now },
      };
    },
    async rotateSecret(input) {
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: input.subscriptionId },
          // Every operand reads the item before the update: previous_secret gets the secret being replaced.
          UpdateExpression: 'SET previous_secret = secret, previous_secret_expires_at = :expires, secret = :secret, updated_at = :now',
          ConditionExpression: 'attribute_exists(#id)',
          ExpressionAttributeNames: { '#id': keyName },
          ExpressionAttributeValues: { ':secret': input.secret, ':expires': input.previousSecretExpiresAt, ':now': input.now },
        }),
      );
      return output !== undefined;
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

/**
 * The Subscriptions table: one item per subscription. Items are validated when read.
 */
import { GetCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { DeliveryTarget } from '../core/delivery.js';
import type { SubscriptionRouting } from '../core/ingest.js';
import type { OrderingChangeMark } from '../core/ordering-change.js';
import { DEFAULT_ORDERING, type Ordering } from '../core/routing.js';
import { batchSizeSchema, DEFAULT_BATCH_SIZE, orderingSchema, type SubscriptionPause } from '../core/subscription.js';
import { TABLES, TENANT_SUBSCRIPTIONS_INDEX } from '../resources.js';
import type { AccessMap } from './access.js';
import { batchGetItems, ReadConsistency } from './batch-get.js';
import { parseItem } from './dynamo-item.js';
import { updateIfCondition } from './aws-clients.js';
import { parkMarksSchema } from './park-store.js';
import { replayItemSchema } from './replay-state-store.js';

const subscriptionItemSchema = z.object({
  subscription_id: z.string(),
  tenant_id: z.string(),
  url: z.string(),
  secret: z.string(),
  /** Set by a rotation: the secret before it, which keeps signing until `previous_secret_expires_at`. */
  previous_secret: z.string().optional(),
  previous_secret_expires_at: z.iso.datetime().optional(),
  created_at: z.string(),
  // An item written before these fields existed has neither: it is read as the defaults, which
  // are what it was delivered with.
  batch_size: batchSizeSchema.default(DEFAULT_BATCH_SIZE),
  ordering: orderingSchema.default(DEFAULT_ORDERING),
  /** The types a fan-out delivers to it (see `takesEventType`); absent: every type. */
  event_types: z.array(z.string()).optional(),
  /** Set while paused (see {@link SubscriptionStore.pause}); both or neither. */
  paused_at: z.iso.datetime().optional(),
  pause_reason: z.string().optional(),
  /** The last resume, kept for operators. */
  resumed_at: z.iso.datetime().optional(),
  /** The replay under way and the last one that ended (written by `replay-state-store.ts`). */
  replay: replayItemSchema.optional(),
  last_replay: replayItemSchema.optional(),
  /** The groups where a paused backlog of the subscription is parked, each with its park's id (written by `park-store.ts`). */
  parked_groups: parkMarksSchema.optional(),
  /** A change of `ordering` begun and not yet made or lifted (see ordering-change.ts); both or neither. */
  ordering_change_to: orderingSchema.optional(),
  ordering_change_at: z.iso.datetime().optional(),
});
export type Subscription = z.infer<typeof subscriptionItemSchema>;

const routingItemSchema = subscriptionItemSchema.pick({ subscription_id: true, tenant_id: true, ordering: true, event_types: true, ordering_change_to: true, ordering_change_at: true });

/** The change of `ordering` begun on the subscription, if any. */
export function orderingChangeOf(item: Pick<Subscription, 'ordering_change_to' | 'ordering_change_at'>): OrderingChangeMark | undefined {
  return item.ordering_change_to === undefined || item.ordering_change_at === undefined ? undefined : { ordering: item.ordering_change_to, startedAt: item.ordering_change_at };
}

/** Removed by every PUT that names `ordering`: the change it makes, or the one it gives up by naming the ordering in force. */
const ORDERING_CHANGE_ATTRIBUTES = ['ordering_change_to', 'ordering_change_at'];

/** Every attribute a subscription's item may have, for a BatchGet of whole items. */
const SUBSCRIPTION_ATTRIBUTES = Object.keys(subscriptionItemSchema.shape);

/** What the tenant index holds of a subscription: its keys. */
const tenantKeysSchema = z.object({ subscription_id: z.string(), tenant_id: z.string() });

/** The subscription's pause, or undefined while it is delivered. */
export function pauseOf(subscription: Subscription): SubscriptionPause | undefined {
  return subscription.paused_at === undefined ? undefined : { pausedAt: subscription.paused_at, reason: subscription.pause_reason ?? '' };
}

/**
 * The target the consumer delivers to, from the subscription as read: its URL, signing keys,
 * batch size and pause. Undefined for no subscription.
 */
export function toDeliveryTarget(subscription: Subscription | undefined): DeliveryTarget | undefined {
  if (subscription === undefined) return undefined;
  const { url, secret, previous_secret, previous_secret_expires_at, batch_size, parked_groups: parkedGroups = {} } = subscription;
  const parks = Object.entries(parkedGroups);
  return { url, secret, previous_secret, previous_secret_expires_at, batchSize: batch_size, pause: pauseOf(subscription), ...(parks.length === 0 ? {} : { parkedGroups: new Map(parks) }) };
}

/** What a {@link SubscriptionStore.put} did. */
export const SubscriptionPutKind = {
  created: 'created',
  replaced: 'replaced',
  /** The id belongs to another tenant: nothing was changed. */
  tenantMismatch: 'tenant_mismatch',
  /** The put was to make a change of `ordering` under a mark that is gone or another: nothing was changed. */
  orderingChangeLost: 'ordering_change_lost',
} as const;
export type SubscriptionPutKind = (typeof SubscriptionPutKind)[keyof typeof SubscriptionPutKind];

/**
 * The input of {@link SubscriptionStore.put}. `batch_size` and `ordering` absent: a replacement
 * keeps its stored values, a creation gets the defaults.
 */
export type SubscriptionPutInput = Omit<Subscription, 'created_at' | 'previous_secret' | 'previous_secret_expires_at' | 'batch_size' | 'ordering' | 'event_types' | 'paused_at' | 'pause_reason' | 'resumed_at' | 'replay' | 'last_replay' | 'ordering_change_to' | 'ordering_change_at'> & {
  readonly batch_size?: Subscription['batch_size'] | undefined;
  readonly ordering?: Subscription['ordering'] | undefined;
  /** A list replaces the stored one, null takes every type again, undefined keeps what is stored. */
  readonly event_types?: readonly string[] | null | undefined;
  readonly now: string;
  /**
   * When true, `secret` is stored only if the subscription has none yet (a generated one for a
   * new subscription), so that replacing without a secret keeps the one the receiver verifies.
   * Default: false, `secret` replaces the stored one and ends a rotation's grace: the previous
   * secret stops signing as soon as the consumer reads the subscription again (within about a
   * second, see {@link SubscriptionStore.getAllowingStale}), as a PUT replaces the whole subscription.
   */
  readonly shouldKeepExistingSecret?: boolean;
  /** Makes the change of `ordering` this mark began: written only while the subscription holds that very mark. */
  readonly orderingChange?: OrderingChangeMark;
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
  | { readonly kind: typeof SubscriptionPutKind.tenantMismatch }
  | { readonly kind: typeof SubscriptionPutKind.orderingChangeLost };

export interface SubscriptionStore {
  /**
   * The subscription as last written (strongly consistent): for the API's answers, and for the
   * consumer, which must see a pause that has been answered (see `processBatch`).
   */
  readonly get: (subscriptionId: string) => Promise<Subscription | undefined>;
  /**
   * Creates or replaces, in one conditional write: an id another tenant holds is refused
   * (`tenant_mismatch`), and a replacement keeps its `created_at`. The subscription returned is
   * what is stored, its secret included, with no read-modify-write race between two PUTs.
   */
  readonly put: (input: SubscriptionPutInput) => Promise<SubscriptionPutOutcome>;
  /**
   * Marks a change of the subscription's `ordering` begun (see ordering-change.ts), in one
   * conditional UpdateItem: written only while the subscription is the tenant's and ordered by
   * `from`. False when it is not (nothing is written).
   */
  readonly beginOrderingChange: (input: { readonly subscriptionId: string; readonly tenantId: string; readonly from: Ordering; readonly mark: OrderingChangeMark }) => Promise<boolean>;
  /** Lifts this mark, if the subscription still holds it (another mark, or none, is left as it is). */
  readonly liftOrderingChange: (input: { readonly subscriptionId: string; readonly mark: OrderingChangeMark }) => Promise<void>;
  /**
   * Rotates the secret in one UpdateItem: the current secret becomes the previous one, signing
   * until `previousSecretExpiresAt`, and `secret` the current one. A previous secret still in its
   * grace is dropped at once (as Svix does): at most two secrets ever sign. False when there is no
   * such subscription (nothing is written).
   */
  readonly rotateSecret: (input: SecretRotationInput) => Promise<boolean>;
  /**
   * Pauses the subscription in one conditional UpdateItem: `paused_at` and `pause_reason` are set
   * unless a pause is already in force, which is kept as it is (pausing twice is one pause). The
   * subscription as it now stands; undefined when there is none (nothing is written).
   */
  readonly pause: (input: { readonly subscriptionId: string; readonly reason: string; readonly now: string }) => Promise<Subscription | undefined>;
  /**
   * Ends the pause, if any, in one conditional UpdateItem and records `resumed_at`. The
   * subscription as it now stands; undefined when there is none (nothing is written).
   */
  readonly resume: (input: { readonly subscriptionId: string; readonly now: string }) => Promise<Subscription | undefined>;
  /**
   * The tenant and ordering of each existing subscription among `ids`, for ingest's routing. Read
   * eventually consistent, and the ids not found strongly consistent: a subscription's tenant never
   * changes (put refuses another tenant) and subscriptions are never deleted, so only a
   * subscription created within about the last second could be missed, and the second read finds
   * it. A change of `ordering` is begun by a mark, and made once reads of the ordering from before
   * the mark are long over (ordering-change.ts): a read a second stale is safe.
   */
  readonly findRouting: (ids: readonly string[]) => Promise<ReadonlyMap<string, SubscriptionRouting>>;
  /**
   * Each tenant's subscriptions with their routing, for fan-outs: the tenant index's keys, then the
   * items (eventually consistent, as the index is: a subscription created within about the last
   * second may be missed, and a fan-out accepted then does not reach it).
   */
  readonly findTenantSubscriptions: (tenantIds: readonly string[]) => Promise<ReadonlyMap<string, ReadonlyMap<string, SubscriptionRouting>>>;
  /**
   * A page of a tenant's subscriptions after `after` (a subscription id), in the order of their
   * ids: the tenant index (eventually consistent: one created within about a second may be
   * missing), then the items. `next`: where the next page starts, if any.
   */
  readonly list: (input: { readonly tenantId: string; readonly after: string | undefined; readonly limit: number }) => Promise<{ readonly items: readonly Subscription[]; readonly next: string | undefined }>;
}

/** The IAM actions of each method of {@link SubscriptionStore}, all on the Subscriptions table. */
export const SUBSCRIPTION_STORE_ACCESS = {
  get: [{ resource: 'subscriptionsTable', actions: ['dynamodb:GetItem'] }],
  // One conditional UpdateItem creates or replaces, returning the old item; a refused tenant is an outcome.
  put: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  beginOrderingChange: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  liftOrderingChange: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  // One conditional UpdateItem moves the secret to previous_secret; an unknown id is an outcome.
  rotateSecret: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  // One conditional UpdateItem each, returning the new item; an unknown id is an outcome.
  pause: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  resume: [{ resource: 'subscriptionsTable', actions: ['dynamodb:UpdateItem'] }],
  findRouting: [{ resource: 'subscriptionsTable', actions: ['dynamodb:BatchGetItem'] }],
  list: [
    { resource: 'subscriptionsTable', index: TENANT_SUBSCRIPTIONS_INDEX, actions: ['dynamodb:Query'] },
    { resource: 'subscriptionsTable', actions: ['dynamodb:BatchGetItem'] },
  ],
  findTenantSubscriptions: [
    { resource: 'subscriptionsTable', index: TENANT_SUBSCRIPTIONS_INDEX, actions: ['dynamodb:Query'] },
    { resource: 'subscriptionsTable', actions: ['dynamodb:BatchGetItem'] },
  ],
} as const satisfies AccessMap<SubscriptionStore>;

export function createSubscriptionStore(client: DynamoDBDocumentClient, tableName: string): SubscriptionStore {
  const keyName = TABLES.subscriptions.partitionKey;
  const read = async (subscriptionId: string, consistency: ReadConsistency): Promise<Subscription | undefined> => {
    const output = await client.send(new GetCommand({ TableName: tableName, Key: { [keyName]: subscriptionId }, ConsistentRead: consistency === ReadConsistency.strong }));
    return output.Item === undefined ? undefined : parseItem(subscriptionItemSchema, output.Item, tableName, subscriptionId);
  };
  const readRouting = async (ids: readonly string[], consistency: ReadConsistency): Promise<Map<string, SubscriptionRouting>> => {
    const items = await batchGetItems(client, { tableName, keyName, keys: ids, attributes: [keyName, 'tenant_id', 'ordering', 'event_types', ...ORDERING_CHANGE_ATTRIBUTES], consistency });
    return new Map(
      items.map((item) => {
        const parsed = parseItem(routingItemSchema, item, tableName, String(item[keyName]));
        const change = orderingChangeOf(parsed);
        return [
          parsed.subscription_id,
          { tenantId: parsed.tenant_id, ordering: parsed.ordering, ...(parsed.event_types === undefined ? {} : { eventTypes: parsed.event_types }), ...(change === undefined ? {} : { orderingChange: change }) },
        ] as const;
      }),
    );
  };
  /** A page of a tenant's subscription ids from the tenant index, after `after`, and where the next starts. */
  const tenantPage = async (tenantId: string, after: string | undefined, limit: number | undefined): Promise<{ ids: string[]; next: string | undefined }> => {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TENANT_SUBSCRIPTIONS_INDEX,
        KeyConditionExpression: 'tenant_id = :tenant',
        ExpressionAttributeValues: { ':tenant': tenantId },
        ...(limit === undefined ? {} : { Limit: limit }),
        ...(after === undefined ? {} : { ExclusiveStartKey: { tenant_id: tenantId, [keyName]: after } }),
      }),
    );
    const ids = (page.Items ?? []).map((item) => parseItem(tenantKeysSchema, item, `${tableName}/${TENANT_SUBSCRIPTIONS_INDEX}`, tenantId).subscription_id);
    return { ids, next: page.LastEvaluatedKey === undefined ? undefined : String(page.LastEvaluatedKey[keyName]) };
  };
  /** One conditional UpdateItem on an existing subscription; the item as it now stands, or undefined for none. */
  const changeState = async (subscriptionId: string, updateExpression: string, values: Record<string, unknown>): Promise<Subscription | undefined> => {
    const output = await updateIfCondition(
      client,
      new UpdateCommand({
        TableName: tableName,
        Key: { [keyName]: subscriptionId },
        UpdateExpression: updateExpression,
        ConditionExpression: 'attribute_exists(#id)',
        ExpressionAttributeNames: { '#id': keyName },
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return output?.Attributes === undefined ? undefined : parseItem(subscriptionItemSchema, output.Attributes, tableName, subscriptionId);
  };
  return {
    get: (subscriptionId) => read(subscriptionId, ReadConsistency.strong),
    async put(input) {
      const { now, shouldKeepExistingSecret = false, batch_size: batchSize, ordering, event_types: eventTypes, orderingChange, ...fields } = input;
      const secretAction = shouldKeepExistingSecret
        ? 'SET tenant_id = :tenant, #url = :url, secret = if_not_exists(secret, :secret)'
        : 'SET tenant_id = :tenant, #url = :url, secret = :secret';
      // A field not given keeps the stored one, as a secret not given does; a new item gets the default.
      const keepOr = (name: string, placeholder: string, given: unknown): string => (given === undefined ? `${name} = if_not_exists(${name}, ${placeholder})` : `${name} = ${placeholder}`);
      const settings = `${keepOr('batch_size', ':batch', batchSize)}, ${keepOr('ordering', ':ordering', ordering)}`;
      const removals = [
        ...(shouldKeepExistingSecret ? [] : ['previous_secret', 'previous_secret_expires_at']),
        ...(eventTypes === null ? ['event_types'] : []),
        ...(ordering === undefined ? [] : ORDERING_CHANGE_ATTRIBUTES),
      ];
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: fields.subscription_id },
          // A given secret replaces both: the rotated-out one must not sign beside a secret set on purpose.
          UpdateExpression: [
            `${secretAction}, ${settings}, updated_at = :now, created_at = if_not_exists(created_at, :now)`,
            Array.isArray(eventTypes) ? ', event_types = :types' : '',
            ...(removals.length === 0 ? [] : [` REMOVE ${removals.join(', ')}`]),
          ].join(''),
          // An id is its tenant's: another tenant's PUT must not take over its events and secret.
          ConditionExpression:
            orderingChange === undefined ? 'attribute_not_exists(#id) OR tenant_id = :tenant' : 'attribute_exists(#id) AND tenant_id = :tenant AND ordering_change_to = :change_to AND ordering_change_at = :change_at',
          ExpressionAttributeNames: { '#url': 'url', '#id': keyName },
          ExpressionAttributeValues: {
            ':tenant': fields.tenant_id,
            ':url': fields.url,
            ':secret': fields.secret,
            ':batch': batchSize ?? DEFAULT_BATCH_SIZE,
            ':ordering': ordering ?? DEFAULT_ORDERING,
            ':now': now,
            ...(Array.isArray(eventTypes) ? { ':types': eventTypes } : {}),
            ...(orderingChange === undefined ? {} : { ':change_to': orderingChange.ordering, ':change_at': orderingChange.startedAt }),
          },
          ReturnValues: 'ALL_OLD',
        }),
      );
      // A change of ordering is made only by the PUT of a subscription of the same tenant (the handler read it).
      if (output === undefined) return { kind: orderingChange === undefined ? SubscriptionPutKind.tenantMismatch : SubscriptionPutKind.orderingChangeLost };
      const previous = output.Attributes === undefined ? undefined : parseItem(subscriptionItemSchema, output.Attributes, tableName, fields.subscription_id);
      // The write was atomic: the old item tells exactly which secret it kept.
      const isKept = shouldKeepExistingSecret && previous !== undefined;
      const kept = isKept ? { secret: previous.secret, previous_secret: previous.previous_secret, previous_secret_expires_at: previous.previous_secret_expires_at } : {};
      return {
        kind: previous === undefined ? SubscriptionPutKind.created : SubscriptionPutKind.replaced,
        subscription: {
          ...fields,
          ...kept,
          // An old item without the fields was read with the defaults, which the write stored.
          batch_size: batchSize ?? previous?.batch_size ?? DEFAULT_BATCH_SIZE,
          ordering: ordering ?? previous?.ordering ?? DEFAULT_ORDERING,
          ...(eventTypes === null ? {} : eventTypes !== undefined ? { event_types: [...eventTypes] } : previous?.event_types === undefined ? {} : { event_types: previous.event_types }),
          created_at: previous?.created_at ?? now,
        },
      };
    },
    async beginOrderingChange({ subscriptionId, tenantId, from, mark }) {
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: subscriptionId },
          UpdateExpression: 'SET ordering_change_to = :to, ordering_change_at = :at, updated_at = :at',
          ConditionExpression: 'tenant_id = :tenant AND ordering = :from',
          ExpressionAttributeValues: { ':to': mark.ordering, ':at': mark.startedAt, ':tenant': tenantId, ':from': from },
        }),
      );
      return output !== undefined;
    },
    async liftOrderingChange({ subscriptionId, mark }) {
      await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: { [keyName]: subscriptionId },
          UpdateExpression: `REMOVE ${ORDERING_CHANGE_ATTRIBUTES.join(', ')}`,
          ConditionExpression: 'ordering_change_to = :to AND ordering_change_at = :at',
          ExpressionAttributeValues: { ':to': mark.ordering, ':at': mark.startedAt },
        }),
      );
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
    pause: ({ subscriptionId, reason, now }) =>
      // A pause in force keeps its time and reason: the first pause is the one an operator sees.
      changeState(subscriptionId, 'SET paused_at = if_not_exists(paused_at, :now), pause_reason = if_not_exists(pause_reason, :reason), updated_at = :now', { ':now': now, ':reason': reason }),
    resume: ({ subscriptionId, now }) => changeState(subscriptionId, 'SET resumed_at = :now, updated_at = :now REMOVE paused_at, pause_reason', { ':now': now }),
    async list({ tenantId, after, limit }) {
      const { ids, next } = await tenantPage(tenantId, after, limit);
      const items = ids.length === 0 ? [] : await batchGetItems(client, { tableName, keyName, keys: ids, attributes: SUBSCRIPTION_ATTRIBUTES, consistency: ReadConsistency.strong });
      const byId = new Map(items.map((item) => [String(item[keyName]), parseItem(subscriptionItemSchema, item, tableName, String(item[keyName]))]));
      return { items: ids.flatMap((id) => byId.get(id) ?? []), next };
    },
    async findTenantSubscriptions(tenantIds) {
      const found = new Map<string, ReadonlyMap<string, SubscriptionRouting>>();
      for (const tenantId of tenantIds) {
        const ids: string[] = [];
        let after: string | undefined;
        do {
          const page = await tenantPage(tenantId, after, undefined);
          ids.push(...page.ids);
          after = page.next;
        } while (after !== undefined);
        found.set(tenantId, ids.length === 0 ? new Map() : await readRouting(ids, ReadConsistency.eventual));
      }
      return found;
    },
    async findRouting(ids) {
      const found = await readRouting(ids, ReadConsistency.eventual);
      // Ingest refuses a request naming an unknown subscription: only a strong read may say so.
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length === 0) return found;
      for (const [id, routing] of await readRouting(missing, ReadConsistency.strong)) found.set(id, routing);
      return found;
    },
  };
}

/**
 * What the adapters' SDK commands need from IAM, as data, so that a call and its grant have one
 * source. Each adapter declares, per method, the action of every command the method can send and
 * the resource it acts on (test/unit/adapters/access.test.ts sends them and fails on a command not
 * declared); each handler declares the adapter methods it uses and takes only those; the stack
 * grants each function exactly the union of its handler's accesses, and nothing else.
 */
import type { IndexName, ResourceNames } from '../resources.js';

/**
 * The IAM actions of the commands the adapters send. A batch command is authorized as its single
 * action: `SendMessageBatch` as `sqs:SendMessage`, `ChangeMessageVisibilityBatch` as
 * `sqs:ChangeMessageVisibility`. A conditional write, or one that returns values, needs no more
 * than its own action.
 */
export const IamAction = {
  getItem: 'dynamodb:GetItem',
  putItem: 'dynamodb:PutItem',
  updateItem: 'dynamodb:UpdateItem',
  deleteItem: 'dynamodb:DeleteItem',
  query: 'dynamodb:Query',
  batchGetItem: 'dynamodb:BatchGetItem',
  sendMessage: 'sqs:SendMessage',
  receiveMessage: 'sqs:ReceiveMessage',
  deleteMessage: 'sqs:DeleteMessage',
  changeMessageVisibility: 'sqs:ChangeMessageVisibility',
  getQueueAttributes: 'sqs:GetQueueAttributes',
  putObject: 's3:PutObject',
  getObject: 's3:GetObject',
  deleteObject: 's3:DeleteObject',
  publish: 'sns:Publish',
  getMetricData: 'cloudwatch:GetMetricData',
} as const;
export type IamAction = (typeof IamAction)[keyof typeof IamAction];

/**
 * The actions IAM authorizes on no resource, as their service has no resource-level permissions
 * for them: granted on `Resource: *`, and the only actions that may be declared on {@link NO_RESOURCE}.
 */
export const UNSCOPED_ACTIONS = [IamAction.getMetricData] as const satisfies readonly IamAction[];
export type UnscopedAction = (typeof UNSCOPED_ACTIONS)[number];

/** Whether IAM authorizes `action` on no resource (see {@link UNSCOPED_ACTIONS}). */
export function isUnscopedAction(action: IamAction): action is UnscopedAction {
  return (UNSCOPED_ACTIONS as readonly IamAction[]).includes(action);
}

/** The resource of an access whose actions IAM cannot scope to a resource ({@link UNSCOPED_ACTIONS}): `Resource: *`. */
export const NO_RESOURCE = '*';
export type NoResource = typeof NO_RESOURCE;

/** A resource the handlers use, by its key in ResourceNames. */
export type ResourceName = keyof ResourceNames;

/** What an access acts on: a resource the handlers use, or, for unscoped actions alone, none. */
export type AccessTarget = ResourceName | NoResource;

/**
 * Actions on one resource: a table, one secondary index of a table, a queue, the payload bucket's
 * objects, or the notice topic; or unscoped actions on {@link NO_RESOURCE}, which has no name to
 * tell a function and no index.
 */
export interface Access<R extends AccessTarget = AccessTarget> {
  readonly resource: R;
  /** A secondary index of the table `resource`: the actions (a Query) reach the index, not the table. */
  readonly index?: IndexName;
  readonly actions: readonly IamAction[];
}

/**
 * The accesses of each method of an adapter `T`. Every method is a key: an adapter that gains a
 * method without declaring its accesses does not compile (declare with `as const satisfies`).
 */
export type AccessMap<T> = { readonly [K in keyof T]-?: readonly Access[] };

/** An access map of some adapter, with the literal types of its declaration. */
export type AnyAccessMap = { readonly [method: string]: readonly Access[] };

/** Methods `K` of the adapter whose access map is `M`, as a handler declares it uses them. */
export interface Uses<M extends AnyAccessMap, K extends keyof M> {
  /** The adapter's whole access map: it ties the declaration to its adapter in {@link pick}. */
  readonly accessMap: M;
  readonly methods: readonly K[];
  /** The accesses of exactly these methods. */
  readonly accesses: readonly M[K][number][];
}

/**
 * Declares that a handler uses `methods` of the adapter whose access map is `accessMap`. The
 * handler takes them with {@link pick}, and its function is granted their accesses.
 */
export function uses<const M extends AnyAccessMap, const K extends keyof M & string>(accessMap: M, methods: readonly [K, ...K[]]): Uses<M, K> {
  // Each `accessMap[method]` is an `M[K]`: the checker reads a generic index through the index
  // signature (possibly undefined, an Access), not as the declared literal types.
  const accesses = methods.flatMap((method): readonly Access[] => accessMap[method] ?? []) as M[K][number][];
  return { accessMap, methods, accesses };
}

/**
 * The methods a handler declared it uses, taken from the adapter: calling any other method of the
 * adapter does not compile. `used` must be declared with the adapter's own access map.
 */
export function pick<T, const K extends keyof T & string>(adapter: T, used: Uses<AccessMap<NoInfer<T>>, K>): Pick<T, K> {
  // Object.fromEntries types its keys as string: the entries are exactly K, each T[K].
  return Object.fromEntries(used.methods.map((method) => [method, adapter[method]])) as Pick<T, K>;
}

/** The resources of a handler's uses. */
type ResourceOfUses<U extends Readonly<Record<string, Uses<AnyAccessMap, string>>>> = U[keyof U]['accesses'][number]['resource'];

/**
 * The accesses of `accesses` merged: one per resource (and index), its actions sorted and each
 * once, in the order the resources first appear.
 */
export function mergeAccesses<R extends AccessTarget>(accesses: readonly Access<R>[]): readonly Access<R>[] {
  const merged = new Map<string, { resource: R; index: IndexName | undefined; actions: Set<IamAction> }>();
  for (const access of accesses) {
    const key = `${access.resource}/${access.index ?? ''}`;
    const entry = merged.get(key) ?? { resource: access.resource, index: access.index, actions: new Set<IamAction>() };
    for (const action of access.actions) entry.actions.add(action);
    merged.set(key, entry);
  }
  return [...merged.values()].map(({ resource, index, actions }) => ({
    resource,
    ...(index === undefined ? {} : { index }),
    actions: [...actions].sort(),
  }));
}

/** Every access of a handler's uses, merged (see {@link mergeAccesses}): what its function is granted. */
export function accessOf<const U extends Readonly<Record<string, Uses<AnyAccessMap, string>>>>(declared: U): readonly Access<ResourceOfUses<U>>[] {
  const accesses: Access<ResourceOfUses<U>>[] = [];
  for (const used of Object.values(declared)) accesses.push(...used.accesses);
  return mergeAccesses(accesses);
}

/**
 * The resources `accesses` reach, each once: the names a function is told, and reads at cold
 * start. {@link NO_RESOURCE} has no name, and is not one of them.
 */
export function resourcesOf<R extends AccessTarget>(accesses: readonly Access<R>[]): readonly Exclude<R, NoResource>[] {
  const isNamed = (resource: R): resource is Exclude<R, NoResource> => resource !== NO_RESOURCE;
  return [...new Set(accesses.map((access) => access.resource).filter(isNamed))];
}

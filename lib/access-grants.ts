import { Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { isUnscopedAction, mergeAccesses, NO_RESOURCE, type Access, type IamAction, type ResourceName } from '../lambda/adapters/access.js';
import type { TableName } from '../lambda/resources.js';
import type { DeliveryQueues, QueueName } from './delivery-queues.js';
import type { NoticeTopic } from './notice-topic.js';
import type { PayloadBucket } from './payload-bucket.js';
import type { StateTables } from './state-tables.js';

/** Properties of {@link AccessGrants}: the constructs that hold every resource of ResourceNames. */
export interface AccessGrantsProps {
  readonly tables: StateTables;
  readonly queues: DeliveryQueues;
  readonly payloads: PayloadBucket;
  readonly notices: NoticeTopic;
}

/** Grants one merged access to a function, on the construct that holds its resource. */
type Grantor = (fn: lambda.Function, access: Access) => void;

/** The actions of `access` that belong to `service`; any other is a declaration on the wrong resource. */
function actionsOf<S extends 'dynamodb' | 'sqs' | 's3' | 'sns'>(service: S, access: Access): Extract<IamAction, `${S}:${string}`>[] {
  const isOfService = (action: IamAction): action is Extract<IamAction, `${S}:${string}`> => action.startsWith(`${service}:`);
  const foreign = access.actions.filter((action) => !isOfService(action));
  if (foreign.length > 0) throw new Error(`${access.resource} is declared with ${foreign.join(', ')}, which no ${service} resource takes`);
  return access.actions.filter(isOfService);
}

/**
 * Grants each function exactly the accesses its handler exports (`<HANDLER>_ACCESS`, the union of
 * the calls of the adapter methods it uses), each on its resource by ARN: a table, one named index
 * of a table, a queue, the payload bucket's objects under their prefix. Each grant goes through
 * the method of the construct that owns the resource, which also tells the function the
 * resource's name. So a function is granted, and told the names of, what its code calls, and
 * nothing else: the grants have no other source.
 */
export class AccessGrants {
  private readonly grantors: Readonly<Record<ResourceName, Grantor>>;

  constructor(props: AccessGrantsProps) {
    const { tables, queues, payloads, notices } = props;
    const onTable =
      (name: TableName): Grantor =>
      (fn, access) => {
        if (access.index === undefined) return tables.grantItemActions(name, fn, actionsOf('dynamodb', access));
        if (!tables.hasIndex(name, access.index)) throw new Error(`The ${name} table has no index ${access.index}`);
        // An index is only ever queried: its grant is that one action.
        if (access.actions.some((action) => action !== 'dynamodb:Query')) throw new Error(`The index ${access.index} is declared with ${access.actions.join(', ')}; only a Query reaches an index`);
        return tables.grantQueryIndex(name, access.index, fn);
      };
    const withoutIndex =
      (grant: Grantor): Grantor =>
      (fn, access) => {
        if (access.index !== undefined) throw new Error(`${access.resource} is no table: it has no index ${access.index}`);
        grant(fn, access);
      };
    const onQueue = (name: QueueName): Grantor => withoutIndex((fn, access) => queues.grantQueueActions(name, fn, actionsOf('sqs', access)));
    // Typed by ResourceName: a resource added to ResourceNames without its grant does not compile.
    this.grantors = {
      subscriptionsTable: onTable('subscriptions'),
      eventsTable: onTable('events'),
      deadLettersTable: onTable('deadLetters'),
      orderingKeysTable: onTable('orderingKeys'),
      groupsTable: onTable('groups'),
      settingsTable: onTable('settings'),
      deliveryQueueUrl: onQueue('delivery'),
      deadLetterQueueUrl: onQueue('deadLetter'),
      payloadBucket: withoutIndex((fn, access) => payloads.grantObjectActions(fn, actionsOf('s3', access))),
      noticeTopic: withoutIndex((fn, access) => notices.grantTopicActions(fn, actionsOf('sns', access))),
    };
  }

  /** Lets `fn` make exactly `accesses`, one statement per resource, and tells it each resource's name. */
  grant(fn: lambda.Function, accesses: readonly Access[]): void {
    for (const access of mergeAccesses(accesses)) {
      if (access.resource === NO_RESOURCE) grantUnscoped(fn, access);
      else this.grantors[access.resource](fn, access);
    }
  }
}

/**
 * Lets `fn` make actions IAM cannot scope to a resource (`cloudwatch:GetMetricData`), on
 * `Resource: *`, in a policy of their own: cdk-nag's IAM5 finding on that wildcard is acknowledged
 * on that policy alone, so that a wildcard anywhere else still fails the synthesis.
 */
function grantUnscoped(fn: lambda.Function, access: Access): void {
  const scoped = access.actions.filter((action) => !isUnscopedAction(action));
  if (scoped.length > 0) throw new Error(`${scoped.join(', ')} acts on a resource: declare it on that resource, not on ${NO_RESOURCE}`);
  if (access.index !== undefined) throw new Error(`${NO_RESOURCE} is no table: it has no index ${access.index}`);
  if (fn.role === undefined) throw new Error(`${fn.node.path} has no role to grant ${access.actions.join(', ')} to`);
  const policy = new iam.Policy(fn, 'UnscopedActions', {
    roles: [fn.role],
    statements: [new iam.PolicyStatement({ actions: [...access.actions], resources: ['*'] })],
  });
  Validations.of(policy).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: `${access.actions.join(', ')} supports no resource-level permissions (the IAM Service Authorization Reference lists no resource type for it), so IAM accepts it on Resource "*" alone; it only reads metrics, and this policy holds nothing else.`,
  });
}

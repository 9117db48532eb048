import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { IamAction } from '../lambda/adapters/access.js';
import { IndexProjection, TABLES, type IndexDefinition, type IndexName, type TableDefinition, type TableName } from '../lambda/resources.js';

export type { IndexName, TableName };

/**
 * One DynamoDB action of the calls the adapters make (IamAction). A grant names exactly the calls
 * of the function it is for, never a CDK-style read or read-write set: a function that only reads
 * items by key gets `GetItem`, not `Scan`. No stream action is among them: no table has a stream.
 */
export type ItemAction = Extract<IamAction, `dynamodb:${string}`>;

/**
 * CDK context key (`cdk deploy -c ordered-webhooks:keepRetiredIndexes=true`): declare each table's
 * retired indexes too, for the one deploy that upgrades a stack deployed before an index was
 * replaced. CloudFormation adds or deletes one global secondary index per table update, never
 * both, so that deploy adds the new index and the next one, without the key, deletes the old.
 */
export const KEEP_RETIRED_INDEXES_CONTEXT = 'ordered-webhooks:keepRetiredIndexes';

const PROJECTION_TYPES = {
  [IndexProjection.keysOnly]: dynamodb.ProjectionType.KEYS_ONLY,
  [IndexProjection.all]: dynamodb.ProjectionType.ALL,
} as const satisfies Record<IndexProjection, dynamodb.ProjectionType>;

/** Properties of {@link StateTables}. */
export interface StateTablesProps {
  /**
   * What happens to the tables when they leave the stack. Subscriptions hold signing secrets,
   * ordering keys hold the last `webhook-sequence` given out and settings hold the routing in
   * force: losing any of them breaks receivers.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The DynamoDB tables of TABLES and their global secondary indexes, declared from those
 * definitions so the deployed stack and the local stack cannot disagree about a key, an index or
 * a TTL attribute. On demand, encrypted, with point-in-time recovery.
 *
 * The grants name the table and each index they reach by ARN, and exactly the actions a function
 * calls. The CDK's own table grants give read or read-write sets, and add `<table>/index/*` to
 * every grant as soon as a table has an index, so a function that only writes items could also
 * query every index; cdk-nag (AwsSolutions-IAM5) refuses the wildcard.
 */
export class StateTables extends Construct {
  private readonly tables: Readonly<Record<TableName, dynamodb.Table>>;

  constructor(scope: Construct, id: string, props: StateTablesProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const context: unknown = this.node.tryGetContext(KEEP_RETIRED_INDEXES_CONTEXT);
    // `-c key=true` arrives as the string 'true'; cdk.json or a test may give a boolean.
    const shouldKeepRetiredIndexes = context === true || context === 'true';
    const declare = (definition: TableDefinition): dynamodb.Table => {
      const table = new dynamodb.Table(this, definition.localName, {
        partitionKey: { name: definition.partitionKey, type: dynamodb.AttributeType.STRING },
        ...(definition.sortKey === undefined ? {} : { sortKey: { name: definition.sortKey, type: dynamodb.AttributeType.STRING } }),
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        encryption: dynamodb.TableEncryption.AWS_MANAGED,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        ...(definition.ttlAttribute === undefined ? {} : { timeToLiveAttribute: definition.ttlAttribute }),
        removalPolicy,
      });
      const indexes: readonly IndexDefinition[] = [...(definition.indexes ?? []), ...(shouldKeepRetiredIndexes ? (definition.retiredIndexes ?? []) : [])];
      for (const index of indexes) {
        const key = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: key(index.partitionKey),
          ...(index.sortKey === undefined ? {} : { sortKey: key(index.sortKey) }),
          projectionType: PROJECTION_TYPES[index.projection],
        });
      }
      return table;
    };
    this.tables = {
      subscriptions: declare(TABLES.subscriptions),
      events: declare(TABLES.events),
      deadLetters: declare(TABLES.deadLetters),
      orderingKeys: declare(TABLES.orderingKeys),
      groups: declare(TABLES.groups),
      settings: declare(TABLES.settings),
    };
  }

  /** The table declared for `name`. */
  table(name: TableName): dynamodb.ITable {
    return this.tables[name];
  }

  /** The ARN of one secondary index of the table `name`. */
  indexArn<T extends TableName>(name: T, indexName: IndexName<T>): string {
    return `${this.tables[name].tableArn}/index/${indexName}`;
  }

  /**
   * Lets `fn` make exactly `actions` on the table's items (not its indexes), and tells it the
   * table's name. `actions` are the IAM actions of the calls its code makes on the table, one per
   * API: `BatchGetItem`, `GetItem` (consistent or not), `UpdateItem` (conditional or not, whatever
   * its `ReturnValues`).
   */
  grantItemActions(name: TableName, fn: lambda.Function, actions: readonly ItemAction[]): void {
    if (actions.length === 0) throw new Error(`A grant on the ${name} table names no action`);
    this.grantOnTable(name, fn, actions);
  }

  /** Whether TABLES declares a secondary index `indexName` on the table `name`. */
  hasIndex<T extends TableName>(name: T, indexName: string): indexName is IndexName<T> {
    const definition: TableDefinition = TABLES[name];
    return (definition.indexes ?? []).some((index) => index.name === indexName);
  }

  /** Lets `fn` query one secondary index of the table, and nothing else, and tells it the table's name. */
  grantQueryIndex<T extends TableName>(name: T, indexName: IndexName<T>, fn: lambda.Function): void {
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['dynamodb:Query'],
      resourceArns: [this.indexArn(name, indexName)],
    });
    fn.addEnvironment(TABLES[name].envVar, this.tables[name].tableName);
  }

  private grantOnTable(name: TableName, fn: lambda.Function, actions: readonly string[]): void {
    iam.Grant.addToPrincipal({ grantee: fn, actions: [...actions], resourceArns: [this.tables[name].tableArn] });
    fn.addEnvironment(TABLES[name].envVar, this.tables[name].tableName);
  }
}

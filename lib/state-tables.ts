import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { TABLES, type TableDefinition } from '../lambda/resources.js';

/** A table of TABLES, by its key there. */
export type TableName = keyof typeof TABLES;

/** Properties of {@link StateTables}. */
export interface StateTablesProps {
  /**
   * What happens to the tables when they leave the stack. Subscriptions hold signing secrets and
   * ordering keys hold the last `webhook-sequence` given out: losing either breaks receivers.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The DynamoDB tables of TABLES, declared from those definitions so the deployed stack and the
 * local stack cannot disagree about a key or a TTL attribute. On demand, encrypted, with
 * point-in-time recovery.
 */
export class StateTables extends Construct {
  private readonly tables: Readonly<Record<TableName, dynamodb.Table>>;

  constructor(scope: Construct, id: string, props: StateTablesProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const declare = (definition: TableDefinition): dynamodb.Table =>
      new dynamodb.Table(this, definition.localName, {
        partitionKey: { name: definition.partitionKey, type: dynamodb.AttributeType.STRING },
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        encryption: dynamodb.TableEncryption.AWS_MANAGED,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        ...(definition.ttlAttribute === undefined ? {} : { timeToLiveAttribute: definition.ttlAttribute }),
        removalPolicy,
      });
    this.tables = {
      subscriptions: declare(TABLES.subscriptions),
      events: declare(TABLES.events),
      orderingKeys: declare(TABLES.orderingKeys),
    };
  }

  /** The table declared for `name`. */
  table(name: TableName): dynamodb.ITable {
    return this.tables[name];
  }

  /** Lets `fn` read the table and tells it the table's name. */
  grantReadData(name: TableName, fn: lambda.Function): void {
    this.tables[name].grantReadData(fn);
    fn.addEnvironment(TABLES[name].envVar, this.tables[name].tableName);
  }

  /** Lets `fn` read and write the table's items and tells it the table's name. */
  grantReadWriteData(name: TableName, fn: lambda.Function): void {
    this.tables[name].grantReadWriteData(fn);
    fn.addEnvironment(TABLES[name].envVar, this.tables[name].tableName);
  }
}

/**
 * List prices (us-east-1, USD) and documented quotas the benchmark's cost table and scale model
 * use: data, each with the page it was read from. Prices change; when one does, change it here
 * and nowhere else. Read on 2026-12-03 from the pages named.
 */

/** A number and where AWS documents it. */
export interface Sourced {
  readonly value: number;
  readonly source: string;
}

/** Per-request and per-unit prices, us-east-1, first tier. */
export const PRICES = {
  /** HTTP API, per request, first 300 million a month (metered in 512 KB increments). */
  httpApiPerRequest: { value: 1.0 / 1e6, source: 'https://aws.amazon.com/api-gateway/pricing/' },
  /** HTTP API requests are metered in increments of this many bytes. */
  httpApiMeteringBytes: { value: 512 * 1024, source: 'https://aws.amazon.com/api-gateway/pricing/' },
  /** Lambda arm64 duration, per GB-second, first 7.5 billion GB-s a month. */
  lambdaArmPerGbSecond: { value: 0.0000133334, source: 'https://aws.amazon.com/lambda/pricing/' },
  /** Lambda requests, per invocation. */
  lambdaPerRequest: { value: 0.2 / 1e6, source: 'https://aws.amazon.com/lambda/pricing/' },
  /** SQS FIFO, per request; every 64 KB chunk of a request's payload is billed as one request. */
  sqsFifoPerRequest: { value: 0.5 / 1e6, source: 'https://aws.amazon.com/sqs/pricing/' },
  /** SQS bills a request per chunk of this many bytes. */
  sqsChunkBytes: { value: 64 * 1024, source: 'https://aws.amazon.com/sqs/pricing/' },
  /** DynamoDB on-demand, per write request unit (standard table class). */
  dynamoPerWriteUnit: { value: 0.625 / 1e6, source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  /** DynamoDB on-demand, per read request unit (standard table class). */
  dynamoPerReadUnit: { value: 0.125 / 1e6, source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
  /** CloudWatch Logs, standard log class, per GB ingested (EMF metric records are log lines). */
  logsPerGbIngested: { value: 0.5, source: 'https://aws.amazon.com/cloudwatch/pricing/' },
  /** CloudWatch custom metric, per metric a month (first 10,000). */
  customMetricPerMonth: { value: 0.3, source: 'https://aws.amazon.com/cloudwatch/pricing/' },
  /** CloudWatch standard-resolution alarm, per alarm metric a month. */
  alarmPerMonth: { value: 0.1, source: 'https://aws.amazon.com/cloudwatch/pricing/' },
  /** CloudWatch dashboard, per dashboard a month (beyond the 3 free). */
  dashboardPerMonth: { value: 3.0, source: 'https://aws.amazon.com/cloudwatch/pricing/' },
  /**
   * EventBridge's ordered alternative, per million events: custom-bus events ($1.00/M) plus API
   * destination invocations ($0.20/M), the figure the cost goals compare with.
   */
  eventBridgePerMillionEvents: { value: 1.2, source: 'https://aws.amazon.com/eventbridge/pricing/' },
} as const satisfies Record<string, Sourced>;

/** Default quotas the scale model compares the calls with. */
export const QUOTAS = {
  /** API Gateway throttle, per account and Region, across all APIs (raisable). */
  apiGatewayAccountRps: { value: 10_000, source: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html' },
  /**
   * SQS FIFO in high-throughput mode, transactions per second per API action per queue, in
   * us-east-1, us-west-2 and eu-west-1 (a batch of 10 is one transaction).
   */
  sqsFifoHighThroughputTpsPerAction: {
    value: 70_000,
    source: 'https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html',
  },
  /** Lambda concurrent executions per account and Region (raisable). */
  lambdaAccountConcurrency: { value: 1_000, source: 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html' },
  /** An SQS event source mapping's `maximumConcurrency`: 2 to 1000 (CONSUMER_CONCURRENCY). */
  esmMaximumConcurrency: { value: 1_000, source: 'https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html' },
  /** DynamoDB on-demand table, write request units per second (raisable). */
  dynamoTableWriteUnitsPerSecond: { value: 40_000, source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html' },
  /** DynamoDB on-demand table, read request units per second (raisable). */
  dynamoTableReadUnitsPerSecond: { value: 40_000, source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html' },
  /** DynamoDB, read units per second on one partition (one item lives on one). */
  dynamoPartitionReadUnitsPerSecond: {
    value: 3_000,
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html',
  },
  /** DynamoDB, write units per second on one partition (one key's item lives on one). */
  dynamoPartitionWriteUnitsPerSecond: {
    value: 1_000,
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html',
  },
} as const satisfies Record<string, Sourced>;

/**
 * Estimates the cost table states beside the counted figures: what the local stack cannot measure.
 * Each is an assumption, printed with the table.
 */
export const ESTIMATES = {
  /** Memory of every function (lib/handler-function.ts: `memorySize` default, no function overrides it). */
  functionMemoryMb: 256,
  /** One DynamoDB or SQS call from Lambda in the same Region, counted sequentially (an upper bound). */
  awsCallMs: 6,
  /** Ingest's own work per invocation besides its calls (parse, validate, route). */
  ingestBaseMs: 5,
  /** Lambda's START, END and REPORT lines per invocation, in bytes. */
  platformLogBytesPerInvocation: 350,
  /** A terminal log line printed as Powertools' JSON instead: keys, timestamp, service, context. */
  jsonLogOverheadBytes: 220,
  /** The consumer's EMF record per invocation (Powertools Metrics, four counts). */
  consumerEmfBytesPerInvocation: 600,
  /** The lag job runs once a minute (LAG_JOB_INTERVAL). */
  lagJobRunsPerMonth: 60 * 24 * 30,
  /** Lambda's pollers keep long-polling an empty FIFO queue: about this many of them, 20 s waits. */
  idlePollers: 5,
  /** Custom metrics: the consumer's four counts and the lag job's six (lambda/core). */
  customMetrics: 10,
  /** CloudWatch alarms of lib/alarms.ts. */
  alarms: 10,
  /** The operations dashboard. */
  dashboards: 1,
} as const;

/** Seconds in the 30-day month the monthly figures use. */
export const SECONDS_PER_MONTH = 30 * 24 * 3600;

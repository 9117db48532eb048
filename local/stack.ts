/**
 * The whole pipeline in one process: emulators, the resources the CDK stack declares, the HTTP API
 * in front of the ingest and subscriptions handlers, and the consumer behind a poller that plays
 * Lambda's event source mapping. `npm start` runs it; integration tests start it in-process.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LagSummary } from '../lambda/core/lag.js';
import { consumerTimeoutSeconds, SERVICE_NAMES, type Config, type FunctionName } from '../lambda/config.js';
import { wireIngestHandler, type IngestPortsWrapper } from '../lambda/handlers/ingest.js';
import { wireSubscriptionsHandler } from '../lambda/handlers/subscriptions.js';
import type { HandlerWiring } from '../lambda/handlers/wiring.js';
import type { ResourceNames } from '../lambda/resources.js';
import { TABLES } from '../lambda/resources.js';
import { createLocalClients } from './clients.js';
import { wireConsumerHandler, type DeliveryPortsWrapper } from '../lambda/handlers/consumer.js';
import { wireOperationsHandler } from '../lambda/handlers/operations.js';
import { wireLagJob } from '../lambda/handlers/lag-metrics.js';
import { LOCAL_REGION, startEmulators } from './emulators.js';
import { startEventSourceMapping } from './event-source-mapping.js';
import { createConsoleAssets } from '../console/serve.js';
import { startHttpApi } from './http-api.js';
import { ensureNoticeTopic } from './notice-topic.js';
import { ensurePayloadBucket } from './payload-bucket.js';
import { ensureQueues } from './queues.js';
import { ensureTables } from './tables.js';
import { createMetricsRecorder } from './metrics-recorder.js';
import { createTerminalLogger, type LogSink } from './terminal-logger.js';

/** The HTTP API listens on loopback only: the local stack has no authentication. */
export const LOCAL_HOST = '127.0.0.1';

export interface LocalStackOptions {
  readonly config: Config;
  /** HTTP port; `config.port` when absent, 0 for one the OS chooses. */
  readonly port?: number;
  /** Where log lines go; the terminal when absent (warnings and errors on stderr). */
  readonly logSink?: LogSink;
  /** Test hook for fault injection into the consumer's ports. */
  readonly wrapDeliveryPorts?: DeliveryPortsWrapper;
  /** Tests only: wraps the ingest handler's ports, e.g. to make SQS refuse an event. */
  readonly wrapIngestPorts?: IngestPortsWrapper;
  /** Tests only: the routing switch's pause grace, 30 s (PAUSE_GRACE_SECONDS) otherwise. */
  readonly pauseGraceSeconds?: number;
  /** Tests only: the wait before a change of `ordering` may be made, 60 s (ORDERING_CHANGE_WAIT_SECONDS) otherwise. */
  readonly orderingChangeWaitSeconds?: number;
  /** Whether the poller runs (default true); tests of the API alone keep the queue still. */
  readonly isConsumerEnabled?: boolean;
  /**
   * Tests only: the clock of ingest, the consumer and the operator's routes, one for all three so
   * that they agree on the minute (a group's events per minute); the system clock when absent.
   */
  readonly clock?: () => Date;
}

export interface LocalStack {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly config: Config;
  readonly resources: ResourceNames;
  readonly clients: { readonly sqs: SQSClient; readonly dynamo: DynamoDBDocumentClient; readonly s3: S3Client; readonly sns: SNSClient };
  /** Where the embedded emulators listen: `http://127.0.0.1:<port>` each. */
  readonly emulatorEndpoints: { readonly sqs: string; readonly dynamo: string };
  /** Runs the lag job now, as its minute does (for tests, which do not wait a minute). */
  readonly runLagJob: () => Promise<LagSummary>;
  /**
   * Stops in dependency order: the HTTP API (in-flight requests finish), then the pollers
   * (in-flight batches finish and are settled), then the clients and the emulators. With
   * DATA_DIR, everything accepted is on disk when it resolves.
   */
  readonly stop: () => Promise<void>;
}

/** Stops what was started, last started first: the HTTP API, the pollers, the clients, the emulators. */
type Stopper = () => Promise<void> | void;

/**
 * Starts the parts in dependency order. Stopping runs in reverse, so that every part still has
 * what it depends on while it finishes its work: in-flight requests still reach SQS and DynamoDB,
 * in-flight batches can still be settled. A failed start stops what had started and rethrows.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const { config, clock } = options;
  // The clock goes in through the test hooks' wrappers, applied under the test's own.
  const wrapIngestPorts: IngestPortsWrapper | undefined =
    clock === undefined ? options.wrapIngestPorts : (ports) => (options.wrapIngestPorts ?? ((same) => same))({ ...ports, now: clock });
  const wrapDeliveryPorts: DeliveryPortsWrapper | undefined =
    clock === undefined ? options.wrapDeliveryPorts : (ports) => (options.wrapDeliveryPorts ?? ((same) => same))({ ...ports, now: clock });
  const logger = (service: string) => createTerminalLogger(service, config.logLevel, options.logSink);
  const stoppers: Stopper[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stoppers.splice(0)) await stop();
  };
  try {
    const emulators = await startEmulators(config.dataDir);
    stoppers.unshift(emulators.stop);
    const clients = createLocalClients(emulators);
    stoppers.unshift(clients.destroy);

    const [queues, , payloadBucket, noticeTopic] = await Promise.all([
      ensureQueues(clients.sqs, config),
      ensureTables(clients.dynamo),
      ensurePayloadBucket(clients.s3),
      ensureNoticeTopic(clients.sns),
    ]);
    const resources: ResourceNames = {
      subscriptionsTable: TABLES.subscriptions.localName,
      eventsTable: TABLES.events.localName,
      deadLettersTable: TABLES.deadLetters.localName,
      orderingKeysTable: TABLES.orderingKeys.localName,
      groupsTable: TABLES.groups.localName,
      settingsTable: TABLES.settings.localName,
      deliveryQueueUrl: queues.delivery.url,
      deadLetterQueueUrl: queues.deadLetter.url,
      payloadBucket,
      noticeTopic,
    };
    // Each function logs under its deployed service name.
    const wiring = (name: FunctionName): HandlerWiring => ({ config, resources, dynamo: clients.dynamo, sqs: clients.sqs, s3: clients.s3, sns: clients.sns, logger: logger(SERVICE_NAMES[name]) });

    // The consumer's counts, per minute, for GET /v1/metrics: the local stack has no CloudWatch.
    const metricsRecorder = createMetricsRecorder(clock);

    if (options.isConsumerEnabled !== false) {
      const mapping = startEventSourceMapping({
        sqs: clients.sqs,
        queueUrl: queues.delivery.url,
        source: { queueArn: queues.delivery.arn, region: LOCAL_REGION },
        invoke: wireConsumerHandler(wiring('consumer'), wrapDeliveryPorts, metricsRecorder.record),
        functionTimeoutSeconds: consumerTimeoutSeconds(config),
        concurrency: config.consumerConcurrency,
        logger: logger('event-source'),
      });
      stoppers.unshift(mapping.stop);
    }

    // The lag job, once a minute as on AWS: groups idle for IDLE_GROUP_MINUTES leave the index of
    // active groups, and groups held for a resumed subscription are let go. Its metrics are
    // CloudWatch's, not the local stack's: published nowhere.
    const lagJob = wireLagJob(wiring('lagMetrics'), () => undefined, clock);
    const sweepLogger = logger(SERVICE_NAMES.lagMetrics);
    const sweep = setInterval(() => {
      lagJob().catch((error: unknown) => sweepLogger.warn('the lag job failed; the next minute tries again', { error }));
    }, 60_000);
    sweep.unref();
    stoppers.unshift(async () => clearInterval(sweep));

    const api = await startHttpApi({
      host: LOCAL_HOST,
      port: options.port ?? config.port,
      handlers: {
        ingest: wireIngestHandler(wiring('ingest'), wrapIngestPorts),
        subscriptions: wireSubscriptionsHandler(wiring('subscriptions'), options.orderingChangeWaitSeconds === undefined ? {} : { orderingChangeWaitSeconds: options.orderingChangeWaitSeconds }),
        operations: wireOperationsHandler(wiring('operations'), {
          metricsSource: metricsRecorder,
          ...(options.pauseGraceSeconds === undefined ? {} : { pauseGraceSeconds: options.pauseGraceSeconds }),
          ...(clock === undefined ? {} : { now: clock }),
        }),
      },
      console: createConsoleAssets(),
      logger: logger('http'),
    });
    stoppers.unshift(api.stop);

    return {
      url: api.url,
      config,
      resources,
      clients: { sqs: clients.sqs, dynamo: clients.dynamo, s3: clients.s3, sns: clients.sns },
      emulatorEndpoints: { sqs: emulators.sqsEndpoint, dynamo: emulators.dynamoEndpoint },
      runLagJob: lagJob,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

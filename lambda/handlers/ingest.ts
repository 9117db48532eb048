/**
 * Ingest function: `POST /v1/events` and `GET /health` (CONTRACT §2).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { parseEventsRequest, readJsonBody } from '../core/event.js';
import { ingestEvents, type IngestPorts, type IngestSettings } from '../core/ingest.js';
import { createEventStore } from '../adapters/event-store.js';
import { createGroupStore } from '../adapters/group-store.js';
import { createSettingsStore } from '../adapters/settings-store.js';
import { createDeliveryQueue } from '../adapters/delivery-queue.js';
import { createSubscriptionStore } from '../adapters/subscription-store.js';
import { createHttpHandler, type HttpHandler } from './http.js';
import { wiredOnFirstCall, wiringFromEnvironment, type HandlerWiring } from './wiring.js';

export interface IngestHandlerDeps {
  readonly ports: IngestPorts;
  /** The routing in force, read on every request. */
  readonly readSettings: () => Promise<IngestSettings>;
  readonly logger: Logger;
}

export function createIngestHandler(deps: IngestHandlerDeps): HttpHandler {
  return createHttpHandler(
    {
      'GET /health': async () => ({ statusCode: 200, body: { status: 'ok' } }),
      'POST /v1/events': async (event) => {
        const body = readJsonBody(event.body, event.isBase64Encoded);
        if (!body.ok) return body.response;
        const request = parseEventsRequest(body.value);
        if (!request.ok) return request.response;
        const response = await ingestEvents(request.value, deps.ports, await deps.readSettings());
        deps.logger.info('events answered', { requestId: event.requestContext.requestId, statusCode: response.statusCode, events: request.value.events.length });
        return response;
      },
    },
    deps.logger,
  );
}

/** The resources ingest uses, and is granted. */
export const INGEST_RESOURCES = ['subscriptionsTable', 'eventsTable', 'groupsTable', 'settingsTable', 'deliveryQueueUrl'] as const;
type IngestWiring = HandlerWiring<(typeof INGEST_RESOURCES)[number]>;

/** Connects the ingest ports to DynamoDB and SQS. */
export function createIngestPorts(input: IngestWiring): IngestPorts {
  const subscriptions = createSubscriptionStore(input.dynamo, input.resources.subscriptionsTable);
  const events = createEventStore(input.dynamo, { tableName: input.resources.eventsTable, ttlDays: input.config.deliveryStateTtlDays });
  return {
    findSubscriptionTenants: subscriptions.findTenants,
    findKnownEventIds: events.findKnownEventIds,
    recordAccepted: events.recordAccepted,
    recordGroupIntake: createGroupStore(input.dynamo, input.resources.groupsTable).recordIntake,
    sendBatch: createDeliveryQueue(input.sqs, input.resources.deliveryQueueUrl, input.logger).sendBatch,
    now: () => new Date(),
  };
}

/** The ingest handler from a configuration and clients: shared by Lambda and the local stack. */
/** Wraps the ingest ports, e.g. for the local stack's tests to make SQS refuse an event. */
export type IngestPortsWrapper = (ports: IngestPorts) => IngestPorts;

export function wireIngestHandler(input: IngestWiring, wrapPorts: IngestPortsWrapper = (ports) => ports): HttpHandler {
  const settings = createSettingsStore(input.dynamo, input.resources.settingsTable, input.config.partitionCount);
  return createIngestHandler({
    ports: wrapPorts(createIngestPorts(input)),
    readSettings: async () => {
      const routing = await settings.getRouting();
      return { partitionCount: routing.partitionCount, isPaused: routing.isPaused };
    },
    logger: input.logger,
  });
}

/** Lambda entry point. */
export const handler: HttpHandler = wiredOnFirstCall(() => wireIngestHandler(wiringFromEnvironment('ingest', INGEST_RESOURCES)));

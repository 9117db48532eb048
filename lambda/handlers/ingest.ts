/**
 * Ingest function: `POST /v1/events` and `GET /health` (docs/api.md#routes), and the API document
 * (`GET /openapi.json`).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '@aws-lambda-powertools/logger';
import { maxEventsPerMessage } from '../config.js';
import { buildApiDocument, type ApiDocument } from '../api-document/document.js';
import type { HealthAnswer } from '../core/answers.js';
import { readEventsRequest } from '../core/event.js';
import { ingestEvents, type IngestPorts, type IngestSettings } from '../core/ingest.js';
import { accessOf, pick, resourcesOf, uses } from '../adapters/access.js';
import { createDeliveryQueue, DELIVERY_QUEUE_ACCESS } from '../adapters/delivery-queue.js';
import { createEventStore, EVENT_STORE_ACCESS } from '../adapters/event-store.js';
import { createGroupStore, GROUP_STORE_ACCESS } from '../adapters/group-store.js';
import { createKeptEventStore, KEPT_EVENT_STORE_ACCESS } from '../adapters/kept-event-store.js';
import { createPayloadBucket } from '../adapters/payload-bucket.js';
import { createSettingsStore, SETTINGS_STORE_ACCESS } from '../adapters/settings-store.js';
import { createSubscriptionStore, SUBSCRIPTION_STORE_ACCESS } from '../adapters/subscription-store.js';
import { logIngestOutcome, logUnreadRequest } from './ingest-log.js';
import { createHttpHandler, HTTP_LOG_CONTEXT, type HttpEntry, type HttpHandler } from './http.js';
import { errorResponse, toIngestResponse, type Answer } from './responses.js';
import { lambdaEntry, type HandlerWiring } from './wiring.js';

export interface IngestHandlerDeps {
  readonly ports: IngestPorts;
  /** The routing in force, read on every request. */
  readonly readSettings: () => Promise<IngestSettings>;
  readonly logger: Logger;
}

export function createIngestHandler(deps: IngestHandlerDeps): HttpHandler {
  return createHttpHandler(
    {
      'GET /health': async (): Answer<HealthAnswer> => ({ statusCode: 200, body: { status: 'ok' } }),
      // Built per request: it is asked for rarely, and a cache would be state held for nothing.
      'GET /openapi.json': async (): Answer<ApiDocument> => ({ statusCode: 200, body: buildApiDocument() }),
      'POST /v1/events': async (event) => {
        const { requestId } = event.requestContext;
        const request = readEventsRequest(event.body, event.isBase64Encoded);
        if (!request.ok) {
          logUnreadRequest(deps.logger, requestId, request.refusal);
          return errorResponse(request.refusal);
        }
        const outcome = await ingestEvents(request.value, deps.ports, await deps.readSettings());
        logIngestOutcome(deps.logger, requestId, request.value, outcome);
        const response = toIngestResponse(outcome);
        deps.logger.info('events answered', { requestId, statusCode: response.statusCode, events: request.value.events.length });
        return response;
      },
    },
    deps.logger,
  );
}

/** The adapter methods ingest calls: the wiring takes these alone, and its function is granted their accesses. */
const USES = {
  subscriptions: uses(SUBSCRIPTION_STORE_ACCESS, ['findRouting', 'findTenantSubscriptions']),
  events: uses(EVENT_STORE_ACCESS, ['recordAccepted', 'findFanOuts', 'recordFanOut', 'findRecorded']),
  groups: uses(GROUP_STORE_ACCESS, ['recordIntake']),
  keptEvents: uses(KEPT_EVENT_STORE_ACCESS, ['keep']),
  settings: uses(SETTINGS_STORE_ACCESS, ['getRouting']),
  deliveryQueue: uses(DELIVERY_QUEUE_ACCESS, ['sendBatch']),
};

/** What ingest's calls need from IAM: exactly what the stack grants its function. */
export const INGEST_ACCESS = accessOf(USES);

/** The resources ingest uses: it is told their names, and reads them at cold start. */
export const INGEST_RESOURCES = resourcesOf(INGEST_ACCESS);
type IngestWiring = HandlerWiring<(typeof INGEST_RESOURCES)[number]>;

/** Connects the ingest ports to DynamoDB and SQS. */
export function createIngestPorts(input: IngestWiring): IngestPorts {
  const { dynamo, resources } = input;
  const subscriptions = pick(createSubscriptionStore(dynamo, resources.subscriptionsTable), USES.subscriptions);
  const events = pick(createEventStore(dynamo, { tableName: resources.eventsTable, ttlDays: input.config.deliveryStateTtlDays }), USES.events);
  const { eventRetentionDays } = input.config;
  // The kept-event store's own calls on the bucket are among its declared accesses.
  const keptEvents = pick(
    createKeptEventStore(dynamo, { tableName: resources.deadLettersTable, retentionDays: eventRetentionDays, payloads: createPayloadBucket(input.s3, resources.payloadBucket) }),
    USES.keptEvents,
  );
  return {
    ...(eventRetentionDays === 0 ? {} : { keepEvents: keptEvents.keep }),
    findSubscriptionRouting: subscriptions.findRouting,
    findTenantSubscriptions: subscriptions.findTenantSubscriptions,
    findFanOuts: events.findFanOuts,
    recordFanOut: events.recordFanOut,
    findRecorded: events.findRecorded,
    recordAccepted: events.recordAccepted,
    recordGroupIntake: pick(createGroupStore(dynamo, resources.groupsTable), USES.groups).recordIntake,
    sendBatch: pick(createDeliveryQueue(input.sqs, resources.deliveryQueueUrl, input.logger), USES.deliveryQueue).sendBatch,
    now: () => new Date(),
    uniqueId: () => randomUUID(),
  };
}

/** Wraps the ingest ports, e.g. for the local stack's tests to make SQS refuse an event. */
export type IngestPortsWrapper = (ports: IngestPorts) => IngestPorts;

/** The ingest handler from a configuration and clients: shared by Lambda and the local stack. */
export function wireIngestHandler(input: IngestWiring, wrapPorts: IngestPortsWrapper = (ports) => ports): HttpHandler {
  const settings = pick(createSettingsStore(input.dynamo, input.resources.settingsTable, input.config.partitionCount), USES.settings);
  return createIngestHandler({
    ports: wrapPorts(createIngestPorts(input)),
    readSettings: async () => {
      const routing = await settings.getRouting();
      const { legacyEventIdsUntil } = input.config;
      return {
        partitionCount: routing.partitionCount,
        isPaused: routing.isPaused,
        maxEventsPerMessage: maxEventsPerMessage(input.config),
        ...(legacyEventIdsUntil === undefined ? {} : { legacyEventIdsUntil }),
      };
    },
    logger: input.logger,
  });
}

/** Lambda entry point. */
export const handler: HttpEntry = lambdaEntry('ingest', INGEST_RESOURCES, (wiring) => wireIngestHandler(wiring), HTTP_LOG_CONTEXT);

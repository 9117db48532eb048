/**
 * Operations function: `GET /v1/lag` and `GET /v1/dead-letters` (CONTRACT §2).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { ErrorCode, errorResponse } from '../core/api-error.js';
import { subscriptionIdSchema, toDetails } from '../core/event.js';
import { toLagRows, type GroupLag } from '../core/lag.js';
import { createEventStore, type DeadLetterRow } from '../adapters/event-store.js';
import { createGroupStore } from '../adapters/group-store.js';
import { createHttpHandler, type HttpHandler } from './http.js';
import { wiredOnFirstCall, wiringFromEnvironment, type HandlerWiring } from './wiring.js';

/** The resources the operations function uses, and is granted (read only). */
export const OPERATIONS_RESOURCES = ['groupsTable', 'eventsTable'] as const;

export interface OperationsHandlerDeps {
  readonly listActiveGroups: () => Promise<GroupLag[]>;
  readonly listDeadLetters: (subscriptionId: string) => Promise<DeadLetterRow[]>;
  readonly now: () => Date;
  readonly logger: Logger;
}

export function createOperationsHandler(deps: OperationsHandlerDeps): HttpHandler {
  return createHttpHandler(
    {
      'GET /v1/lag': async () => ({ statusCode: 200, body: { groups: toLagRows(await deps.listActiveGroups(), deps.now()) } }),
      'GET /v1/dead-letters': async (event) => {
        const parsed = subscriptionIdSchema.safeParse(event.queryStringParameters?.subscription_id ?? '');
        if (!parsed.success) {
          return errorResponse(400, ErrorCode.invalidRequest, 'Name the subscription: ?subscription_id=…', toDetails(parsed.error, ['subscription_id']));
        }
        return { statusCode: 200, body: { items: await deps.listDeadLetters(parsed.data) } };
      },
    },
    deps.logger,
  );
}

/** The operations handler from a configuration and clients: shared by Lambda and the local stack. */
export function wireOperationsHandler(input: Omit<HandlerWiring<(typeof OPERATIONS_RESOURCES)[number]>, 'sqs'>): HttpHandler {
  const events = createEventStore(input.dynamo, { tableName: input.resources.eventsTable, ttlDays: input.config.deliveryStateTtlDays });
  return createOperationsHandler({
    listActiveGroups: createGroupStore(input.dynamo, input.resources.groupsTable).listActiveGroups,
    listDeadLetters: events.listDeadLetters,
    now: () => new Date(),
    logger: input.logger,
  });
}

/** Lambda entry point. */
export const handler: HttpHandler = wiredOnFirstCall(() => wireOperationsHandler(wiringFromEnvironment('operations', OPERATIONS_RESOURCES)));

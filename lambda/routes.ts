/**
 * Which function serves which route of the HTTP API, in API Gateway's route-key form. The CDK
 * stack wires these routes to the functions and the local stack dispatches by them: one list.
 * `GET /openapi.json` (the API document) is served by ingest, beside `GET /health`.
 */
export const ROUTES = {
  ingest: ['GET /health', 'GET /openapi.json', 'POST /v1/events'],
  subscriptions: [
    'GET /v1/subscriptions',
    'PUT /v1/subscriptions/{subscription_id}',
    'GET /v1/subscriptions/{subscription_id}',
    // Its own route, so that deployed it is its own IAM grant: reading a secret is not reading a subscription.
    'GET /v1/subscriptions/{subscription_id}/secret',
    'POST /v1/subscriptions/{subscription_id}/secret/rotate',
    'POST /v1/subscriptions/{subscription_id}/pause',
    'POST /v1/subscriptions/{subscription_id}/resume',
    'POST /v1/subscriptions/{subscription_id}/ordering-change',
  ],
  operations: [
    'GET /v1/lag',
    'GET /v1/groups/{message_group_id}',
    'GET /v1/metrics',
    'GET /v1/dead-letters',
    'POST /v1/dead-letters/redrive',
    'POST /v1/dead-letters/import',
    'POST /v1/groups/{message_group_id}/skip',
    'GET /v1/routing',
    'PUT /v1/routing',
    'POST /v1/routing/pause',
    'POST /v1/routing/resume',
    'POST /v1/subscriptions/{subscription_id}/replay',
    'DELETE /v1/subscriptions/{subscription_id}/replay',
  ],
} as const;

/** The functions behind the HTTP API. */
export type ApiFunction = keyof typeof ROUTES;

/** A route of the HTTP API, e.g. `GET /v1/lag`. */
export type RouteKey = (typeof ROUTES)[ApiFunction][number];

/** Bundling entry point of each function, relative to the repository root. */
export const HANDLER_ENTRIES = {
  ingest: 'lambda/handlers/ingest.ts',
  subscriptions: 'lambda/handlers/subscriptions.ts',
  consumer: 'lambda/handlers/consumer.ts',
  operations: 'lambda/handlers/operations.ts',
  /** Scheduled every minute: publishes the lag metrics that the lag alarms watch. */
  lagMetrics: 'lambda/handlers/lag-metrics.ts',
} as const;

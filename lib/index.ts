/**
 * The ordered-webhooks construct library: {@link OrderedWebhooks} and what its members expose.
 * The package's one entry point (`exports` of package.json); this repository's own stack
 * (lib/ordered-webhooks-stack.ts) is one user of it and is not published.
 */
export { OrderedWebhooks, OrderedWebhooksPropsError, PRODUCER_ROUTES, SECRET_READ_ROUTES, SUBSCRIPTION_READ_ROUTES, type DeployedSetting, type OrderedWebhooksProps } from './ordered-webhooks.js';
export { WebhookApi, type RouteKey } from './api.js';
export { DeliveryQueues, type QueueName } from './delivery-queues.js';
export { StateTables, type TableName } from './state-tables.js';
export { DeliveryAlarms } from './alarms.js';
export { PayloadBucket } from './payload-bucket.js';
export { HandlerFunction, type HandlerName } from './handler-function.js';
export { LagMetricsJob } from './lag-metrics-job.js';
export { OperationsDashboard } from './operations-dashboard.js';
export { LogLevel, type Config } from '../lambda/config.js';
export { OnExhausted } from '../lambda/core/retry-policy.js';

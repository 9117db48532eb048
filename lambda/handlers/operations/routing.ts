/**
 * The routing (docs/api.md#routes): `GET /v1/routing`, pause and resume of ingest, and the
 * drain-and-switch `PUT /v1/routing`.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import { ErrorCode } from '../../core/api-error.js';
import { checkSwitch, toRoutingView, type PendingWork, type RoutingSettings, type RoutingView, type SwitchRefusal } from '../../core/routing-settings.js';
import { parseBody, type Route } from '../http.js';
import { errorResponse, type Answer } from '../responses.js';

/** What the routing switch reads and writes. */
export interface RoutingPorts {
  readonly get: () => Promise<RoutingSettings>;
  readonly setPaused: (isPaused: boolean, at: string) => Promise<RoutingSettings>;
  readonly switchRouting: (input: { readonly expectedVersion: number; readonly partitionCount: number | undefined; readonly at: string }) => Promise<boolean>;
  readonly pendingWork: () => Promise<PendingWork>;
}

export interface RoutingRoutesDeps {
  readonly routing: RoutingPorts;
  /** How long after a pause a switch is refused (SWITCH_WAIT_SECONDS when deployed). */
  readonly pauseGraceSeconds: number;
  readonly now: () => Date;
  readonly logger: Logger;
}

type RoutingRouteKey = 'GET /v1/routing' | 'POST /v1/routing/pause' | 'POST /v1/routing/resume' | 'PUT /v1/routing';

/** The body of `PUT /v1/routing`: the partition count to switch to (null: one group per key), at the version read. */
export const switchBodySchema = z.strictObject({
  partition_count: z.number().int().min(1).max(1_000_000).nullable(),
  expected_version: z.number().int().nonnegative(),
});

const switchMessages = (pauseGraceSeconds: number): Readonly<Record<SwitchRefusal, string>> => ({
  not_paused: 'Pause ingest first (POST /v1/routing/pause).',
  pause_too_recent: `Ingest was paused less than ${pauseGraceSeconds} s ago: a request may still be enqueueing under the old routing, or SQS's counts of the queue may not have settled yet.`,
  queue_not_empty: 'Events are still pending; wait until the queue and the lag view are empty.',
  version_conflict: 'The routing changed since you read it; read it again.',
});

/** The routing routes, by their route keys. */
export function createRoutingRoutes(deps: RoutingRoutesDeps): Readonly<Record<RoutingRouteKey, Route>> {
  const messages = switchMessages(deps.pauseGraceSeconds);
  const routingView = async (routing?: RoutingSettings): Answer<RoutingView> => ({
    statusCode: 200,
    body: toRoutingView(routing ?? (await deps.routing.get()), await deps.routing.pendingWork()),
  });
  return {
    'GET /v1/routing': async () => routingView(),
    'POST /v1/routing/pause': async () => {
      const routing = await deps.routing.setPaused(true, deps.now().toISOString());
      deps.logger.warn('ingest paused', { version: routing.version });
      return routingView(routing);
    },
    'POST /v1/routing/resume': async () => {
      const routing = await deps.routing.setPaused(false, deps.now().toISOString());
      deps.logger.warn('ingest resumed', { version: routing.version });
      return routingView(routing);
    },
    'PUT /v1/routing': async (event): Answer<RoutingView> => {
      const body = parseBody(event, switchBodySchema);
      if (!body.ok) return errorResponse(body.refusal);
      const [current, pending] = await Promise.all([deps.routing.get(), deps.routing.pendingWork()]);
      const now = deps.now();
      const refusal = checkSwitch({ current, expectedVersion: body.value.expected_version, pending, now, pauseGraceSeconds: deps.pauseGraceSeconds });
      if (refusal !== undefined) return errorResponse({ code: refusal, message: messages[refusal] });
      const partitionCount = body.value.partition_count ?? undefined;
      const isSwitched = await deps.routing.switchRouting({ expectedVersion: current.version, partitionCount, at: now.toISOString() });
      if (!isSwitched) return errorResponse({ code: ErrorCode.versionConflict, message: messages.version_conflict });
      deps.logger.warn('routing switched', { from: current.partitionCount ?? null, to: partitionCount ?? null, version: current.version + 1 });
      return routingView();
    },
  };
}

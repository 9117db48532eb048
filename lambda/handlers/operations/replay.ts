/**
 * `POST /v1/subscriptions/{subscription_id}/replay`: start a replay of a window of a subscription's
 * events, or make the next step of the one under way (see `core/replay.ts`).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { ErrorCode } from '../../core/api-error.js';
import type { ReplayAnswer, ReplayCancelAnswer } from '../../core/answers.js';
import { checkOrderingChangeHold } from '../../core/ordering-change.js';
import type { FindSubscription } from './dead-letters.js';
import { checkReplay, parseReplayWindow, replayBodySchema, type ReplayOutcome, type ReplayState, type ReplayStateStore, type ReplayWindow } from '../../core/replay.js';
import type { KeptEventStore } from '../../core/kept-event.js';
import { parseBody, type Route } from '../http.js';
import { errorResponse, toRedriveRefusalResponse, type ApiResponse, type Answer, type ErrorBody } from '../responses.js';
import type { RoutingPorts } from './routing.js';

export interface ReplayRoutesDeps {
  readonly replay: (subscriptionId: string, window: ReplayWindow & { readonly isUntilGiven: boolean }) => Promise<ReplayOutcome>;
  readonly cancelReplay: ReplayStateStore['cancel'];
  /** When the subscription's newest kept event was accepted: where a window with no `until` may end (see `parseReplayWindow`). */
  readonly newestAcceptedAt: KeptEventStore['newestAcceptedAt'];
  /** Days events are kept (`EVENT_RETENTION_DAYS`): a window older is refused. */
  readonly eventRetentionDays: number;
  /** A replay routes by the routing in force, so it reads whether a switch may be under way. */
  readonly routing: Pick<RoutingPorts, 'get'>;
  /** The subscription's change of ordering under way holds its replay (see `checkOrderingChangeHold`). */
  readonly findSubscription: FindSubscription;
  readonly now: () => Date;
  readonly logger: Logger;
}

/** The answer's body of a replay as it stands. */
export function toReplayAnswer(subscriptionId: string, state: ReplayState, isDone: boolean): ReplayAnswer {
  return {
    subscription_id: subscriptionId,
    since: state.since,
    until: state.until,
    started_at: state.startedAt,
    reached: state.reached ?? null,
    replayed: state.replayed,
    dead_lettered: state.deadLettered,
    not_delivered: state.notDelivered,
    is_done: isDone,
  };
}

function toReplayResponse(subscriptionId: string, outcome: ReplayOutcome): ApiResponse<ReplayAnswer | ErrorBody> {
  switch (outcome.kind) {
    case 'not_found':
      return errorResponse({ code: ErrorCode.notFound, message: `No subscription ${subscriptionId}.` });
    case 'other_window': {
      const { state } = outcome;
      return errorResponse({
        code: ErrorCode.replayInProgress,
        message: `A replay of ${state.since} to ${state.until}, started ${state.startedAt}, is under way (${state.replayed} events replayed so far); repeat its window to follow it, or wait until it is done.`,
      });
    }
    case 'busy':
      return { statusCode: 200, body: toReplayAnswer(subscriptionId, outcome.state, false) };
    case 'stepped':
      if (outcome.refused.length === 0) return { statusCode: 200, body: toReplayAnswer(subscriptionId, outcome.state, outcome.isDone) };
      // As a redrive's: repeating cannot send them, so this is no work left to repeat.
      return errorResponse({
        code: ErrorCode.internalError,
        message: `The queue refused ${outcome.refused.length} replayed event${outcome.refused.length === 1 ? '' : 's'} whatever the retry; the replay stops before them (${outcome.state.replayed} replayed).`,
        details: outcome.refused.map((event) => ({ path: 'event_id', message: `${event.event_id}: refused by SQS (${event.code})` })),
      });
  }
}

/** The replay route, by its route key. */
export function createReplayRoutes(deps: ReplayRoutesDeps): Readonly<Record<'POST /v1/subscriptions/{subscription_id}/replay' | 'DELETE /v1/subscriptions/{subscription_id}/replay', Route>> {
  return {
    'DELETE /v1/subscriptions/{subscription_id}/replay': async (event): Answer<ReplayCancelAnswer> => {
      const subscriptionId = event.pathParameters?.subscription_id ?? '';
      const cancelled = await deps.cancelReplay(subscriptionId, deps.now().toISOString());
      if (cancelled === undefined) return errorResponse({ code: ErrorCode.notFound, message: `No subscription ${subscriptionId}.` });
      if (!cancelled.isCancelled) return errorResponse({ code: ErrorCode.notFound, message: `No replay of subscription ${subscriptionId} is under way.` });
      const { state } = cancelled;
      deps.logger.warn('replay cancelled', { subscription_id: subscriptionId, since: state.since, until: state.until, started_at: state.startedAt, replayed: state.replayed });
      return { statusCode: 200, body: { ...toReplayAnswer(subscriptionId, state, false), cancelled_at: state.cancelledAt ?? deps.now().toISOString() } };
    },
    'POST /v1/subscriptions/{subscription_id}/replay': async (event): Answer<ReplayAnswer> => {
      const subscriptionId = event.pathParameters?.subscription_id ?? '';
      const body = parseBody(event, replayBodySchema);
      if (!body.ok) return errorResponse(body.refusal);
      const isUntilGiven = body.value.until !== undefined;
      const newest = isUntilGiven || deps.eventRetentionDays === 0 ? undefined : await deps.newestAcceptedAt(subscriptionId);
      const window = parseReplayWindow(body.value, deps.now(), deps.eventRetentionDays, newest);
      if (!window.ok) return errorResponse(window.refusal);
      const refusal = checkReplay(await deps.routing.get()) ?? checkOrderingChangeHold((await deps.findSubscription(subscriptionId))?.orderingChange, deps.now(), 'replay');
      if (refusal !== undefined) return toRedriveRefusalResponse(refusal);
      const outcome = await deps.replay(subscriptionId, { ...window.value, isUntilGiven });
      if (outcome.kind === 'stepped' || outcome.kind === 'busy') {
        const { state } = outcome;
        deps.logger.info('replay step done', { subscription_id: subscriptionId, since: state.since, until: state.until, started_at: state.startedAt, replayed: state.replayed, is_done: outcome.kind === 'stepped' && outcome.isDone, stepped_elsewhere: outcome.kind === 'busy' });
      }
      return toReplayResponse(subscriptionId, outcome);
    },
  };
}

/**
 * The dead letters (docs/api.md#routes): `GET /v1/dead-letters`, one bounded step of a subscription's
 * redrive, and one step of the import of SQS's backstop queue into the store of dead letters.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import { ErrorCode } from '../../core/api-error.js';
import type { DeadLettersAnswerOfTexts, ImportAnswer, RedriveAnswer } from '../../core/answers.js';
import type { BackstopImportStep } from '../../core/backstop-import.js';
import { parseDeadLettersQuery, toDeadLettersCursor, toPayloadRows, type DeadLetterPage, type DeadLetterRow } from '../../core/dead-letter.js';
import { subscriptionIdSchema } from '../../core/event.js';
import { checkOrderingChangeHold, type OrderingChangeMark } from '../../core/ordering-change.js';
import { checkRedrive, type RedriveStep } from '../../core/redrive.js';
import { parseBody, type Route } from '../http.js';
import { errorResponse, toRedriveRefusalResponse, toRedriveStepResponse, type Answer } from '../responses.js';
import type { RoutingPorts } from './routing.js';

/** What a redrive or a replay reads of a subscription: whether it exists, and the change of its ordering under way. */
export type FindSubscription = (subscriptionId: string) => Promise<{ readonly orderingChange: OrderingChangeMark | undefined } | undefined>;

export interface DeadLetterRoutesDeps {
  /** A page of a subscription's dead letters, in position order, after `after`. */
  readonly listDeadLetters: (input: { readonly subscriptionId: string; readonly after: string | undefined; readonly limit: number }) => Promise<{ rows: DeadLetterRow[]; nextAfter: string | undefined }>;
  /** The same page read whole, events included, for `include=payload`. */
  readonly readDeadLetters: (input: { readonly subscriptionId: string; readonly after: string | undefined; readonly limit: number }) => Promise<DeadLetterPage>;
  /** The subscription, if it exists: actions on an unknown one answer 404, and a redrive waits for a change of its ordering. */
  readonly findSubscription: FindSubscription;
  readonly redrive: (subscriptionId: string) => Promise<RedriveStep>;
  /** One step of the import of the backstop queue into the store of dead letters. */
  readonly importBackstop: () => Promise<BackstopImportStep>;
  /** A redrive routes by the routing in force, so it reads whether a switch may be under way. */
  readonly routing: Pick<RoutingPorts, 'get'>;
  readonly now: () => Date;
  readonly logger: Logger;
}

type DeadLetterRouteKey = 'GET /v1/dead-letters' | 'POST /v1/dead-letters/redrive' | 'POST /v1/dead-letters/import';

/** The body of `POST /v1/dead-letters/redrive`. */
export const redriveBodySchema = z.strictObject({ subscription_id: subscriptionIdSchema });

/** The dead-letter routes, by their route keys. */
export function createDeadLetterRoutes(deps: DeadLetterRoutesDeps): Readonly<Record<DeadLetterRouteKey, Route>> {
  return {
    'GET /v1/dead-letters': async (event): Answer<DeadLettersAnswerOfTexts> => {
      const query = parseDeadLettersQuery(event.queryStringParameters);
      if (!query.ok) return errorResponse(query.refusal);
      const { subscriptionId, after, limit, withPayloads } = query.value;
      // Payloads only on request: the list alone reads no event (nor any object of the payload bucket).
      const { rows, nextAfter } = withPayloads
        ? await deps.readDeadLetters({ subscriptionId, after, limit }).then((page) => toPayloadRows(page.letters, page.nextAfter))
        : await deps.listDeadLetters({ subscriptionId, after, limit });
      return { statusCode: 200, body: { items: rows, next_cursor: toDeadLettersCursor(subscriptionId, nextAfter) } };
    },
    'POST /v1/dead-letters/redrive': async (event): Answer<RedriveAnswer> => {
      const body = parseBody(event, redriveBodySchema);
      if (!body.ok) return errorResponse(body.refusal);
      const subscription = await deps.findSubscription(body.value.subscription_id);
      if (subscription === undefined) return errorResponse({ code: ErrorCode.notFound, message: `No subscription ${body.value.subscription_id}.` });
      const refusal = checkRedrive(await deps.routing.get()) ?? checkOrderingChangeHold(subscription.orderingChange, deps.now(), 'redrive');
      if (refusal !== undefined) return toRedriveRefusalResponse(refusal);
      const step = await deps.redrive(body.value.subscription_id);
      // One line per event, so that an event's lines are found by its event_id alone.
      for (const letter of step.redriven) deps.logger.info('dead letter redriven', { subscription_id: body.value.subscription_id, event_id: letter.event_id, sequence: letter.sequence });
      deps.logger.info('redrive step done', { subscription_id: body.value.subscription_id, redriven: step.redriven.length, remaining: step.remaining, isDone: step.isDone });
      return toRedriveStepResponse(body.value.subscription_id, step);
    },
    'POST /v1/dead-letters/import': async (): Answer<ImportAnswer> => {
      const step = await deps.importBackstop();
      for (const letter of step.imported) {
        deps.logger.warn('backstop message imported as a dead letter', { subscription_id: letter.subscription_id, event_id: letter.event_id, sequence: letter.sequence });
      }
      if (step.unreadable > 0) deps.logger.warn('backstop messages left unread: they hold no event', { unreadable: step.unreadable });
      return { statusCode: 200, body: { imported: step.imported, unreadable: step.unreadable, is_done: step.isDone } };
    },
  };
}

/**
 * The error vocabulary of the HTTP API (docs/api.md#errors): every code is listed here once, and every
 * refusal the core decides is a `Refusal` value; its status code is the handler layer's choice.
 */

import * as z from 'zod';
import { SwitchRefusal } from './routing-settings.js';
import { schemaOf } from './schema-match.js';
import { SkipRefusal } from './skip.js';

export const ErrorCode = {
  invalidJson: 'invalid_json',
  invalidRequest: 'invalid_request',
  payloadTooLarge: 'payload_too_large',
  unknownSubscription: 'unknown_subscription',
  /** An event id its tenant and destination accepted before with another type or payload: nothing of the request was enqueued. */
  eventIdConflict: 'event_id_conflict',
  endpointNotAllowed: 'endpoint_not_allowed',
  /** A subscription id another tenant already holds: nothing was changed. */
  tenantMismatch: 'tenant_mismatch',
  /** A subscription's `ordering` changed while its events are pending: nothing was changed. */
  orderingChangePending: 'ordering_change_pending',
  /** A replay of another window is under way for the subscription: nothing was started. */
  replayInProgress: 'replay_in_progress',
  enqueueFailed: 'enqueue_failed',
  ingestPaused: 'ingest_paused',
  notFound: 'not_found',
  methodNotAllowed: 'method_not_allowed',
  internalError: 'internal_error',
  /** An operator action refused for the state it is in. */
  ...SkipRefusal,
  ...SwitchRefusal,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** One precise problem, located by a path such as `events[3].event_id`. */
export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

/** {@link ErrorDetail} as the API document shows it. */
export const errorDetailSchema = schemaOf<ErrorDetail>()(z.strictObject({ path: z.string(), message: z.string() }));

/**
 * A refusal the core decided, as a value: the contract's code, a sentence for a human, and the
 * precise problems. The core knows no HTTP: the handler layer alone chooses its status code.
 */
export interface Refusal {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: readonly ErrorDetail[];
}

/** Renders a validation path (`['events', 3, 'event_id']`) the way the contract writes it (`events[3].event_id`). */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    const name = String(segment);
    return text === '' ? name : `${text}.${name}`;
  }, '');
}

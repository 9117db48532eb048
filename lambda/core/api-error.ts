/**
 * The error vocabulary of the HTTP API (CONTRACT §2): every refusal has this shape, and every
 * code is listed here once.
 */

import { SwitchRefusal } from './routing-settings.js';
import { SkipRefusal } from './skip.js';

export const ErrorCode = {
  invalidJson: 'invalid_json',
  invalidRequest: 'invalid_request',
  payloadTooLarge: 'payload_too_large',
  unknownSubscription: 'unknown_subscription',
  endpointNotAllowed: 'endpoint_not_allowed',
  enqueueFailed: 'enqueue_failed',
  ingestPaused: 'ingest_paused',
  notFound: 'not_found',
  methodNotAllowed: 'method_not_allowed',
  internalError: 'internal_error',
  /** 409: an operator action refused for the state it is in. */
  ...SkipRefusal,
  ...SwitchRefusal,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** One precise problem, located by a path such as `events[3].event_id`. */
export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

export interface ErrorBody {
  readonly error: {
    readonly code: ErrorCode;
    readonly message: string;
    readonly details?: readonly ErrorDetail[];
  };
}

/** A response of the HTTP API, before it is serialised by API Gateway's adapter. */
export interface ApiResponse {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Builds a refusal in the contract's shape. */
export function errorResponse(
  statusCode: number,
  code: ErrorCode,
  message: string,
  details?: readonly ErrorDetail[],
): ApiResponse {
  const body: ErrorBody = {
    error: details === undefined || details.length === 0 ? { code, message } : { code, message, details },
  };
  return { statusCode, body };
}

/** Renders a validation path (`['events', 3, 'event_id']`) the way the contract writes it (`events[3].event_id`). */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    const name = String(segment);
    return text === '' ? name : `${text}.${name}`;
  }, '');
}

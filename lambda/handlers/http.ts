/**
 * The HTTP edge shared by the API handlers: API Gateway HTTP API (payload v2) in, contract-shaped
 * JSON out, and the one top-level boundary that turns a fault into a 500.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type * as z from 'zod';
import { ErrorCode } from '../core/api-error.js';
import { parseWith, readJsonBody, type Parsed } from '../core/event.js';
import { stringifyJson } from '../core/raw-json.js';
import type { LambdaContextOptions, LambdaHandler } from './logger.js';
import { errorResponse, type ApiResponse } from './responses.js';

export type HttpHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** An HTTP function's Lambda entry point: an HttpHandler given Lambda's context. */
export type HttpEntry = LambdaHandler<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>;

/**
 * How an HTTP function's entry logs: each line of a request names API Gateway's request id as
 * `correlation_id`, the `apigw-requestid` header its caller got back.
 */
export const HTTP_LOG_CONTEXT: LambdaContextOptions<APIGatewayProxyEventV2> = {
  correlationIdOf: (event) => event.requestContext.requestId,
};

/** A route's implementation: the event in, a contract response out. */
export type Route = (event: APIGatewayProxyEventV2) => Promise<ApiResponse>;

export function toHttpResult(response: ApiResponse): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: response.statusCode,
    headers: { 'content-type': 'application/json', ...response.headers },
    // An answer may hold a payload's text as posted (`RawJson`), which JSON.stringify would quote.
    body: stringifyJson(response.body),
  };
}

/**
 * Dispatches on API Gateway's `routeKey` and is the boundary for faults: an unexpected error is
 * logged (with the request id, never the body) and answered 500 in the contract's shape.
 */
export function createHttpHandler(routes: Readonly<Record<string, Route>>, logger: Logger): HttpHandler {
  return async (event) => {
    const route = routes[event.routeKey];
    if (route === undefined) {
      return toHttpResult(errorResponse({ code: ErrorCode.notFound, message: `No route ${event.routeKey}.` }));
    }
    try {
      return toHttpResult(await route(event));
    } catch (error) {
      logger.error('request failed', { routeKey: event.routeKey, requestId: event.requestContext.requestId, error });
      return toHttpResult(
        errorResponse({ code: ErrorCode.internalError, message: 'The request could not be completed; retrying it is safe.' }),
      );
    }
  };
}

/** Reads and validates a request's JSON body; an absent body reads as `{}` where `isOptional`. */
export function parseBody<T>(
  event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>,
  schema: z.ZodType<T>,
  options: { readonly isOptional?: boolean } = {},
): Parsed<T> {
  const isAbsent = event.body === undefined || event.body === '';
  const json = options.isOptional === true && isAbsent ? ({ ok: true, value: {} } as const) : readJsonBody(event.body, event.isBase64Encoded);
  return json.ok ? parseWith(schema, json.value, 'The request body is not valid.') : json;
}

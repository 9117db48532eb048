/**
 * Structured logs (Powertools Logger): ids and reasons only, never a payload, a webhook body, a
 * secret or a signature. The ids are keyed as the API names them (`event_id`, `subscription_id`,
 * `message_group_id`, `sequence`), so that a line is found by what `GET /v1/dead-letters` or a
 * receiver shows.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import type { LogLevel } from '../config.js';

/** A function's logger; `serviceName` is its entry in SERVICE_NAMES (config.ts). */
export function createLogger(serviceName: string, logLevel: LogLevel): Logger {
  return new Logger({ serviceName, logLevel });
}

/** A Lambda entry point: the event and Lambda's context in, the function's answer out. */
export type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;

export interface LambdaContextOptions<E> {
  /**
   * The id the caller knows the invocation by (API Gateway's request id, the `apigw-requestid`
   * header of the answer), put on each of its lines as `correlation_id`.
   */
  readonly correlationIdOf?: (event: E) => string | undefined;
}

/**
 * Puts Lambda's context (`cold_start`, `function_request_id`, `function_name`, …) on every line an
 * invocation logs, and drops the invocation's own keys when it ends, however it ends, so that no
 * key outlives its invocation. It does what Powertools' `injectLambdaContext({ resetKeys: true })`
 * does, for a plain function: the decorator takes only class methods, and the middleware needs
 * Middy, a dependency for these few lines. In an execution environment that runs invocations
 * concurrently, Powertools keeps the context and keys per invocation itself.
 */
export function withLambdaContext<E, R>(logger: Logger, handler: LambdaHandler<E, R>, options: LambdaContextOptions<E> = {}): LambdaHandler<E, R> {
  return async (event, context) => {
    // POWERTOOLS_LOGGER_SAMPLE_RATE, when set, draws DEBUG for each invocation anew.
    logger.refreshSampleRateCalculation();
    logger.addContext(context);
    const correlationId = options.correlationIdOf?.(event);
    if (correlationId !== undefined) logger.setCorrelationId(correlationId);
    try {
      return await handler(event, context);
    } finally {
      logger.resetKeys();
    }
  };
}

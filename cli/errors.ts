/**
 * The expected ways a command fails. Each carries its exit code; the one boundary in `run.ts`
 * prints the message (no stack trace) and exits with it. Anything else is a fault and is shown
 * with its stack.
 */
import { ExitCode } from './exit-codes.js';

/** An expected failure, reported as its message and exit code. */
export abstract class CliError extends Error {
  abstract readonly exitCode: ExitCode;
  /** A snake_case code for `--json` errors: the API's own code for an {@link ApiError}. */
  abstract readonly code: string;
}

/** Bad or missing arguments: nothing was sent. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
  readonly exitCode = ExitCode.usage;
  readonly code = 'usage_error';
}

/** One entry of the API's error `details`. */
export interface ApiErrorDetail {
  readonly path: string;
  readonly message: string;
}

/** A name that the API does not know (it answered 404 for it): nothing was done. */
export class UnknownSubscriptionError extends CliError {
  override readonly name = 'UnknownSubscriptionError';
  readonly exitCode = ExitCode.failed;
  readonly code = 'unknown_subscription';

  constructor(readonly subscriptionId: string) {
    super(`There is no subscription named ${subscriptionId}.`);
  }
}

/** Statuses with which the API refuses an operation because of the state it is in. */
const REFUSAL_STATUSES: ReadonlySet<number> = new Set([409, 422]);

/** The API answered with an error status; `code` and `message` are the contract's error body. */
export class ApiError extends CliError {
  override readonly name = 'ApiError';
  readonly exitCode: ExitCode;

  constructor(
    /** `POST /v1/routing/pause`, as sent. */
    readonly request: string,
    readonly status: number,
    readonly code: string,
    readonly apiMessage: string,
    readonly details: readonly ApiErrorDetail[] = [],
    /** The answer's `Retry-After` in seconds, when it had one. */
    readonly retryAfterSeconds?: number,
  ) {
    const lines = details.map((detail) => `\n  ${detail.path}: ${detail.message}`).join('');
    super(`${request} answered ${status} ${code}: ${apiMessage}${lines}`);
    this.exitCode = REFUSAL_STATUSES.has(status) ? ExitCode.refused : ExitCode.failed;
  }

  /** Whether the API refused because of the state it is in (409, 422), rather than failed. */
  get isRefusal(): boolean {
    return this.exitCode === ExitCode.refused;
  }
}

/** No answer: connection refused, DNS, TLS, or no response within the request timeout. */
export class UnreachableError extends CliError {
  override readonly name = 'UnreachableError';
  readonly exitCode = ExitCode.failed;
  readonly code = 'unreachable';
}

/** An answer that does not have the shape the contract gives it. */
export class UnexpectedAnswerError extends CliError {
  override readonly name = 'UnexpectedAnswerError';
  readonly exitCode = ExitCode.failed;
  readonly code = 'unexpected_answer';
}

/** Signing was asked for and no AWS credentials or region could be found. */
export class SigningError extends CliError {
  override readonly name = 'SigningError';
  readonly exitCode = ExitCode.failed;
  readonly code = 'signing_failed';
}

/** A wait ran past its `--timeout`. */
export class TimedOutError extends CliError {
  override readonly name = 'TimedOutError';
  readonly exitCode = ExitCode.timedOut;
  readonly code = 'timed_out';
}

/** The operator interrupted a wait (Ctrl-C). */
export class InterruptedError extends CliError {
  override readonly name = 'InterruptedError';
  readonly exitCode = ExitCode.interrupted;
  readonly code = 'interrupted';
}

/**
 * Whether a failed call is worth repeating in a poll loop: no answer, throttling, or a server
 * error. A refusal or a bad request will not change by asking again. The one place this is decided.
 */
export function isTransient(error: unknown): error is UnreachableError | ApiError {
  if (error instanceof UnreachableError) return true;
  return error instanceof ApiError && (error.status === 429 || error.status >= 500);
}

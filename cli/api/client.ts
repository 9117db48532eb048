/**
 * The HTTP API as the CLI uses it: JSON in and out, answers validated against their schema,
 * error answers turned into {@link ApiError} with the contract's code and message, and every
 * request signed first when a signer is given.
 */
import type * as z from 'zod';
import { ApiError, InterruptedError, UnexpectedAnswerError, UnreachableError } from '../errors.js';
import { formatMs } from '../duration.js';
import { errorBodySchema } from './schemas.js';

/** How long one request may take before the API counts as unreachable. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** One call of the API, relative to its base URL. */
export interface ApiRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Starts with `/`; variable segments go through {@link pathSegment}. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
}

/** A request as it goes on the wire: what a signer signs. */
export interface OutgoingRequest {
  readonly method: string;
  /** Path and query already encoded, as sent. */
  readonly url: URL;
  /** Decoded query parameters, for signers that canonicalise them. */
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

/** Returns the headers to send, the request's own included. */
export type RequestSigner = (request: OutgoingRequest) => Promise<Record<string, string>>;

export interface ApiClientOptions {
  /** The API's base URL; may carry a stage path (`https://…/prod`). */
  readonly baseUrl: URL;
  readonly signer?: RequestSigner;
  /** Aborts requests in flight when the operator interrupts. */
  readonly signal?: AbortSignal;
  /** Default {@link REQUEST_TIMEOUT_MS}. */
  readonly requestTimeoutMs?: number;
}

export interface ApiClient {
  readonly baseUrl: URL;
  /** Sends `request`; resolves with the 2xx answer parsed by `schema`, or throws a `CliError`. */
  readonly send: <T>(request: ApiRequest, schema: z.ZodType<T>) => Promise<T>;
}

/** RFC 3986 percent-encoding, as SigV4 canonicalises it, so that what is signed is what is sent. */
export function pathSegment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const basePath = options.baseUrl.pathname.replace(/\/+$/, '');

  const send = async <T>(request: ApiRequest, schema: z.ZodType<T>): Promise<T> => {
    const query = request.query ?? {};
    const url = new URL(options.baseUrl);
    url.pathname = `${basePath}${request.path}`;
    url.search = Object.entries(query)
      .map(([name, value]) => `${pathSegment(name)}=${pathSegment(value)}`)
      .join('&');
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const headers: Record<string, string> = { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const outgoing: OutgoingRequest = { method: request.method, url, query, headers, body };
    const signedHeaders = options.signer === undefined ? headers : await options.signer(outgoing);
    const label = `${request.method} ${request.path}`;

    const timeout = AbortSignal.timeout(requestTimeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: request.method,
        // fetch sets `host` itself, to the same value that was signed.
        headers: Object.fromEntries(Object.entries(signedHeaders).filter(([name]) => name.toLowerCase() !== 'host')),
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]),
      });
      text = await response.text();
    } catch (error) {
      if (options.signal?.aborted === true) throw new InterruptedError(`Interrupted during ${label}.`);
      if (timeout.aborted) throw new UnreachableError(`${label}: ${url.origin} did not answer within ${formatMs(requestTimeoutMs)}.`);
      throw new UnreachableError(`${label}: cannot reach ${url.origin} (${describeNetworkError(error)}).`);
    }

    if (response.status < 200 || response.status > 299) throw toApiError(label, response.status, text, retryAfterSecondsOf(response.headers.get('retry-after')));
    const parsed = parseJson(text);
    const checked = parsed.isJson ? schema.safeParse(parsed.value) : undefined;
    if (checked === undefined || !checked.success) {
      throw new UnexpectedAnswerError(`${label} answered ${response.status} with a body this CLI does not understand: ${text.slice(0, 300) || '(empty)'}`);
    }
    return checked.data;
  };

  return { baseUrl: options.baseUrl, send };
}

function parseJson(text: string): { readonly isJson: true; readonly value: unknown } | { readonly isJson: false } {
  try {
    return { isJson: true, value: JSON.parse(text) };
  } catch {
    return { isJson: false };
  }
}

/** The contract's error body when there is one; otherwise what API Gateway or a proxy said. */
function toApiError(label: string, status: number, text: string, retryAfterSeconds: number | undefined): ApiError {
  const parsed = parseJson(text);
  if (parsed.isJson) {
    const contract = errorBodySchema.safeParse(parsed.value);
    if (contract.success) return new ApiError(label, status, contract.data.error.code, contract.data.error.message, contract.data.error.details, retryAfterSeconds);
  }
  // API Gateway's own refusals (IAM, throttling) read {"message": "..."} or {"Message": "..."}.
  const gatewayMessage = parsed.isJson && typeof parsed.value === 'object' && parsed.value !== null ? messageOf(parsed.value) : undefined;
  return new ApiError(label, status, `http_${status}`, gatewayMessage ?? (text.trim().slice(0, 300) || 'no body'), [], retryAfterSeconds);
}

/** `Retry-After` as delay-seconds; an HTTP-date or anything else is left out (the API sends seconds). */
function retryAfterSecondsOf(value: string | null): number | undefined {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

function messageOf(value: object): string | undefined {
  for (const [name, field] of Object.entries(value)) {
    if ((name === 'message' || name === 'Message') && typeof field === 'string') return field;
  }
  return undefined;
}

/** `ECONNREFUSED`, `ENOTFOUND`, … from undici's `fetch failed` and its cause. */
function describeNetworkError(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) {
    const code = 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
    return code === undefined ? cause.message : `${code}: ${cause.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

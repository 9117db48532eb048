/**
 * The console's client of the public HTTP API, on the page's own origin (the local stack, or the
 * CLI's `console` proxy, which signs). Answers are typed by the schemas the API document is
 * generated from; an error answer becomes an {@link ApiFailure} carrying the contract's code and
 * message, which the page shows as they are.
 */
import type { ErrorDetail } from '../../lambda/core/api-error.js';

/** An answer of the API that is not a success: the contract's `{"error": {code, message, details}}`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'ApiFailure';
  }

  /** One line for a person: `409 head_changed: The group's head is another event now.` */
  describe(): string {
    const details = this.details.map((detail) => `${detail.path}: ${detail.message}`).join('; ');
    return `${this.status} ${this.code}: ${this.message}${details === '' ? '' : ` (${details})`}`;
  }
}

type Query = Readonly<Record<string, string | undefined>>;

function urlOf(path: string, query: Query = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, value);
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}

async function send<T>(method: string, path: string, query: Query, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(urlOf(path, query), {
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiFailure(0, 'unreachable', `The API at ${location.origin} did not answer ${method} ${path}.`);
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  const error = typeof parsed === 'object' && parsed !== null && 'error' in parsed ? (parsed as { error: { code?: unknown; message?: unknown; details?: unknown } }).error : undefined;
  const code = typeof error?.code === 'string' ? error.code : `http_${response.status}`;
  const message = typeof error?.message === 'string' ? error.message : text.slice(0, 300) || response.statusText;
  const details = Array.isArray(error?.details) ? (error.details as ErrorDetail[]) : [];
  throw new ApiFailure(response.status, code, message, details);
}

export const api = {
  get: <T>(path: string, query: Query = {}): Promise<T> => send<T>('GET', path, query),
  post: <T>(path: string, body: unknown = {}): Promise<T> => send<T>('POST', path, {}, body),
};

/** A path segment, encoded. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

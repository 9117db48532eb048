/**
 * The local HTTP API as a producer uses it: plain fetch, JSON in and out.
 */
import { randomUUID } from 'node:crypto';

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/** Sends one request; `body` is sent as JSON unless it is already a string or bytes. */
export async function call(baseUrl: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const payload = body === undefined || typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: payload === undefined ? {} : { 'content-type': 'application/json' },
    ...(payload === undefined ? {} : { body: payload }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the test sees the text.
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** A prefix no other test uses, for keys, subscriptions and event ids. */
export function uniquePrefix(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export interface TestEvent {
  readonly event_id: string;
  readonly tenant_id: string;
  readonly subscription_id: string;
  readonly type: string;
  readonly payload: Record<string, unknown>;
  readonly resource_id?: string;
}

/** An event of a subscription; its payload names it so bodies can be matched. */
export function makeEvent(subscriptionId: string, eventId: string, tenantId = 'tenant-it'): TestEvent {
  return { event_id: eventId, tenant_id: tenantId, subscription_id: subscriptionId, type: 'order.updated', payload: { event: eventId } };
}

/** An event as a queued event (an SQS message, a stored item) carries it: its payload as text (`payload_json`). */
export function queuedFieldsOf({ payload, ...fields }: TestEvent): Omit<TestEvent, 'payload'> & { readonly payload_json: string } {
  return { ...fields, payload_json: JSON.stringify(payload) };
}

/**
 * Creates (or replaces) a subscription and returns its secret, read as a client reads it: a PUT
 * answers only a secret it generated, so the secret in force is `GET …/secret`'s.
 */
export async function subscribe(baseUrl: string, subscriptionId: string, url: string, tenantId = 'tenant-it'): Promise<string> {
  const path = `/v1/subscriptions/${encodeURIComponent(subscriptionId)}`;
  const answer = await call(baseUrl, 'PUT', path, { tenant_id: tenantId, url });
  if (answer.status !== 201 && answer.status !== 200) throw new Error(`PUT subscription answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  const read = await call(baseUrl, 'GET', `${path}/secret`);
  if (read.status !== 200) throw new Error(`GET subscription secret answered ${read.status}: ${JSON.stringify(read.body)}`);
  return (read.body as { secret: string }).secret;
}

export interface EventResult {
  readonly event_id: string;
  readonly status: string;
  readonly message_group_id: string;
}

/** Posts events (one, or a batch) and expects 202. */
export async function postEvents(baseUrl: string, events: readonly TestEvent[]): Promise<EventResult[]> {
  const body = events.length === 1 ? events[0] : { events };
  const answer = await call(baseUrl, 'POST', '/v1/events', body);
  if (answer.status !== 202) throw new Error(`POST /v1/events answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return (answer.body as { results: EventResult[] }).results;
}

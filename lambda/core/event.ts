/**
 * Events as the API accepts them (docs/api.md#events) and as they travel through the queue. Parsed
 * JSON is validated here, never cast.
 */
import * as z from 'zod';
import { ErrorCode, formatPath, type ErrorDetail, type Refusal } from './api-error.js';
import { MAX_EVENTS_PER_REQUEST, MAX_PAYLOAD_DEPTH, MAX_REQUEST_BYTES } from './limits.js';
import { fanOutEventId, namedEventId } from './fan-out-id.js';
import { scanJsonText, type JsonPath } from './json-text.js';

/** SQS deduplication ids (our event ids) use letters, digits and ASCII punctuation: 0x21–0x7E. */
const SQS_ID_ALPHABET = /^[\x21-\x7e]+$/;

/** A string of `min` to `max` characters, with messages a person can act on. */
export const boundedText = (min: number, max: number) =>
  z.string().min(min, `must be at least ${min} character${min === 1 ? '' : 's'}`).max(max, `must be at most ${max} characters`);

/** An event_id: the idempotency key, also the SQS deduplication id. */
export const eventIdSchema = boundedText(1, 128).regex(
  SQS_ID_ALPHABET,
  'must use only letters, digits and ASCII punctuation (no spaces)',
);

/** A subscription id: any 1–128 characters; it is the default ordering key. */
export const subscriptionIdSchema = boundedText(1, 128);

/**
 * Whether a JSON value nests objects and arrays deeper than `maxDepth` levels (a scalar is level 0,
 * an object or array one more than its deepest member). Walks iteratively, so no input, however
 * deep, can overflow the stack here.
 */
export function isDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > maxDepth) return true;
    // Object.values keeps an own "__proto__" key's value: it is data like any other member.
    for (const member of Object.values(next.value)) pending.push({ value: member, depth });
  }
  return false;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A payload: any JSON object at most MAX_PAYLOAD_DEPTH levels deep, passed through as read, never
 * copied. Copying it key by key (as `z.record` does, or a spread) would drop an own `"__proto__"`
 * key, which JSON.parse creates, or turn it into a prototype change: the receiver must get the
 * payload that was accepted.
 */
const payloadSchema = z
  .custom<Record<string, unknown>>(isJsonObject, 'must be a JSON object')
  .refine((payload) => !isDeeperThan(payload, MAX_PAYLOAD_DEPTH), {
    message: `must nest objects and arrays at most ${MAX_PAYLOAD_DEPTH} levels deep (MAX_PAYLOAD_DEPTH)`,
  })
  // What the API document shows for this check, which JSON Schema cannot express itself.
  .meta({
    type: 'object',
    description: `Any JSON object, nested at most ${MAX_PAYLOAD_DEPTH} levels deep, no key repeated in any of its objects. Delivered as \`data\`: its JSON text exactly as posted (every digit, key, escape and space, in order).`,
  });

/** One event of a request. Unknown fields are refused, so a misspelt field is never silently dropped. */
export const webhookEventSchema = z.strictObject({
  event_id: eventIdSchema,
  tenant_id: boundedText(1, 128),
  subscription_id: subscriptionIdSchema,
  resource_id: boundedText(1, 256).optional(),
  type: boundedText(1, 128),
  payload: payloadSchema,
});
/**
 * An event's payload as text: exactly as it stood in the request (docs/api.md#payloads-travel-as-posted), which the
 * receiver gets. The parsed value is only validated (an object, MAX_PAYLOAD_DEPTH): written again
 * it would lose digits, `-0`, key order and escapes.
 */
export interface PayloadText {
  readonly payload_json: string;
}

/** An event as accepted: its fields, and its payload's text. */
export type WebhookEvent = z.infer<typeof webhookEventSchema> & PayloadText;

/**
 * One event of a request (`POST /v1/events`): as {@link webhookEventSchema}, but `subscription_id`
 * may be left out, for a fan-out (docs/api.md#fan-out-by-event-type): the event is then delivered to every subscription of
 * its tenant whose `event_types` take its `type`.
 */
export const requestEventSchema = webhookEventSchema.extend({
  subscription_id: subscriptionIdSchema.optional().meta({
    description: 'The subscription to deliver to. Without it, the event is a fan-out: delivered to every subscription of `tenant_id` whose `event_types` take its `type`, each in its own order.',
  }),
});
export type RequestEvent = z.infer<typeof requestEventSchema> & PayloadText;

/** A batch of events: `{"events": [...]}` with 1 to MAX_EVENTS_PER_REQUEST. */
export const batchSchema = z.strictObject({
  events: z
    .array(requestEventSchema)
    .min(1, 'must hold at least 1 event')
    .max(MAX_EVENTS_PER_REQUEST, `must hold at most ${MAX_EVENTS_PER_REQUEST} events`),
});

/** The body of `POST /v1/events`, read: its events in request order, with the path each came from. */
export interface EventsRequest {
  readonly events: readonly RequestEvent[];
  /** `events[i]` for a batch, `` for a single event: prefix of every error path. */
  readonly pathOf: (index: number) => string;
}

/** A value read from input, or the refusal of it (the handler layer maps the refusal to a status code). */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly refusal: Refusal };

/** Turns zod's issues into the contract's `details`. */
export function toDetails(error: z.ZodError, prefix: readonly PropertyKey[] = []): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: formatPath([...prefix, ...issue.path]) || '(body)',
    message: issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message,
  }));
}

/**
 * Strict UTF-8: a byte sequence that is not UTF-8 is refused, never replaced with U+FFFD (the
 * payload would reach the receiver altered). `ignoreBOM` keeps a leading byte order mark as a
 * character, so that it is refused below rather than dropped unseen.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A request body read as JSON: its value, and the exact source text of the values asked for (see {@link scanJsonText}). */
interface JsonDocument {
  readonly value: unknown;
  readonly captured: ReadonlyMap<string, string>;
}

/**
 * Reads a request body as JSON (RFC 8259): its text (base64 when API Gateway says so) must be
 * UTF-8, at most 1 MiB (`payload_too_large`), JSON without a byte order mark (`invalid_json`),
 * and no object may repeat a key (`invalid_request`, each repeat by its path: JSON.parse would
 * keep the last value silently). `capture` names values whose source text is kept, by path.
 */
function readJsonDocument(body: string | undefined, isBase64Encoded: boolean, capture?: (path: JsonPath) => boolean): Parsed<JsonDocument> {
  const invalidJson = (message: string): Parsed<never> => ({ ok: false, refusal: { code: ErrorCode.invalidJson, message } });
  // Deployed, HTTP API infers from the Content-Type whether to pass a body as text (JSON, text/*)
  // or base64-encoded (others), as AWS's write-up of HTTP API binary support says; what it passes
  // for bytes that are not UTF-8 under a text type is not documented (replaced before we see
  // them, they cannot be told apart here). The local stack passes any body that is not UTF-8
  // base64-encoded (see `local/api-gateway-event.ts`). Refused here: base64 bytes that do not
  // decode as UTF-8, and text that is no well-formed UTF-16 (a lone surrogate).
  const bytes = isBase64Encoded ? Buffer.from(body ?? '', 'base64') : undefined;
  const byteLength = bytes?.byteLength ?? Buffer.byteLength(body ?? '', 'utf8');
  if (byteLength > MAX_REQUEST_BYTES) {
    return {
      ok: false,
      refusal: { code: ErrorCode.payloadTooLarge, message: `The request body is larger than ${MAX_REQUEST_BYTES} bytes (1 MiB).` },
    };
  }
  let text: string;
  try {
    text = bytes === undefined ? (body ?? '') : strictUtf8.decode(bytes);
  } catch {
    return invalidJson('The request body is not UTF-8: it holds a byte sequence that is not a character.');
  }
  if (!text.isWellFormed()) return invalidJson('The request body is not UTF-8: it holds a lone surrogate.');
  // RFC 8259 §8.1: a JSON text sent over a network must not start with one.
  if (text.startsWith('\ufeff')) return invalidJson('The request body starts with a byte order mark (U+FEFF); send the JSON text without it.');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return invalidJson('The request body is not valid JSON.');
  }
  const scan = scanJsonText(text, capture, capture === undefined ? 0 : MAX_CAPTURE_DEPTH);
  if (scan.repeatedKeys.length > 0) {
    return {
      ok: false,
      refusal: {
        code: ErrorCode.invalidRequest,
        message: 'The request body repeats a key in an object: which of its values is meant is unknown.',
        details: scan.repeatedKeys.map((path) => ({ path: formatPath(path), message: 'repeats a key of the same object' })),
      },
    };
  }
  return { ok: true, value: { value, captured: new Map(scan.captured.map(({ path, text: source }) => [formatPath(path), source])) } };
}

/** The deepest value {@link readEventsRequest} keeps the text of: `events[i].payload`. */
const MAX_CAPTURE_DEPTH = 3;

/** Whether a path is that of an event's payload: `payload` of a single event, `events[i].payload` of a batch. */
function isPayloadPath(path: JsonPath): boolean {
  return (path.length === 1 && path[0] === 'payload') || (path.length === 3 && path[0] === 'events' && typeof path[1] === 'number' && path[2] === 'payload');
}

/** Decodes a request body (see {@link readJsonDocument}): its JSON value, or the refusal of it. */
export function readJsonBody(body: string | undefined, isBase64Encoded: boolean): Parsed<unknown> {
  const read = readJsonDocument(body, isBase64Encoded);
  return read.ok ? { ok: true, value: read.value.value } : read;
}

/**
 * Reads the body of `POST /v1/events` ({@link readJsonDocument}, then {@link parseEventsRequest}):
 * each event with the exact text its payload had in the body (docs/api.md#payloads-travel-as-posted).
 */
export function readEventsRequest(body: string | undefined, isBase64Encoded: boolean): Parsed<EventsRequest> {
  const read = readJsonDocument(body, isBase64Encoded, isPayloadPath);
  return read.ok ? parseEventsRequest(read.value.value, read.value.captured) : read;
}

function isBatch(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'events');
}

/**
 * Validates the body of `POST /v1/events`: one event, or `{"events": [...]}` with 1 to 100.
 * Two events of one request may not share an `event_id` for the same tenant and destination
 * (`eventScopeOf`). `payloadTexts` holds each payload's
 * source text by its path (`payload`, `events[i].payload`), as {@link readEventsRequest} found
 * them; without it (a value built in code, not read), a payload's text is its JSON.stringify.
 */
export function parseEventsRequest(value: unknown, payloadTexts?: ReadonlyMap<string, string>): Parsed<EventsRequest> {
  const invalid = (details: ErrorDetail[]): Parsed<EventsRequest> => ({
    ok: false,
    refusal: { code: ErrorCode.invalidRequest, message: 'The request body does not match the event schema.', details },
  });
  let parsed: { readonly events: readonly z.infer<typeof requestEventSchema>[]; readonly pathOf: (index: number) => string };
  if (isBatch(value)) {
    const batch = batchSchema.safeParse(value);
    if (!batch.success) return invalid(toDetails(batch.error));
    parsed = { events: batch.data.events, pathOf: (index) => `events[${index}]` };
  } else {
    const single = requestEventSchema.safeParse(value);
    if (!single.success) return invalid(toDetails(single.error));
    parsed = { events: [single.data], pathOf: () => '' };
  }
  const payloadTextAt = (index: number, payload: Record<string, unknown>): string => {
    if (payloadTexts === undefined) return JSON.stringify(payload);
    const path = `${parsed.pathOf(index)}.payload`.replace(/^\./, '');
    const text = payloadTexts.get(path);
    // A fault, not bad input: the scan found every payload JSON.parse did.
    if (text === undefined) throw new Error(`no source text was found for ${path}`);
    return text;
  };
  const request: EventsRequest = { events: parsed.events.map((event, index) => ({ ...event, payload_json: payloadTextAt(index, event.payload) })), pathOf: parsed.pathOf };
  // An event id is its producer's within its tenant and destination (see `eventScopeOf`): two
  // events of one request may share one only across scopes.
  const firstIndexById = new Map<string, number>();
  const repeats: ErrorDetail[] = [];
  request.events.forEach((event, index) => {
    const identity = JSON.stringify([...eventScopeOf(event), event.event_id]);
    const first = firstIndexById.get(identity);
    if (first === undefined) firstIndexById.set(identity, index);
    else repeats.push({ path: `${request.pathOf(index)}.event_id`, message: `repeats the event_id of ${request.pathOf(first)} for the same tenant and destination` });
  });
  return repeats.length > 0 ? invalid(repeats) : { ok: true, value: request };
}

/**
 * The scope an event id is unique in: its tenant and its destination, the subscription it names or
 * (null) the tenant's fan-out. The same id in another scope is another event.
 */
export function eventScopeOf(event: Pick<RequestEvent, 'tenant_id' | 'subscription_id'>): readonly [tenantId: string, subscriptionId: string | null] {
  return [event.tenant_id, event.subscription_id ?? null];
}

/** A fan-out delivery's id (see `fanOutEventId`). */
const fanOutEventIdSchema = z.string().regex(/^[\x21-\x7e]{1,128} [0-9a-f]{32}$/, 'must be an event_id, a space and 32 hex characters');

/** The id of an event naming its subscription (see `namedEventId`). */
const namedEventIdSchema = z.string().regex(/^[\x21-\x7e]{1,128} s[A-Za-z0-9_-]{16}$/, 'must be an event_id, a space, s and 16 base64url characters');
/** Whether a text is JSON whose value is a payload ({@link payloadSchema}); the reason when it is not. */
function payloadTextProblem(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return 'must be JSON text';
  }
  const parsed = payloadSchema.safeParse(value);
  return parsed.success ? undefined : parsed.error.issues[0]?.message;
}

/**
 * A queued event's event: its fields, and its payload as text (`payload_json`, a JSON string, so
 * that every code unit survives SQS's character escaping in {@link encodeQueuedEvent}, which a
 * payload spliced in raw would not). A message or stored item written before payloads travelled
 * as text carries `payload` (an object) instead: read as the text JSON.stringify gives it, all
 * that can be known of it now.
 */
const queuedWebhookEventSchema = webhookEventSchema
  .extend({
    // An event goes by the id of its scope (see `namedEventId`, `fanOutEventId`), checked against
    // `named` or `fan_out` below; one accepted before ids were scoped, by its producer's id alone.
    event_id: z.union([eventIdSchema, namedEventIdSchema, fanOutEventIdSchema]),
    payload: payloadSchema.optional(),
    payload_json: z.string().superRefine((text, context) => {
      const problem = payloadTextProblem(text);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    }).optional(),
  })
  .superRefine((event, context) => {
    if ((event.payload === undefined) === (event.payload_json === undefined)) context.addIssue({ code: 'custom', path: ['payload_json'], message: 'must be given, or else payload (not both)' });
  })
  .transform(({ payload, payload_json, ...fields }) => ({ ...fields, payload_json: payload_json ?? JSON.stringify(payload) }));

/**
 * The body of an SQS message: the event as accepted, where it was routed, and when it was
 * accepted (the webhook's `timestamp`). Versioned so that a later format can be told apart.
 */
export const queuedEventSchema = z.strictObject({
  version: z.literal(1),
  event: queuedWebhookEventSchema,
  ordering_key: z.string(),
  message_group_id: z.string().min(1),
  accepted_at: z.iso.datetime(),
  /**
   * Set on an event redriven from the dead-letter queue: it keeps the sequence number it was given
   * (unknown for one moved there by SQS's backstop), and the receiver is told it is late.
   */
  redrive: z
    .strictObject({
      sequence: z.number().int().positive().optional(),
      redriven_at: z.iso.datetime(),
      /**
       * The number of the give-up this copy was redriven from (see `giveUpNumberOf`), or, on a
       * replay's copy, of its event's last give-up (0 for none): only a give-up numbered above it
       * settles this copy. Absent on copies sent before it existed: `redriven_at` decides for them.
       */
      give_up: z.number().int().nonnegative().optional(),
      /**
       * Set on an event sent again by a replay of a window: it was delivered before, and only an
       * outcome of this replay's copy (recorded with its `replay_id`) settles this copy.
       */
      replay: z.literal(true).optional(),
      /**
       * A replay's copy: the replay's start (`ReplayState.startedAt`), what tells its copies from
       * another replay's, by equality alone. Absent on copies sent before it existed: their
       * `redriven_at` decides, against the time of the event's last outcome.
       */
      replay_id: z.string().min(1).max(64).optional(),
    })
    .optional(),
  /**
   * Set on an event sent back from where a paused subscription's backlog was parked (parking a paused backlog,
   * `PAUSE_EVACUATION=store`, see `core/park.ts`): `place` is where its first message stood in its
   * group (`messagePositionOf`). It was never delivered: it takes its key's next number, as any
   * event does, and is never parked again.
   */
  parked: z.strictObject({ place: z.string().min(1).max(64) }).optional(),
  /**
   * Set on a fan-out's delivery to one of its tenant's subscriptions (fan-out by event type): `event_id` is the
   * event's id as its producer sent it, which the webhook carries; `event.event_id` is this
   * delivery's own (`fanOutEventId`).
   */
  fan_out: z.strictObject({ event_id: eventIdSchema }).optional(),
  /**
   * Set on an event that names its subscription: `event_id` is the event's id as its producer sent
   * it, which the webhook carries; `event.event_id` is the id of its scope (`namedEventId`). Absent
   * on events accepted before ids were scoped, whose `event.event_id` is the producer's.
   */
  named: z.strictObject({ event_id: eventIdSchema }).optional(),
}).superRefine((queued, context) => {
  if (queued.fan_out !== undefined && queued.named !== undefined) {
    context.addIssue({ code: 'custom', path: ['named'], message: 'cannot be set with fan_out' });
    return;
  }
  const { event } = queued;
  const expected =
    queued.fan_out !== undefined ? fanOutEventId(queued.fan_out.event_id, event.subscription_id)
    : queued.named !== undefined ? namedEventId(queued.named.event_id, event.tenant_id, event.subscription_id)
    : eventIdSchema.safeParse(event.event_id).success ? event.event_id
    : undefined;
  if (event.event_id === expected) return;
  const message =
    queued.fan_out !== undefined ? 'is not the fan-out id of fan_out.event_id and subscription_id'
    : queued.named !== undefined ? 'is not the id of named.event_id for its tenant and subscription'
    : 'must be an event_id (a scoped id needs named or fan_out)';
  context.addIssue({ code: 'custom', path: ['event', 'event_id'], message });
});
export type QueuedEvent = z.infer<typeof queuedEventSchema>;

/** An accepted event as a queued event carries it: its payload as text alone (see {@link PayloadText}). */
export function queuedEventFieldsOf({ payload: _validated, ...fields }: WebhookEvent): QueuedEvent['event'] {
  return fields;
}

/** The id the receiver and the API know an event by: the producer's, also for a fan-out's delivery. */
export function publicEventIdOf(queued: QueuedEvent): string {
  return queued.fan_out?.event_id ?? queued.named?.event_id ?? queued.event.event_id;
}


/**
 * UTF-16 code units that SQS's character rules (`#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to
 * #xFFFD | #x10000 to #x10FFFF`) or the local emulator's stricter ones (fauxqs 2.4.1 refuses every
 * character above U+FFFF) do not take: the controls (JSON.stringify escapes them already), both
 * halves of a surrogate pair, a lone surrogate, U+FFFE and U+FFFF. Matched one code unit at a
 * time (no `u` flag), so a pair is two matches.
 */
const OUTSIDE_SQS_CHARACTERS = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd]/g;

/**
 * The SQS body of a queued event: its JSON text, with every code unit SQS could refuse written
 * as a `\uXXXX` escape. The same JSON value (JSON.parse gives back every string exactly, an
 * emoji, U+FFFF and a lone surrogate included), so every event whose JSON is valid is taken by
 * SQS and by the local stack alike. Other characters stay as they are: escaping all non-ASCII
 * would double the bytes of, say, Japanese text against SQS's 1 MiB. With `encodeQueuedMessage`,
 * the only encoder of SQS bodies: redrive calls it, ingest calls that one, and the consumer reads
 * both with `readQueuedMessage`.
 */
export function encodeQueuedEvent(queued: QueuedEvent): string {
  // JSON.stringify writes raw characters only inside strings (it escapes the controls and lone
  // surrogates itself), so an escape put in their place is read back as the same character.
  return JSON.stringify(queued).replace(OUTSIDE_SQS_CHARACTERS, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Reads an SQS message body as a queued event; the reason when it is not one. */
export function readQueuedEvent(body: string): { readonly queued: QueuedEvent } | { readonly reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { reason: 'body is not JSON' };
  }
  return queuedEventOf(json);
}

function queuedEventOf(json: unknown): { readonly queued: QueuedEvent } | { readonly reason: string } {
  const parsed = queuedEventSchema.safeParse(json);
  if (parsed.success) return { queued: parsed.data };
  const first = parsed.error.issues[0];
  return { reason: first ? `${first.path.join('.') || 'body'} ${first.message}` : 'invalid' };
}

/**
 * A pack: consecutive events of one ordering key, accepted in one request, in one SQS message, in
 * their order. Ingest sends one message per key per request (one SQS request for up to ten keys),
 * not one per event; the consumer unpacks it into one record per event. Each item is a whole
 * queued event, so any one of them can travel, or be dead-lettered, alone. A message of one event
 * is that event itself (version 1), as ingest wrote it before packs, and as redrive writes it.
 */
const queuedPackSchema = z.strictObject({
  version: z.literal(2),
  // Items are read one by one (see `readQueuedMessage`): one that is no event spoils no other.
  events: z.array(z.unknown()).min(2).max(MAX_EVENTS_PER_REQUEST),
});

/** The SQS body of a key's events in one message: the event itself when alone, a pack otherwise. */
export function encodeQueuedMessage(events: readonly [QueuedEvent, ...QueuedEvent[]]): string {
  const [first, ...rest] = events;
  return messageOfBodies([encodeQueuedEvent(first), ...rest.map(encodeQueuedEvent)]);
}

/**
 * {@link encodeQueuedMessage} of events already encoded one by one (`encodeQueuedEvent`), for a
 * caller that measured them: the same text, as `JSON.stringify` writes an array item by item and
 * the escaping applies to each item alike.
 */
export function messageOfBodies(bodies: readonly [string, ...string[]]): string {
  return bodies.length === 1 ? bodies[0] : `{"version":2,"events":[${bodies.join(',')}]}`;
}

/** One item of a message: an event, or what an item that is no event holds (its JSON text), and why. */
export type QueuedItem = { readonly queued: QueuedEvent } | { readonly reason: string; readonly text: string };

/**
 * Reads an SQS message body: the events it holds, in order (one, or a pack's), each item read on
 * its own; the reason when the body is neither an event nor a pack.
 */
export function readQueuedMessage(body: string): { readonly items: readonly [QueuedItem, ...QueuedItem[]] } | { readonly reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { reason: 'body is not JSON' };
  }
  const pack = queuedPackSchema.safeParse(json);
  if (!pack.success) {
    const read = queuedEventOf(json);
    return 'reason' in read ? read : { items: [read] };
  }
  const [first, ...rest] = pack.data.events.map((item, index): QueuedItem => {
    const read = queuedEventOf(item);
    return 'reason' in read ? { reason: `events.${index}: ${read.reason}`, text: JSON.stringify(item) } : read;
  });
  // At least two: the schema says so.
  return first === undefined ? { reason: 'events is empty' } : { items: [first, ...rest] };
}

/**
 * Validates a value with a schema; refuses it as `invalid_request`, each problem located by its
 * path (under `prefix`).
 */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, message: string, prefix: readonly PropertyKey[] = []): Parsed<T> {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, refusal: { code: ErrorCode.invalidRequest, message, details: toDetails(parsed.error, prefix) } };
}

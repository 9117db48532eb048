/**
 * The OpenAPI 3.1 document of the HTTP API, generated from ROUTES, the route descriptions and the
 * zod schemas the handlers validate with and are typed against (JSON Schema 2020-12, which
 * OpenAPI 3.1 uses, by zod's own `toJSONSchema`). Pure: no AWS, no file read, the same document
 * for the same code.
 */
import * as z from 'zod';
import { ErrorCode } from '../core/api-error.js';
import { ERROR_STATUS_CODES, errorBodySchema, errorBodySchemaOf } from '../handlers/responses.js';
import { ROUTES, type ApiFunction, type RouteKey } from '../routes.js';
import { RESPONSE_BODY_CAP_BYTES } from '../core/delivery.js';
import { batchBodySchema, webhookBodySchema } from '../core/webhook.js';
import { ROUTE_DESCRIPTIONS, type HeaderDescription, type AnyRouteDescription, type RouteDescriptions } from './routes.js';

/** The version of the API the document describes: the package's version (a unit test holds them equal). */
export const API_VERSION = '0.1.0';

/** A JSON Schema (2020-12) as zod writes it. */
export type JsonSchema = z.core.JSONSchema.BaseSchema;

export interface ParameterObject {
  readonly name: string;
  readonly in: 'path' | 'query';
  readonly required: boolean;
  readonly description?: string;
  readonly schema: JsonSchema;
}

export interface MediaTypeObject {
  readonly schema: JsonSchema;
}

export interface HeaderObject {
  readonly description: string;
  readonly schema: JsonSchema;
}

export interface ResponseObject {
  readonly description: string;
  readonly headers?: Readonly<Record<string, HeaderObject>>;
  readonly content: { readonly 'application/json': MediaTypeObject };
}

export interface OperationObject {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly parameters?: readonly ParameterObject[];
  readonly requestBody?: { readonly required: boolean; readonly description?: string; readonly content: { readonly 'application/json': MediaTypeObject } };
  /** By status code, as a string (`"200"`, `"409"`). */
  readonly responses: Readonly<Record<string, ResponseObject>>;
}

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** A webhook the service sends (OpenAPI 3.1 `webhooks`): its headers, its body, and the answers it reads. */
export interface WebhookOperationObject {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly parameters: readonly { readonly name: string; readonly in: 'header'; readonly required: boolean; readonly description: string; readonly schema: JsonSchema }[];
  readonly requestBody: { readonly required: true; readonly content: { readonly 'application/json': MediaTypeObject } };
  readonly responses: Readonly<Record<string, { readonly description: string }>>;
}

/** The OpenAPI 3.1 document, as much of its vocabulary as this API uses. */
export interface ApiDocument {
  readonly openapi: '3.1.1';
  readonly info: { readonly title: string; readonly version: string; readonly description: string; readonly license: { readonly name: string; readonly identifier: string } };
  readonly jsonSchemaDialect: string;
  readonly tags: readonly { readonly name: string; readonly description: string }[];
  readonly security: readonly Readonly<Record<string, readonly string[]>>[];
  readonly paths: Readonly<Record<string, Readonly<Partial<Record<HttpMethod, OperationObject>>>>>;
  /** What a subscription's endpoint receives (docs/api.md#what-a-receiver-gets and docs/api.md#batches): one event, or a batch. */
  readonly webhooks: Readonly<Record<'event' | 'batch', { readonly post: WebhookOperationObject }>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>;
    readonly responses: Readonly<Record<string, ResponseObject>>;
    readonly securitySchemes: Readonly<Record<string, Readonly<Record<string, string>>>>;
  };
}

/**
 * Errors any route can answer: a fault caught at the handler's boundary. Answers to a request no
 * route matches are in `components.responses` instead, as no operation describes them.
 */
const BOUNDARY_ERRORS: readonly ErrorCode[] = [ErrorCode.internalError];

/** The answers to requests no operation takes, by the name `components.responses` gives them. */
export const UNROUTED_RESPONSES = {
  RouteNotFound: { status: 404, code: ErrorCode.notFound, description: 'No route has this path (`not_found`).' },
  MethodNotAllowed: {
    status: 405,
    code: ErrorCode.methodNotAllowed,
    description: 'A route has this path but not this method (`method_not_allowed`, with `Allow`).',
  },
} as const;

const TAG_DESCRIPTIONS: Readonly<Record<ApiFunction, string>> = {
  ingest: 'Accepting events (the ingest function).',
  subscriptions: 'Subscriptions: receiver endpoints and their signing secrets (the subscriptions function).',
  operations: 'The lag view, dead letters and the operator’s actions (the operations function).',
};

const SECURITY_SCHEME = 'sigv4';

const DESCRIPTION = [
  'Per-key ordered webhook delivery. Every error has the shape `{"error": {"code", "message", "details"?}}`; each response lists the codes a route can answer.',
  'Deployed, every route requires AWS Signature Version 4 (API Gateway IAM authorization); the local stack (`npm start`) checks no signature.',
  'The local stack answers a request no route takes as `components.responses` describes (`RouteNotFound`, `MethodNotAllowed`); deployed, API Gateway answers it itself.',
].join('\n\n');

/**
 * The JSON Schema of a zod schema, without `$schema` (the document's `jsonSchemaDialect` says it).
 * `io: 'input'` for what clients send (a transform's input side), `'output'` for what they get.
 * A check JSON Schema cannot express (`z.custom`) says what it accepts with `.meta({type})`, which
 * zod merges into the `{}` it writes for it (a unit test holds that no schema of the document is
 * left empty); anything else unrepresentable throws.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, {
    io,
    unrepresentable: ({ zodSchema }) => (zodSchema._zod.def.type === 'custom' ? 'any' : 'throw'),
  });
  return jsonSchema;
}

function jsonContent(schema: JsonSchema): { readonly 'application/json': MediaTypeObject } {
  return { 'application/json': { schema } };
}

function toHeaders(headers: Readonly<Record<string, HeaderDescription>> | undefined): Readonly<Record<string, HeaderObject>> | undefined {
  if (headers === undefined) return undefined;
  return Object.fromEntries(Object.entries(headers).map(([name, header]) => [name, { description: header.description, schema: toJsonSchema(header.schema, 'output') }]));
}

function codeList(codes: readonly ErrorCode[]): string {
  return codes.map((code) => `\`${code}\``).join(', ');
}

/** One error status of a route: the plain error body for its codes, or the route's own body for a code. */
function errorResponseOf(codes: readonly [ErrorCode, ...ErrorCode[]], description: AnyRouteDescription, headers: Readonly<Record<string, HeaderDescription>> | undefined): ResponseObject {
  const plain = codes.filter((code) => description.errorBodies?.[code] === undefined);
  const own = codes.flatMap((code) => description.errorBodies?.[code] ?? []);
  const [first, ...rest] = plain;
  const bodies = [...(first === undefined ? [] : [errorBodySchemaOf([first, ...rest])]), ...own];
  const [only, second, ...more] = bodies;
  const schema = second === undefined && only !== undefined ? only : z.union([only ?? z.never(), second ?? z.never(), ...more]);
  const headerObjects = toHeaders(headers);
  return {
    description: `Refused: ${codeList(codes)}.`,
    ...(headerObjects === undefined ? {} : { headers: headerObjects }),
    content: jsonContent(toJsonSchema(schema, 'output')),
  };
}

function parametersOf(routeKey: RouteKey, description: AnyRouteDescription): ParameterObject[] {
  const path = Object.entries<z.ZodType>(description.path ?? {}).map(([name, schema]): ParameterObject => ({ name, in: 'path', required: true, schema: toJsonSchema(schema, 'input') }));
  if (description.query === undefined) return path;
  const query = toJsonSchema(description.query, 'input');
  const required = new Set(query.required ?? []);
  const properties = Object.entries(query.properties ?? {}).map(([name, schema]): ParameterObject => {
    if (typeof schema === 'boolean') throw new Error(`${routeKey}: query parameter ${name} has no schema`);
    return { name, in: 'query', required: required.has(name), ...(schema.description === undefined ? {} : { description: schema.description }), schema };
  });
  return [...path, ...properties];
}

function operationOf(routeKey: RouteKey, tag: ApiFunction, description: AnyRouteDescription): OperationObject {
  const responses: Record<string, ResponseObject> = {};
  for (const [status, answer] of Object.entries(description.answers)) {
    if (answer === undefined) continue;
    responses[status] = { description: answer.description, content: jsonContent(toJsonSchema(answer.schema, 'output')) };
  }
  const statusOf = description.statusOf ?? ((code: ErrorCode) => ERROR_STATUS_CODES[code]);
  const codesByStatus = new Map<number, [ErrorCode, ...ErrorCode[]]>();
  for (const code of [...description.errors, ...BOUNDARY_ERRORS]) {
    const status = statusOf(code);
    const codes = codesByStatus.get(status);
    if (codes === undefined) codesByStatus.set(status, [code]);
    else codes.push(code);
  }
  for (const [status, codes] of [...codesByStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = errorResponseOf(codes, description, description.headers?.[status]);
  }
  const parameters = parametersOf(routeKey, description);
  const body = description.body;
  return {
    operationId: description.operationId,
    summary: description.summary,
    ...(description.description === undefined ? {} : { description: description.description }),
    tags: [tag],
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(body === undefined
      ? {}
      : {
          requestBody: {
            required: body.isRequired,
            ...(body.description === undefined ? {} : { description: body.description }),
            content: jsonContent(toJsonSchema(body.schema, 'input')),
          },
        }),
    responses,
  };
}

function unroutedResponse(entry: (typeof UNROUTED_RESPONSES)[keyof typeof UNROUTED_RESPONSES]): ResponseObject {
  return {
    description: entry.description,
    ...(entry.status === 405 ? { headers: { allow: { description: 'The methods the path takes.', schema: { type: 'string' } } } } : {}),
    content: jsonContent(toJsonSchema(errorBodySchemaOf([entry.code]), 'output')),
  };
}

/** Splits a route key (`GET /v1/lag`) into the document's method and path. */
export function splitRouteKey(routeKey: string): { readonly method: HttpMethod; readonly path: string } {
  const [verb = '', path = ''] = routeKey.split(' ');
  const method = verb.toLowerCase();
  if (method !== 'get' && method !== 'put' && method !== 'post' && method !== 'delete' && method !== 'patch') throw new Error(`Route key "${routeKey}" has no method the document knows`);
  return { method, path };
}

/** A header of a webhook, as the document lists it. */
function webhookHeader(name: string, description: string, required = true, schema: JsonSchema = { type: 'string' }): WebhookOperationObject['parameters'][number] {
  return { name, in: 'header', required, description, schema };
}

/** The headers every webhook carries, one event or a batch. */
const COMMON_WEBHOOK_HEADERS = [
  webhookHeader('webhook-timestamp', 'Unix seconds of this attempt; verifiers refuse one too far from their clock.'),
  webhookHeader('webhook-signature', 'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, one per secret, space-separated (two during a rotation\'s grace).'),
  webhookHeader('webhook-ordering-key', 'The ordering key the numbers count for, every character but visible ASCII (and `%` itself) percent-encoded as UTF-8. The body\'s `ordering_key` says it under the signature.'),
  webhookHeader('webhook-redelivery', 'Present, `true`, only on a redelivery. The body\'s `redelivery` says it under the signature.', false, { type: 'string', enum: ['true'] }),
];

/** What the sender reads of an answer, said once for every webhook response. */
const ANSWER_READ =
  ` Connecting, the status and headers, and the body share one \`DELIVERY_TIMEOUT_MS\`; at most ${RESPONSE_BODY_CAP_BYTES / 1024} KiB of the body is read: past that the rest is not read and the connection is closed. ` +
  'An answer whose body is cut, by that cap or by the deadline after the status arrived, is decided by its status.';

const WEBHOOK_RESPONSES = {
  '2XX': { description: `Delivered: the event (or every event of the batch) counts as received.${ANSWER_READ}` },
  default: { description: `Any other answer, or none within \`DELIVERY_TIMEOUT_MS\`, is a failed attempt, retried with backoff (\`Retry-After\` honoured up to \`RETRY_MAX_SECONDS\`).${ANSWER_READ}` },
};

/** The webhooks a subscription's endpoint receives: the headers and body of each shape. */
function webhooksOf(): ApiDocument['webhooks'] {
  const trust =
    'Verify the signature, then trust the body\'s `sequence`, `ordering_key`, `previous_sequence`, `subscription_id` and `redelivery`: the headers that say the same are outside the signature. A receiver serving several subscriptions at one URL keys its duplicates by `subscription_id` and `webhook-id`, and its order by `subscription_id` and `ordering_key`: a fan-out\'s copies share the `webhook-id`.';
  return {
    event: {
      post: {
        operationId: 'webhookEvent',
        summary: 'One event (a subscription with `batch_size` 1)',
        description: `One event: docs/api.md#what-a-receiver-gets. ${trust}`,
        parameters: [
          webhookHeader('webhook-id', 'The event_id: the receiver\'s idempotency key.'),
          ...COMMON_WEBHOOK_HEADERS,
          webhookHeader('webhook-sequence', 'The event\'s number in its ordering key, as the body\'s `sequence`.', true, { type: 'string', pattern: '^[1-9][0-9]*$' }),
        ],
        requestBody: { required: true, content: jsonContent(toJsonSchema(webhookBodySchema, 'output')) },
        responses: WEBHOOK_RESPONSES,
      },
    },
    batch: {
      post: {
        operationId: 'webhookBatch',
        summary: 'A batch of consecutive events of one ordering key (a subscription with `batch_size` above 1)',
        description: `A batch (docs/api.md#batches): delivered whole or not at all; after a failed batch, its events come one at a time as one-item batches. ${trust}`,
        parameters: [webhookHeader('webhook-id', '`batch_` and 32 hex characters: the same for the same events, different for different events.'), ...COMMON_WEBHOOK_HEADERS],
        requestBody: { required: true, content: jsonContent(toJsonSchema(batchBodySchema, 'output')) },
        responses: WEBHOOK_RESPONSES,
      },
    },
  };
}

/** The API document, one operation per route of ROUTES, tagged with the function that serves it. */
export function buildApiDocument(descriptions: RouteDescriptions = ROUTE_DESCRIPTIONS): ApiDocument {
  const paths: Record<string, Partial<Record<HttpMethod, OperationObject>>> = {};
  for (const tag of Object.keys(ROUTES) as ApiFunction[]) {
    for (const routeKey of ROUTES[tag]) {
      const { method, path } = splitRouteKey(routeKey);
      const description: AnyRouteDescription = descriptions[routeKey];
      paths[path] = { ...paths[path], [method]: operationOf(routeKey, tag, description) };
    }
  }
  return {
    openapi: '3.1.1',
    info: { title: 'ordered-webhooks', version: API_VERSION, description: DESCRIPTION, license: { name: 'Apache 2.0', identifier: 'Apache-2.0' } },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: (Object.keys(ROUTES) as ApiFunction[]).map((name) => ({ name, description: TAG_DESCRIPTIONS[name] })),
    security: [{ [SECURITY_SCHEME]: [] }],
    paths,
    webhooks: webhooksOf(),
    components: {
      schemas: { Error: toJsonSchema(errorBodySchema, 'output') },
      responses: { RouteNotFound: unroutedResponse(UNROUTED_RESPONSES.RouteNotFound), MethodNotAllowed: unroutedResponse(UNROUTED_RESPONSES.MethodNotAllowed) },
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'Deployed: AWS Signature Version 4 of an IAM principal allowed execute-api:Invoke on the API (API Gateway IAM authorization). The local stack checks none.',
          'x-amazon-apigateway-authtype': 'awsSigv4',
        },
      },
    },
  };
}

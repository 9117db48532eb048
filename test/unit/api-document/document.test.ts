import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { API_VERSION, buildApiDocument, splitRouteKey, UNROUTED_RESPONSES, type ApiDocument, type JsonSchema, type OperationObject } from '../../../lambda/api-document/document.js';
import { ROUTE_DESCRIPTIONS, type RouteDescriptions } from '../../../lambda/api-document/routes.js';
import { ErrorCode } from '../../../lambda/core/api-error.js';
import type { QueuedEvent } from '../../../lambda/core/event.js';
import { signBatch, signWebhook } from '../../../lambda/core/webhook.js';
import { createIngestHandler } from '../../../lambda/handlers/ingest.js';
import { createLogger } from '../../../lambda/handlers/logger.js';
import { ERROR_STATUS_CODES } from '../../../lambda/handlers/responses.js';
import { ROUTES, type RouteKey } from '../../../lambda/routes.js';
import { createAjv, createAnswerChecker } from '../../support/api-document.js';
import { apiEvent, jsonOf } from '../../support/api-event.js';
import { NO_FAN_OUTS } from '../../support/no-fan-outs.js';

const document: ApiDocument = buildApiDocument();
const ROUTE_KEYS: readonly RouteKey[] = Object.values(ROUTES).flat();

function operationOf(routeKey: string): OperationObject | undefined {
  const { method, path } = splitRouteKey(routeKey);
  return document.paths[path]?.[method];
}

/** Every schema of the document, with where it is. */
function schemasOf(doc: ApiDocument): { readonly at: string; readonly schema: JsonSchema }[] {
  const found: { at: string; schema: JsonSchema }[] = [];
  const responses = (at: string, byStatus: Readonly<Record<string, { content: { 'application/json': { schema: JsonSchema } }; headers?: Readonly<Record<string, { schema: JsonSchema }>> }>>) => {
    for (const [status, response] of Object.entries(byStatus)) {
      found.push({ at: `${at} ${status}`, schema: response.content['application/json'].schema });
      for (const [name, header] of Object.entries(response.headers ?? {})) found.push({ at: `${at} ${status} header ${name}`, schema: header.schema });
    }
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) found.push({ at: `${at} parameter ${parameter.name}`, schema: parameter.schema });
      if (operation.requestBody !== undefined) found.push({ at: `${at} request body`, schema: operation.requestBody.content['application/json'].schema });
      responses(at, operation.responses);
    }
  }
  responses('components.responses', doc.components.responses);
  for (const [name, schema] of Object.entries(doc.components.schemas)) found.push({ at: `components.schemas.${name}`, schema });
  for (const [name, { post }] of Object.entries(doc.webhooks)) {
    for (const parameter of post.parameters) found.push({ at: `webhooks.${name} header ${parameter.name}`, schema: parameter.schema });
    found.push({ at: `webhooks.${name} body`, schema: post.requestBody.content['application/json'].schema });
  }
  return found;
}

/** Every subschema of a schema, depth first; `additionalProperties` only where it is no blanket `{}` (a loose object's). */
function subschemasOf(schema: unknown): unknown[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const nested = Object.entries(schema).flatMap(([key, value]) => {
    if (key === 'properties' && typeof value === 'object' && value !== null) return Object.values(value).flatMap(subschemasOf);
    if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) return value.flatMap(subschemasOf);
    if (key === 'additionalProperties' && typeof value === 'object' && value !== null && Object.keys(value).length === 0) return [];
    if (key === 'items' || key === 'additionalProperties' || key === 'not') return subschemasOf(value);
    return [];
  });
  return [schema, ...nested];
}

const DESCRIBING_KEYWORDS = ['type', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', '$ref', 'not'];

/** The error codes an error response's schema allows. */
function errorCodesOf(schema: JsonSchema): string[] {
  return subschemasOf(schema).flatMap((subschema) => {
    const parsed = z.object({ properties: z.object({ error: z.object({ properties: z.object({ code: z.object({ enum: z.array(z.string()) }) }) }) }) }).safeParse(subschema);
    return parsed.success ? parsed.data.properties.error.properties.code.enum : [];
  });
}

/** The property names at `path` of a schema (`''` the root, `rows[]` the items of `rows`), over every `anyOf` member. */
function fieldsAt(schema: unknown, path: string): string[] {
  const objectSchema = z.object({ properties: z.record(z.string(), z.unknown()).optional(), anyOf: z.array(z.unknown()).optional(), items: z.unknown().optional() });
  const parsed = objectSchema.parse(schema);
  if (parsed.anyOf !== undefined) return [...new Set(parsed.anyOf.flatMap((member) => fieldsAt(member, path)))];
  if (path === '') return Object.keys(parsed.properties ?? {});
  const [head = '', ...rest] = path.split('.');
  const isItems = head.endsWith('[]');
  const child = parsed.properties?.[head.replace(/\[\]$/, '')];
  if (child === undefined) return [];
  return fieldsAt(isItems ? objectSchema.parse(child).items : child, rest.join('.'));
}

/**
 * The routes of docs/api.md#routes, written out as data: every route, the statuses it names, the error codes of each,
 * and the fields it names, by where they are in the body (`groups[]`: each item of `groups`).
 */
const CONTRACT: readonly {
  readonly route: string;
  readonly request?: Readonly<Record<string, readonly string[]>>;
  readonly query?: readonly string[];
  readonly statuses: readonly { readonly status: number; readonly codes?: readonly string[]; readonly fields?: Readonly<Record<string, readonly string[]>> }[];
}[] = [
  { route: 'GET /health', statuses: [{ status: 200, fields: { '': ['status'] } }] },
  {
    route: 'PUT /v1/subscriptions/{subscription_id}',
    request: { '': ['tenant_id', 'url', 'secret'] },
    statuses: [
      { status: 200, fields: { '': ['subscription_id', 'tenant_id', 'url', 'secret'] } },
      { status: 201, fields: { '': ['subscription_id', 'tenant_id', 'url', 'secret'] } },
      { status: 400, codes: ['invalid_request', 'invalid_json'] },
      { status: 422, codes: ['endpoint_not_allowed'] },
    ],
  },
  {
    route: 'GET /v1/subscriptions/{subscription_id}',
    statuses: [{ status: 200, fields: { '': ['subscription_id', 'tenant_id', 'url', 'created_at'] } }, { status: 404, codes: ['not_found'] }],
  },
  {
    route: 'POST /v1/events',
    request: { '': ['event_id', 'tenant_id', 'subscription_id', 'resource_id', 'type', 'payload', 'events'], 'events[]': ['event_id', 'tenant_id', 'subscription_id', 'resource_id', 'type', 'payload'] },
    statuses: [
      { status: 202, fields: { '': ['results'], 'results[]': ['event_id', 'status', 'message_group_id'] } },
      { status: 400, codes: ['invalid_request', 'invalid_json'] },
      { status: 413, codes: ['payload_too_large'] },
      { status: 422, codes: ['unknown_subscription'] },
      { status: 503, codes: ['enqueue_failed', 'ingest_paused'], fields: { '': ['error', 'results'] } },
    ],
  },
  {
    route: 'GET /v1/lag',
    statuses: [{ status: 200, fields: { '': ['groups'], 'groups[]': ['message_group_id', 'depth', 'oldest_wait_seconds', 'keys_affected', 'head_attempts', 'last_error', 'dead_lettered'] } }],
  },
  {
    route: 'GET /v1/dead-letters',
    query: ['subscription_id'],
    statuses: [{ status: 200, fields: { '': ['items'], 'items[]': ['event_id', 'subscription_id', 'message_group_id', 'sequence', 'attempts', 'reason', 'dead_lettered_at'] } }],
  },
  {
    route: 'POST /v1/dead-letters/redrive',
    request: { '': ['subscription_id'] },
    statuses: [
      { status: 200, fields: { '': ['subscription_id', 'redriven', 'remaining', 'is_done'], 'redriven[]': ['event_id', 'sequence'] } },
      { status: 409, codes: ['ingest_paused'] },
    ],
  },
  {
    route: 'POST /v1/groups/{message_group_id}/skip',
    request: { '': ['event_id'] },
    statuses: [{ status: 202, fields: { '': ['status'] } }, { status: 409, codes: ['no_failing_head', 'head_changed'] }],
  },
  {
    route: 'GET /v1/routing',
    statuses: [{ status: 200, fields: { '': ['version', 'partition_count', 'is_paused', 'paused_at', 'pending'], pending: ['queued', 'in_flight', 'delayed', 'groups_with_pending'] } }],
  },
  { route: 'POST /v1/routing/pause', statuses: [] },
  { route: 'POST /v1/routing/resume', statuses: [] },
  {
    route: 'PUT /v1/routing',
    request: { '': ['partition_count', 'expected_version'] },
    statuses: [{ status: 409, codes: ['not_paused', 'pause_too_recent', 'queue_not_empty', 'version_conflict'] }],
  },
];

describe('buildApiDocument', () => {
  it('is an OpenAPI 3.1 document of this package’s version, with an info, paths and a JSON Schema dialect', () => {
    const packageJson = z.object({ version: z.string() }).parse(JSON.parse(readFileSync('package.json', 'utf8')));
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(document.info).toMatchObject({ title: 'ordered-webhooks', version: packageJson.version });
    expect(API_VERSION).toBe(packageJson.version);
    expect(document.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });

  it('has one operation per route of ROUTES, and no other', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual([...ROUTE_KEYS].sort());
  });

  it('tags each operation with the function ROUTES sends it to, and gives each a unique operationId', () => {
    for (const [name, routeKeys] of Object.entries(ROUTES)) {
      for (const routeKey of routeKeys) expect(operationOf(routeKey)?.tags, routeKey).toEqual([name]);
    }
    const ids = ROUTE_KEYS.map((routeKey) => operationOf(routeKey)?.operationId);
    expect(new Set(ids).size).toBe(ROUTE_KEYS.length);
  });

  it('declares each path parameter of each route, required, and no other', () => {
    for (const routeKey of ROUTE_KEYS) {
      const names = [...splitRouteKey(routeKey).path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      const declared = (operationOf(routeKey)?.parameters ?? []).filter((parameter) => parameter.in === 'path');
      expect(declared.map((parameter) => parameter.name), routeKey).toEqual(names);
      expect(declared.every((parameter) => parameter.required)).toBe(true);
    }
  });

  it('compiles every schema with a strict JSON Schema 2020-12 validator', () => {
    const ajv = createAjv();
    const schemas = schemasOf(document);
    expect(schemas.length).toBeGreaterThan(ROUTE_KEYS.length * 2);
    for (const { at, schema } of schemas) expect(() => ajv.compile(schema), at).not.toThrow();
  });

  it('leaves no schema empty: every one says what it accepts', () => {
    const empty = schemasOf(document).flatMap(({ at, schema }) =>
      subschemasOf(schema)
        .filter((subschema) => typeof subschema === 'object' && subschema !== null && !DESCRIBING_KEYWORDS.some((keyword) => keyword in subschema))
        .map(() => at),
    );
    expect(empty).toEqual([]);
  });

  it('describes the webhooks a receiver gets, and each body the consumer signs fits its schema, its headers among the listed ones', () => {
    const ajv = createAjv();
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const queued: QueuedEvent = {
      version: 1,
      event: { event_id: 'evt_1', tenant_id: 't', subscription_id: 'sub_1', type: 'order.paid', payload_json: '{"n":1}' },
      ordering_key: 'sub_1',
      message_group_id: 'g',
      accepted_at: '2026-12-04T12:00:00.000Z',
    };
    const redriven: QueuedEvent = { ...queued, redrive: { sequence: 2, redriven_at: '2026-12-04T13:00:00.000Z' } };
    const attemptedAt = new Date();
    const single = [signWebhook({ queued, sequence: 3, previousSequence: 1, secrets: [secret], attemptedAt }), signWebhook({ queued: redriven, sequence: 2, previousSequence: 7, secrets: [secret], attemptedAt })];
    const batch = [
      signBatch({ items: [{ queued, sequence: 3, previousSequence: 1 }, { queued: { ...queued, event: { ...queued.event, event_id: 'evt_2' } }, sequence: 4, previousSequence: 3 }], secrets: [secret], attemptedAt }),
      signBatch({ items: [{ queued: redriven, sequence: 2, previousSequence: 7 }], secrets: [secret], attemptedAt }),
    ];
    for (const [name, requests] of [['event', single], ['batch', batch]] as const) {
      const { post } = document.webhooks[name];
      const isBody = ajv.compile(post.requestBody.content['application/json'].schema);
      const listed = new Set(['content-type', ...post.parameters.map((parameter) => parameter.name)]);
      for (const request of requests) {
        expect(isBody(JSON.parse(request.body)), `${name}: ${JSON.stringify(isBody.errors)}`).toBe(true);
        expect(Object.keys(request.headers).filter((header) => !listed.has(header)), name).toEqual([]);
        for (const parameter of post.parameters.filter((each) => each.required)) expect(request.headers, `${name} ${parameter.name}`).toHaveProperty(parameter.name);
      }
    }
  });

  it('answers every error code of ERROR_STATUS_CODES on some route, or, for a request no route takes, in components.responses', () => {
    const onRoutes = new Set(ROUTE_KEYS.flatMap((routeKey) => Object.values(operationOf(routeKey)?.responses ?? {}).flatMap((response) => errorCodesOf(response.content['application/json'].schema))));
    const unrouted = Object.values(document.components.responses).flatMap((response) => errorCodesOf(response.content['application/json'].schema));
    expect([...new Set([...onRoutes, ...unrouted])].sort()).toEqual(Object.keys(ERROR_STATUS_CODES).sort());
    // Only a method a path does not take has no route of its own to be answered on.
    expect(Object.keys(ERROR_STATUS_CODES).filter((code) => !onRoutes.has(code))).toEqual([ErrorCode.methodNotAllowed]);
  });

  it('answers each error code with the status ERROR_STATUS_CODES gives it, but for the routes that say otherwise', () => {
    for (const routeKey of ROUTE_KEYS) {
      for (const [status, response] of Object.entries(operationOf(routeKey)?.responses ?? {})) {
        for (const code of errorCodesOf(response.content['application/json'].schema)) {
          // A redrive or a replay is retried after the routing resumes, not after a delay.
          const isRedrivePaused = (routeKey === 'POST /v1/dead-letters/redrive' || routeKey === 'POST /v1/subscriptions/{subscription_id}/replay') && code === ErrorCode.ingestPaused;
          expect(`${routeKey} ${code} ${status}`).toBe(`${routeKey} ${code} ${isRedrivePaused ? 409 : ERROR_STATUS_CODES[code as ErrorCode]}`);
        }
      }
    }
    for (const entry of Object.values(UNROUTED_RESPONSES)) expect(ERROR_STATUS_CODES[entry.code]).toBe(entry.status);
  });

  it('answers internal_error (500) on every route: the handlers’ boundary turns any fault into it', () => {
    for (const routeKey of ROUTE_KEYS) {
      expect(errorCodesOf(operationOf(routeKey)?.responses['500']?.content['application/json'].schema ?? {}), routeKey).toEqual([ErrorCode.internalError]);
    }
  });

  it.each(CONTRACT)('has every status, error code and field that docs/api.md names for $route', ({ route, request, query, statuses }) => {
    const operation = operationOf(route);
    expect(operation).toBeDefined();
    for (const { status, codes, fields } of statuses) {
      const response = operation?.responses[String(status)];
      expect(response, `${route} ${status}`).toBeDefined();
      const schema = response?.content['application/json'].schema ?? {};
      if (codes !== undefined) {
        expect(errorCodesOf(schema)).toEqual(expect.arrayContaining([...codes]));
        expect(fieldsAt(schema, 'error')).toEqual(expect.arrayContaining(['code', 'message', 'details']));
      }
      for (const [at, names] of Object.entries(fields ?? {})) expect(fieldsAt(schema, at), `${route} ${status} ${at}`).toEqual(expect.arrayContaining([...names]));
    }
    for (const [at, names] of Object.entries(request ?? {})) expect(fieldsAt(operation?.requestBody?.content['application/json'].schema, at)).toEqual(expect.arrayContaining([...names]));
    for (const name of query ?? []) expect(operation?.parameters?.find((parameter) => parameter.name === name)).toMatchObject({ in: 'query', required: true });
  });

  it('answers a route no request takes with not_found, as docs/api.md#conventions says', () => {
    const check = createAnswerChecker(document);
    expect(check({ method: 'GET', path: '/v2/nothing', status: 404, body: { error: { code: 'not_found', message: 'No route.' } } })).toEqual({ describedBy: 'RouteNotFound', errors: [] });
  });

  it('says that deployed routes are IAM (SigV4) authorized', () => {
    expect(document.security).toEqual([{ sigv4: [] }]);
    expect(document.components.securitySchemes.sigv4).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization', 'x-amazon-apigateway-authtype': 'awsSigv4' });
  });

  it('refuses a body whose field is renamed, or that lacks one, or has one more', () => {
    const check = createAnswerChecker(JSON.parse(JSON.stringify(document)));
    const row = { message_group_id: 'g', depth: 1, oldest_wait_seconds: 3, keys_affected: 1, head_attempts: 2, last_error: 'HTTP 500', dead_lettered: 0, ordering_key: 'sub_1', accepted_per_minute: 12, delivered_per_minute: 40, is_falling_behind: false, is_paused: false, held_subscription_id: null, paused_at: null, pause_reason: null, subscription_id: 'sub_1', head_event_id: 'evt_1', head_failing_since: '2026-12-02T12:00:05.000Z', last_delivered_at: null };
    const lag = (groups: unknown[]) => check({ method: 'GET', path: '/v1/lag', status: 200, body: { groups, next_cursor: null } });
    expect(lag([row]).errors).toEqual([]);
    const { depth, ...withoutDepth } = row;
    expect(lag([{ ...withoutDepth, queue_depth: depth }]).errors).not.toEqual([]);
    expect(lag([withoutDepth]).errors).not.toEqual([]);
    expect(lag([{ ...row, extra: 1 }]).errors).not.toEqual([]);
    expect(check({ method: 'POST', path: '/v1/events', status: 418, body: { error: { code: 'x', message: 'm' } } }).errors).toEqual(['the document has no response POST /v1/events 418']);
  });
});

describe('RouteDescriptions', () => {
  it('requires a description of every route of ROUTES, with a schema for each path parameter', () => {
    const { 'GET /health': health, ...withoutHealth } = ROUTE_DESCRIPTIONS;
    // @ts-expect-error: a route of ROUTES without a description does not type-check.
    const incomplete: RouteDescriptions = withoutHealth;
    // @ts-expect-error: a route whose path has a parameter needs its schema.
    const withoutPath: RouteDescriptions = { ...ROUTE_DESCRIPTIONS, 'GET /v1/subscriptions/{subscription_id}': { ...ROUTE_DESCRIPTIONS['GET /v1/subscriptions/{subscription_id}'], path: {} } };
    expect(Object.keys(incomplete)).not.toContain('GET /health');
    expect(health.operationId).toBe('getHealth');
    expect(withoutPath['GET /v1/subscriptions/{subscription_id}'].path).toEqual({});
  });
});

describe('createIngestHandler', () => {
  it('answers GET /openapi.json with the API document', async () => {
    const unused = async (): Promise<never> => {
      throw new Error('not called');
    };
    const handler = createIngestHandler({
      ports: { ...NO_FAN_OUTS, findSubscriptionRouting: unused, recordAccepted: unused, recordGroupIntake: unused, sendBatch: unused, now: () => new Date(), uniqueId: () => 'request' },
      readSettings: unused,
      logger: createLogger('test', 'SILENT'),
    });
    const result = await handler(apiEvent({ routeKey: 'GET /openapi.json' }));
    expect(result).toMatchObject({ statusCode: 200, headers: { 'content-type': 'application/json' } });
    expect(jsonOf(result)).toEqual(JSON.parse(JSON.stringify(buildApiDocument())));
  });
});

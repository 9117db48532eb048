/**
 * Checks answers of the HTTP API against its OpenAPI document: the schema of the operation the
 * request's route is, for the status it answered (or, for a request no route takes, the document's
 * `RouteNotFound` / `MethodNotAllowed`). Shared by the unit tests of the document and the
 * integration tests, which check real answers of the local stack with it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import * as z from 'zod';
import { splitRouteKey } from '../../lambda/api-document/document.js';
import { matchRoute } from '../../local/route-match.js';

const jsonSchemaSchema = z.union([z.boolean(), z.record(z.string(), z.unknown())]);
const responseSchema = z.object({ content: z.object({ 'application/json': z.object({ schema: jsonSchemaSchema }) }) });
const operationSchema = z.object({ responses: z.record(z.string(), responseSchema) });

/** The parts of an OpenAPI document the checker reads: every answer's schema. */
export const checkedDocumentSchema = z.object({
  openapi: z.string().startsWith('3.1.'),
  paths: z.record(z.string(), z.record(z.string(), operationSchema)),
  components: z.object({ responses: z.object({ RouteNotFound: responseSchema, MethodNotAllowed: responseSchema }) }),
});

/** An answer as a test saw it. */
export interface SeenAnswer {
  readonly method: string;
  /** The request's path, without its query string. */
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
}

export interface AnswerCheck {
  /** Where the document describes the answer: `GET /v1/lag 200`, or `RouteNotFound`. */
  readonly describedBy: string;
  /** The validation errors; empty when the answer matches the document. */
  readonly errors: readonly string[];
}

/** A new JSON Schema 2020-12 validator, strict, with the formats (`date-time`) the document uses. */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

/** Checks answers against `document` (parsed JSON, validated here). */
export function createAnswerChecker(document: unknown): (answer: SeenAnswer) => AnswerCheck {
  const parsed = checkedDocumentSchema.parse(document);
  const ajv = createAjv();
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (key: string, schema: boolean | Record<string, unknown>): ValidateFunction => {
    const known = validators.get(key);
    if (known !== undefined) return known;
    const compiled = ajv.compile(schema);
    validators.set(key, compiled);
    return compiled;
  };
  return (answer) => {
    const match = matchRoute(answer.method, answer.path);
    let describedBy: string;
    let response: z.infer<typeof responseSchema> | undefined;
    if (match.kind === 'route') {
      const { method, path } = splitRouteKey(match.routeKey);
      describedBy = `${match.routeKey} ${answer.status}`;
      response = parsed.paths[path]?.[method]?.responses[String(answer.status)];
    } else {
      describedBy = match.kind === 'not_found' ? 'RouteNotFound' : 'MethodNotAllowed';
      response = match.kind === 'not_found' ? parsed.components.responses.RouteNotFound : parsed.components.responses.MethodNotAllowed;
    }
    if (response === undefined) return { describedBy, errors: [`the document has no response ${describedBy}`] };
    const validate = validatorOf(describedBy, response.content['application/json'].schema);
    const isValid = validate(answer.body);
    return { describedBy, errors: isValid ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '(body)'} ${error.message ?? ''} ${JSON.stringify(error.params)}`) };
  };
}

/**
 * API Gateway's routing, for the route keys of ROUTES (lambda/routes.ts): `METHOD /path` with
 * `{name}` segments that become path parameters. A path that some route has but not with this
 * method is a 405, a path no route has a 404, as the contract's error shape says.
 */
import { ROUTES, type ApiFunction } from '../lambda/routes.js';

/** One route of the HTTP API, parsed once. */
interface RouteTemplate {
  readonly routeKey: string;
  readonly method: string;
  readonly segments: readonly string[];
  readonly target: ApiFunction;
}

export type RouteMatch =
  | { readonly kind: 'route'; readonly routeKey: string; readonly target: ApiFunction; readonly pathParameters: Readonly<Record<string, string>> }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'method_not_allowed'; readonly allowedMethods: readonly string[] };

const PARAMETER = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

function parseRouteKey(routeKey: string, target: ApiFunction): RouteTemplate {
  const [method, path] = routeKey.split(' ');
  if (method === undefined || path === undefined) throw new Error(`Route key "${routeKey}" is not "METHOD /path"`);
  return { routeKey, method, segments: path.split('/').slice(1), target };
}

/** Every route of every function, from the one list the CDK stack also reads. */
export const ROUTE_TEMPLATES: readonly RouteTemplate[] = (Object.entries(ROUTES) as [ApiFunction, readonly string[]][]).flatMap(
  ([target, routeKeys]) => routeKeys.map((routeKey) => parseRouteKey(routeKey, target)),
);

/** API Gateway hands path parameters over decoded; a malformed escape is kept as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function matchPath(template: RouteTemplate, segments: readonly string[]): Record<string, string> | undefined {
  if (template.segments.length !== segments.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [index, expected] of template.segments.entries()) {
    const actual = segments[index] ?? '';
    const parameter = PARAMETER.exec(expected)?.[1];
    if (parameter === undefined) {
      if (actual !== expected) return undefined;
    } else {
      // API Gateway does not match an empty segment to a path parameter.
      if (actual === '') return undefined;
      parameters[parameter] = decodeSegment(actual);
    }
  }
  return parameters;
}

/** Finds the route for a method and a raw path (without query string). */
export function matchRoute(method: string, rawPath: string, templates: readonly RouteTemplate[] = ROUTE_TEMPLATES): RouteMatch {
  const segments = rawPath.split('/').slice(1);
  const allowedMethods: string[] = [];
  for (const template of templates) {
    const pathParameters = matchPath(template, segments);
    if (pathParameters === undefined) continue;
    if (template.method === method) return { kind: 'route', routeKey: template.routeKey, target: template.target, pathParameters };
    allowedMethods.push(template.method);
  }
  return allowedMethods.length === 0 ? { kind: 'not_found' } : { kind: 'method_not_allowed', allowedMethods };
}

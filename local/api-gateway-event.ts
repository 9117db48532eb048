/**
 * Builds the event API Gateway's HTTP API (payload format 2.0) hands a Lambda function, from a
 * request the local HTTP server received, so that the handlers see exactly what they see deployed.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** What the local server read from one request. */
export interface ReceivedRequest {
  readonly method: string;
  readonly rawPath: string;
  /** Without the leading `?`. */
  readonly rawQueryString: string;
  /** Node's header map: names already lower-case, repeated headers as arrays. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
  readonly sourceIp: string;
  readonly domainName: string;
  readonly requestId: string;
  readonly receivedAt: Date;
}

/** The matched route: API Gateway's route key and the path parameters of its `{name}` segments. */
export interface MatchedRoute {
  readonly routeKey: string;
  readonly pathParameters: Readonly<Record<string, string>>;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** API Gateway's `requestContext.time`: `12/Mar/2020:19:03:58 +0000`. */
export function formatRequestTime(at: Date): string {
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${pad(at.getUTCDate())}/${MONTHS[at.getUTCMonth()]}/${at.getUTCFullYear()}:${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())} +0000`;
}

/** HTTP API joins repeated headers with commas and passes cookies apart. */
function toEventHeaders(headers: ReceivedRequest['headers']): Record<string, string> {
  const joined: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name === 'cookie') continue;
    joined[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return joined;
}

/** HTTP API joins repeated query parameters with commas. */
function toQueryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (rawQueryString === '') return undefined;
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    parameters[name] = parameters[name] === undefined ? value : `${parameters[name]},${value}`;
  }
  return parameters;
}

/**
 * Strict, and keeping a leading byte order mark as U+FEFF: dropped here, a body with one would be
 * accepted locally, while the API refuses it (see `readJsonBody`), as it receives it deployed.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A body that is valid UTF-8 travels as text; anything else base64-encoded, as API Gateway does. */
function toEventBody(body: Buffer): { body?: string; isBase64Encoded: boolean } {
  if (body.byteLength === 0) return { isBase64Encoded: false };
  try {
    return { body: utf8.decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
}

/** The API Gateway HTTP API v2 event of one request for one route (`$default` when none matched). */
export function toApiGatewayEvent(request: ReceivedRequest, route: MatchedRoute | undefined): APIGatewayProxyEventV2 {
  const headers = toEventHeaders(request.headers);
  const cookieHeader = request.headers.cookie;
  const cookies = cookieHeader === undefined ? undefined : (Array.isArray(cookieHeader) ? cookieHeader : [cookieHeader]).flatMap((value) => value.split(/;\s*/));
  const queryStringParameters = toQueryParameters(request.rawQueryString);
  const routeKey = route?.routeKey ?? '$default';
  const hasPathParameters = route !== undefined && Object.keys(route.pathParameters).length > 0;
  return {
    version: '2.0',
    routeKey,
    rawPath: request.rawPath,
    rawQueryString: request.rawQueryString,
    ...(cookies === undefined ? {} : { cookies }),
    headers,
    ...(queryStringParameters === undefined ? {} : { queryStringParameters }),
    ...(hasPathParameters ? { pathParameters: { ...route.pathParameters } } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: request.domainName,
      domainPrefix: request.domainName.split('.')[0] ?? request.domainName,
      http: {
        method: request.method,
        path: request.rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: request.requestId,
      routeKey,
      stage: '$default',
      time: formatRequestTime(request.receivedAt),
      timeEpoch: request.receivedAt.getTime(),
    },
    ...toEventBody(request.body),
  };
}

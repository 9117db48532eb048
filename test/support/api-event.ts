import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** An API Gateway HTTP API (v2) event, as API Gateway would build it for `routeKey`. */
export function apiEvent(input: {
  routeKey: string;
  body?: string;
  isBase64Encoded?: boolean;
  pathParameters?: Record<string, string>;
}): APIGatewayProxyEventV2 {
  const [method = 'GET', path = '/'] = input.routeKey.split(' ');
  return {
    version: '2.0',
    routeKey: input.routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'example.com',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'request-1',
      routeKey: input.routeKey,
      stage: '$default',
      time: '02/Dec/2026:12:00:00 +0000',
      timeEpoch: 1_796_212_800_000,
    },
    isBase64Encoded: input.isBase64Encoded ?? false,
    ...(input.body === undefined ? {} : { body: input.body }),
    ...(input.pathParameters === undefined ? {} : { pathParameters: input.pathParameters }),
  };
}

/** The JSON body of a handler's result. */
export function jsonOf(result: APIGatewayProxyStructuredResultV2): unknown {
  return JSON.parse(result.body ?? 'null');
}

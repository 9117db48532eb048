import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ROUTES, type ApiFunction, type RouteKey } from '../lambda/routes.js';

export type { RouteKey };

/** Properties of {@link WebhookApi}. */
export interface WebhookApiProps {
  /** The function behind each group of ROUTES. */
  readonly functions: Readonly<Record<ApiFunction, lambda.IFunction>>;
  /**
   * How long the access log group keeps its events.
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly accessLogRetention?: logs.RetentionDays;
}

/**
 * The HTTP API of docs/api.md#routes: every route of ROUTES, each signed with AWS SigV4 (IAM
 * authorization), on the `$default` stage with JSON access logs.
 */
export class WebhookApi extends Construct {
  readonly httpApi: apigwv2.HttpApi;
  readonly stage: apigwv2.HttpStage;
  readonly accessLogGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: WebhookApiProps) {
    super(scope, id);

    this.httpApi = new apigwv2.HttpApi(this, 'HttpApi', {
      description: 'Per-key ordered webhook delivery',
      defaultAuthorizer: new HttpIamAuthorizer(),
      // The stage is declared below: the default one cannot be given access logging.
      createDefaultStage: false,
    });

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.accessLogRetention ?? logs.RetentionDays.ONE_YEAR,
    });
    this.stage = new apigwv2.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLogGroup),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            sourceIp: '$context.identity.sourceIp',
            caller: '$context.identity.caller',
            userArn: '$context.identity.userArn',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            responseLatencyMs: '$context.responseLatency',
            integrationStatus: '$context.integrationStatus',
            integrationErrorMessage: '$context.integrationErrorMessage',
            errorMessage: '$context.error.message',
          }),
        ),
      },
    });

    for (const name of Object.keys(ROUTES) as ApiFunction[]) {
      const integration = new HttpLambdaIntegration(`${name}Integration`, props.functions[name]);
      for (const routeKey of ROUTES[name]) {
        const { method, path } = parseRouteKey(routeKey);
        this.httpApi.addRoutes({ path, methods: [method], integration });
      }
    }
  }

  /** The API's base URL, with a trailing slash. */
  get url(): string {
    return this.stage.url;
  }

  /**
   * The `execute-api` ARN of one route on this API's stage. A path parameter (`{name}`) stands for
   * any one value, as IAM matches it.
   */
  arnForRoute(routeKey: RouteKey): string {
    const { method, path } = parseRouteKey(routeKey);
    return this.httpApi.arnForExecuteApi(method, path.replace(/\{[^}]+\}/g, '*'), this.stage.stageName);
  }

  /**
   * Lets `grantee` call exactly `routeKeys` on this API's stage (`execute-api:Invoke` on each
   * route's ARN), and no other route or stage. The routes are IAM-authorized, so this is what
   * decides who may call them.
   *
   * IAM's `*` matches `/` too, so the ARN of `GET /v1/subscriptions/{subscription_id}` also matches
   * `GET /v1/subscriptions/{subscription_id}/secret`. Every route of ROUTES that a granted ARN
   * matches but `routeKeys` does not name is denied to `grantee` in the same grant: a grant never
   * reaches a route it does not name. A Deny outweighs every Allow, so a principal that needs both
   * routes gets them in one call.
   */
  grantInvokeRoutes(grantee: iam.IGrantable, routeKeys: readonly RouteKey[]): iam.Grant {
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:Invoke'],
      resourceArns: routeKeys.map((routeKey) => this.arnForRoute(routeKey)),
    });
    const matchedOnly = routesMatchedBy(routeKeys).filter((routeKey) => !routeKeys.includes(routeKey));
    if (matchedOnly.length > 0) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({ effect: iam.Effect.DENY, actions: ['execute-api:Invoke'], resources: matchedOnly.map((routeKey) => this.arnForRoute(routeKey)) }),
      );
    }
    return grant;
  }
}

/**
 * The routes of ROUTES that the IAM resource patterns of `routeKeys` match, as IAM matches them:
 * a path parameter is `*`, and `*` matches any characters, `/` included.
 */
export function routesMatchedBy(routeKeys: readonly RouteKey[]): RouteKey[] {
  const patterns = routeKeys.map((routeKey) => {
    const { method, path } = parseRouteKey(routeKey);
    const source = path
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return new RegExp(`^${method} ${source}$`);
  });
  const all: readonly RouteKey[] = Object.values(ROUTES).flat();
  // A route's own `{name}` stands for one value, which has no `/`.
  return all.filter((routeKey) => patterns.some((pattern) => pattern.test(routeKey.replace(/\{[^}]+\}/g, 'x'))));
}

/** Splits an API Gateway route key such as `GET /health` into its method and path. */
function parseRouteKey(routeKey: string): { method: apigwv2.HttpMethod; path: string } {
  const [verb, path, ...rest] = routeKey.split(' ');
  const method = Object.values(apigwv2.HttpMethod).find((candidate) => candidate === verb);
  if (method === undefined || path === undefined || !path.startsWith('/') || rest.length > 0) {
    throw new Error(`Route key "${routeKey}" is not "<METHOD> /<path>"`);
  }
  return { method, path };
}

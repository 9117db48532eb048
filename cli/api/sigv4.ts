/**
 * AWS Signature Version 4 for the deployed API, whose routes use IAM authorization: service
 * `execute-api`, credentials from the default AWS chain (environment, SSO, profiles, instance or
 * container role), region from `--region`, the API's host name, or `AWS_REGION`.
 */
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { SigningError } from '../errors.js';
import type { RequestSigner } from './client.js';
import { NodeSha256 } from './sha256.js';

/** The signing name of API Gateway's invoke API. */
export const SIGV4_SERVICE = 'execute-api';

/** `abc123.execute-api.eu-west-1.amazonaws.com` → `eu-west-1`. */
const EXECUTE_API_HOST = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/;

/** Whether requests to this host name are signed without being asked to: AWS endpoints are. */
export function isAwsHost(hostname: string): boolean {
  return hostname.endsWith('.amazonaws.com');
}

/** The region an `execute-api` host name names, if it does. */
export function regionFromHost(hostname: string): string | undefined {
  return EXECUTE_API_HOST.exec(hostname)?.[1];
}

export interface SigV4SignerOptions {
  readonly region: string;
  /** The default AWS credential chain when absent. */
  readonly credentials?: ConstructorParameters<typeof SignatureV4>[0]['credentials'];
}

export function createSigV4Signer(options: SigV4SignerOptions): RequestSigner {
  const signer = new SignatureV4({
    service: SIGV4_SERVICE,
    region: options.region,
    credentials: options.credentials ?? defaultProvider(),
    sha256: NodeSha256,
  });
  return async (request) => {
    const { url } = request;
    let signed: Awaited<ReturnType<typeof signer.sign>>;
    try {
      signed = await signer.sign({
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port === '' ? {} : { port: Number(url.port) }),
        path: url.pathname,
        query: { ...request.query },
        // `host` is signed as fetch will send it: with the port when it is not the default.
        headers: { ...request.headers, host: url.host },
        ...(request.body === undefined ? {} : { body: request.body }),
      });
    } catch (error) {
      throw new SigningError(`Cannot sign the request with SigV4: ${error instanceof Error ? error.message : String(error)}`);
    }
    return Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name, String(value)]));
  };
}

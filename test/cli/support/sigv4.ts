/**
 * A request's SigV4 signature recomputed from what the fake API received, with the test's own
 * credentials: equal to the one the CLI sent only if the CLI signed exactly what it sent.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../../../cli/api/sha256.js';
import type { RecordedRequest } from './fake-api.js';

/** The headers an `authorization` header says were signed (`SignedHeaders=a;b;c`). */
function signedHeadersOf(authorization: string): string[] {
  return /SignedHeaders=([a-z0-9;-]+)/.exec(authorization)?.[1]?.split(';') ?? [];
}

/** The `authorization` that signing `request` as received, in eu-west-1 for execute-api, gives. */
export async function expectedAuthorization(request: RecordedRequest, port: number, credentials: ConstructorParameters<typeof SignatureV4>[0]['credentials']): Promise<string | undefined> {
  const signedHeaders = signedHeadersOf(String(request.headers.authorization));
  const amzDate = String(request.headers['x-amz-date']);
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const signer = new SignatureV4({ service: 'execute-api', region: 'eu-west-1', credentials, sha256: NodeSha256 });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'http:',
      hostname: '127.0.0.1',
      port,
      path: request.path,
      query: Object.fromEntries(request.query),
      headers: Object.fromEntries(signedHeaders.map((name) => [name, String(request.headers[name])])),
      ...(request.rawBody === '' ? {} : { body: request.rawBody }),
    },
    { signingDate },
  );
  return signed.headers.authorization;
}

/**
 * A request signer for the emulators that does not sign: it writes an `Authorization` header of
 * SigV4's shape with no signature computed.
 *
 * Why: the local stack runs its emulators, its handlers and their SDK clients on one event loop
 * (docs/performance.md), and SigV4 costs CPU on every call (hashing the body, an HMAC chain over the canonical
 * request) that the emulators never check. Why a header at all: dynalite 4 refuses a request
 * without one (`MissingAuthenticationTokenException`) and checks that it names `Credential`,
 * `SignedHeaders` and `Signature` beside an `X-Amz-Date`, but never verifies the signature;
 * fauxqs 2.4.1 checks nothing and takes a new queue's region from the credential scope, falling
 * back to the region it was started with. Local only: Lambda's clients keep the SDK's signer
 * (lambda/adapters/aws-clients.ts, `signer` unset).
 */
import type { RequestSigner } from '../lambda/adapters/aws-clients.js';

/** What stands where a signature would be: never a valid one, so it cannot be mistaken for one. */
export const UNSIGNED_SIGNATURE = 'unsigned';

/** `20261203T144015Z`, SigV4's basic ISO 8601 form. */
function amzDate(at: Date): string {
  return at.toISOString().replace(/[-:]|\.\d{3}/g, '');
}

/**
 * A signer that labels each request as SigV4 would for `accessKeyId`, `region` and `service`
 * (the SDK tells a signer given in its configuration neither), with {@link UNSIGNED_SIGNATURE} in
 * place of the signature.
 */
export function createUnsignedRequestSigner(input: { readonly accessKeyId: string; readonly region: string; readonly service: string }): RequestSigner {
  return {
    sign: async (request) => {
      const at = amzDate(new Date());
      request.headers['x-amz-date'] = at;
      request.headers.authorization = `AWS4-HMAC-SHA256 Credential=${input.accessKeyId}/${at.slice(0, 8)}/${input.region}/${input.service}/aws4_request, SignedHeaders=host, Signature=${UNSIGNED_SIGNATURE}`;
      return request;
    },
  };
}

import { describe, expect, it } from 'vitest';
import { createUnsignedRequestSigner, UNSIGNED_SIGNATURE } from '../../../local/unsigned-requests.js';

describe('createUnsignedRequestSigner', () => {
  it('labels a request with an Authorization header of SigV4’s shape and no signature when asked to sign it', async () => {
    const signer = createUnsignedRequestSigner({ accessKeyId: 'local', region: 'eu-west-1', service: 'sqs' });
    const request = { method: 'POST', protocol: 'http:', hostname: '127.0.0.1', port: 4566, path: '/', query: {}, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: '{}' };
    const signed = await signer.sign(request);
    expect(signed.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(signed.body).toBe('{}');
    const date = signed.headers['x-amz-date'] ?? '';
    // dynalite wants X-Amz-Date beside Credential, SignedHeaders and Signature; fauxqs reads the
    // region from the credential scope.
    expect(date).toMatch(/^\d{8}T\d{6}Z$/);
    expect(signed.headers.authorization).toBe(`AWS4-HMAC-SHA256 Credential=local/${date.slice(0, 8)}/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=${UNSIGNED_SIGNATURE}`);
  });
});

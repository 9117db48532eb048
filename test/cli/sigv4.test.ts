/**
 * SigV4 signing for a deployed API (IAM authorization): with `--sigv4`, every request carries a
 * well-formed `execute-api` signature over exactly what is sent (host with its port, encoded
 * path and query, body), made with credentials from the default AWS chain.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isAwsHost, regionFromHost } from '../../cli/api/sigv4.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';
import { expectedAuthorization } from './support/sigv4.js';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-example' };
/** One dead letter, so that the command makes no second request. */
const LETTER = { event_id: 'evt_1', subscription_id: "sub a/b+c*'", message_group_id: 'g', sequence: 1, attempts: 5, reason: 'HTTP 500', dead_lettered_at: '2025-01-02T15:04:05.000Z' };
const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/(\d{8})\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;


describe('SigV4 signing', () => {
  const api = useFakeApi();

  beforeEach(() => {
    // The default credential chain reads the environment first.
    vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey);
    vi.stubEnv('AWS_SESSION_TOKEN', CREDENTIALS.sessionToken);
  });

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  const port = (): number => Number(new URL(api.url).port);

  it('signs a GET with a query for execute-api in the given region, over what is sent', async () => {
    api.on('GET /v1/dead-letters', { status: 200, body: { items: [LETTER] } });

    const run = await runCommand(['dead-letters', '--url', api.url, '--sigv4', '--region', 'eu-west-1', '--subscription', "sub a/b+c*'"]);

    expect(run.exitCode).toBe(ExitCode.ok);
    const [request] = api.requests;
    if (request === undefined) throw new Error('no request');
    const match = AUTHORIZATION.exec(String(request.headers.authorization));
    expect(match).not.toBeNull();
    expect(match?.[2]?.split(';')).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']));
    expect(request.headers['x-amz-date']).toMatch(new RegExp(`^${match?.[1]}T\\d{6}Z$`));
    expect(request.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
    expect(request.headers.host).toBe(`127.0.0.1:${port()}`);
    expect(request.rawQuery).toBe('subscription_id=sub%20a%2Fb%2Bc%2A%27&limit=1000');
    expect(await expectedAuthorization(request, port(), CREDENTIALS)).toBe(request.headers.authorization);
  });

  it('signs a POST body with its SHA-256', async () => {
    api.on('POST /v1/groups/partition-1/skip', { status: 202, body: { message_group_id: 'partition-1', event_id: 'evt_1', status: 'skip_requested' } });

    const run = await runCommand(['skip', '--url', api.url, '--sigv4', '--group', 'partition-1', '--event', 'evt_1'], { environment: { AWS_REGION: 'eu-west-1' } });

    expect(run.exitCode).toBe(ExitCode.ok);
    const [request] = api.requests;
    if (request === undefined) throw new Error('no request');
    expect(request.headers['x-amz-content-sha256']).toBe(createHash('sha256').update(request.rawBody).digest('hex'));
    expect(await expectedAuthorization(request, port(), CREDENTIALS)).toBe(request.headers.authorization);
  });

  it('sends no signature without --sigv4 to a host that is not AWS', async () => {
    api.on('GET /v1/lag', { status: 200, body: { groups: [] } });

    await runCommand(['lag', '--url', api.url, '--region', 'eu-west-1']);

    expect(api.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('exits 2 without a request when signing has no region', async () => {
    const run = await runCommand(['lag', '--url', api.url, '--sigv4']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('Signing needs a region: give --region, or set AWS_REGION.');
    expect(api.requests).toHaveLength(0);
  });
});

describe('AWS hosts', () => {
  it.each([
    ['abc123.execute-api.eu-west-1.amazonaws.com', true, 'eu-west-1'],
    ['abc123.execute-api.us-gov-west-1.amazonaws.com', true, 'us-gov-west-1'],
    ['vpce-1.execute-api.amazonaws.com', true, undefined],
    ['api.example.com', false, undefined],
    ['127.0.0.1', false, undefined],
  ])('%s is signed: %s, region %s', (hostname, isSigned, region) => {
    expect(isAwsHost(hostname)).toBe(isSigned);
    expect(regionFromHost(hostname)).toBe(region);
  });
});

/**
 * `ordered-webhooks secret` against a fake API: it reads `GET /v1/subscriptions/{id}/secret`, the
 * one route that answers a stored secret, and prints the previous secret only when the API gives it.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const SECRET = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
const PREVIOUS = 'whsec_' + Buffer.alloc(32, 2).toString('base64');
const ROUTE = 'GET /v1/subscriptions/sub_alice/secret';

describe('secret command', () => {
  const api = useFakeApi();

  it('prints the secret in force, read from the secret route', async () => {
    api.on(ROUTE, { status: 200, body: { secret: SECRET } });

    const run = await runCommand(['secret', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    expect(api.calls()).toEqual([ROUTE]);
    expect(run.stdout).toBe(`Secret of sub_alice: ${SECRET}\n`);
  });

  it('prints the previous secret and the end of its grace during a rotation, and the answer with --json', async () => {
    const body = { secret: SECRET, previous_secret: PREVIOUS, previous_secret_expires_at: '2026-12-04T12:00:00.000Z' };
    api.on(ROUTE, { status: 200, body });

    const run = await runCommand(['secret', '--url', api.url, '--subscription', 'sub_alice']);
    expect(run.stdout).toBe(`Secret of sub_alice: ${SECRET}\nPrevious secret, signing beside it until 2026-12-04T12:00:00.000Z: ${PREVIOUS}\n`);

    const json = await runCommand(['secret', '--url', api.url, '--subscription', 'sub_alice', '--json']);
    expect(JSON.parse(json.stdout)).toEqual(body);
  });

  it('exits 1 with the code when the subscription does not exist, and 2 without --subscription', async () => {
    api.on(ROUTE, apiError(404, 'not_found', 'No such subscription.'));

    const missing = await runCommand(['secret', '--url', api.url, '--subscription', 'sub_alice']);
    expect(missing.exitCode).toBe(ExitCode.failed);
    expect(missing.stderr).toBe(`ordered-webhooks secret: ${ROUTE} answered 404 not_found: No such subscription.\n`);

    const usage = await runCommand(['secret', '--url', api.url]);
    expect(usage.exitCode).toBe(ExitCode.usage);
  });
});

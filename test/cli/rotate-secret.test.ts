/**
 * `ordered-webhooks rotate-secret` against a fake API: the request, the answer, and its refusals.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const NEW_SECRET = 'whsec_' + Buffer.alloc(32, 1).toString('base64');
const ROTATED = { status: 200, body: { subscription_id: 'sub_alice', secret: NEW_SECRET, previous_secret_expires_at: '2026-12-04T12:00:00.000Z' } };
const ROUTE = 'POST /v1/subscriptions/sub_alice/secret/rotate';

describe('rotate-secret command', () => {
  const api = useFakeApi();

  it('rotates with an empty body by default and prints the new secret and the end of the grace', async () => {
    api.on(ROUTE, ROTATED);

    const run = await runCommand(['rotate-secret', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests[0]?.body).toEqual({});
    expect(run.stdout).toBe(`New secret of sub_alice: ${NEW_SECRET}\nThe previous secret keeps signing until 2026-12-04T12:00:00.000Z.\n`);
  });

  it('sends --secret and --grace in seconds, and prints the answer with --json', async () => {
    api.on(ROUTE, ROTATED);

    const run = await runCommand(['rotate-secret', '--url', api.url, '--subscription', 'sub_alice', '--secret', NEW_SECRET, '--grace', '1h30m', '--json']);

    expect(api.requests[0]?.body).toEqual({ secret: NEW_SECRET, grace_seconds: 5_400 });
    expect(JSON.parse(run.stdout)).toEqual(ROTATED.body);
  });

  it('says the given secret signs when the API answers none (it answers only a secret it generated)', async () => {
    api.on(ROUTE, { status: 200, body: { subscription_id: 'sub_alice', previous_secret_expires_at: '2026-12-04T12:00:00.000Z' } });

    const run = await runCommand(['rotate-secret', '--url', api.url, '--subscription', 'sub_alice', '--secret', NEW_SECRET]);

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    expect(run.stdout).toBe('The given secret of sub_alice signs from now on.\nThe previous secret keeps signing until 2026-12-04T12:00:00.000Z.\n');
  });

  it('sends a grace of 0 to end the previous secret at once', async () => {
    api.on(ROUTE, ROTATED);

    await runCommand(['rotate-secret', '--url', api.url, '--subscription', 'sub_alice', '--grace', '0']);

    expect(api.requests[0]?.body).toEqual({ grace_seconds: 0 });
  });

  it.each([['soon'], ['500ms'], ['1.5']])('exits 2 and sends nothing for --grace %s', async (grace) => {
    const run = await runCommand(['rotate-secret', '--url', api.url, '--subscription', 'sub_alice', '--grace', grace]);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('--grace must be a whole number of seconds');
    expect(api.requests).toEqual([]);
  });

  it('exits 1 with the code when the subscription does not exist', async () => {
    api.on(ROUTE, apiError(404, 'not_found', 'No such subscription.'));

    const run = await runCommand(['rotate-secret', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toBe(`ordered-webhooks rotate-secret: ${ROUTE} answered 404 not_found: No such subscription.\n`);
  });
});

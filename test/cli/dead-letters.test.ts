/**
 * `ordered-webhooks dead-letters` against a fake API.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { apiError, startFakeApi, type FakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const LETTER = {
  event_id: 'evt_a2',
  subscription_id: 'sub alice/1',
  message_group_id: '3f2a9c0e1b7d4a6e8f0c2b4d6e8a0c1f',
  sequence: 2,
  attempts: 5,
  reason: 'HTTP 500 after 5 attempts',
  dead_lettered_at: '2025-01-02T15:04:05.000Z',
};

describe('dead-letters command', () => {
  let api: FakeApi;

  beforeEach(async () => {
    api = await startFakeApi();
  });

  afterEach(async () => {
    await api.stop();
  });

  it('asks for the subscription, encoded, and prints a table', async () => {
    api.on('GET /v1/dead-letters', { status: 200, body: { items: [LETTER] } });

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests[0]?.rawQuery).toBe('subscription_id=sub%20alice%2F1');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^EVENT ID\s+SEQUENCE\s+ATTEMPTS\s+DEAD-LETTERED AT\s+REASON$/);
    expect(lines[1]?.split(/\s{2,}/)).toEqual(['evt_a2', '2', '5', '2025-01-02T15:04:05.000Z', 'HTTP 500 after 5 attempts']);
  });

  it('prints the answer with --json and a sentence when there is none', async () => {
    api.on('GET /v1/dead-letters', [
      { status: 200, body: { items: [LETTER] } },
      { status: 200, body: { items: [] } },
    ]);

    const json = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1', '--json']);
    const none = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(JSON.parse(json.stdout)).toEqual({ items: [LETTER] });
    expect(none.stdout).toBe('Subscription sub alice/1 has no dead letters.\n');
  });

  it('exits 2 without a request when --subscription is missing', async () => {
    const run = await runCommand(['dead-letters', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('--subscription is required.');
    expect(run.stderr).toContain('See `ordered-webhooks dead-letters --help`.');
    expect(api.requests).toHaveLength(0);
  });

  it("exits 1 with the API's details when the request is refused as invalid", async () => {
    api.on('GET /v1/dead-letters', {
      status: 400,
      body: { error: { code: 'invalid_request', message: 'Name the subscription.', details: [{ path: 'subscription_id', message: 'Too long' }] } },
    });

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'x']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('GET /v1/dead-letters answered 400 invalid_request: Name the subscription.\n  subscription_id: Too long');
  });

  it('exits 4 when the API refuses with 422', async () => {
    api.on('GET /v1/dead-letters', apiError(422, 'unknown_subscription', 'No such subscription.'));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'x']);

    expect(run.exitCode).toBe(ExitCode.refused);
    expect(run.stderr).toContain('422 unknown_subscription: No such subscription.');
  });
});

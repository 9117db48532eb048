/**
 * `ordered-webhooks pause` and `resume` against a fake API: the requests, the answers, and their refusals.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const PAUSE = 'POST /v1/subscriptions/sub_alice/pause';
const RESUME = 'POST /v1/subscriptions/sub_alice/resume';
const PAUSED = { status: 200, body: { subscription_id: 'sub_alice', is_paused: true, paused_at: '2026-12-04T12:00:00.000Z', pause_reason: 'receiver migration' } };
const RESUMED = { status: 200, body: { subscription_id: 'sub_alice', is_paused: false, paused_at: null, pause_reason: null, resumed_at: '2026-12-04T13:00:00.000Z', released_groups: 3 } };

describe('pause command', () => {
  const api = useFakeApi();

  it('pauses with the reason given and prints the pause in force and how to resume', async () => {
    api.on(PAUSE, PAUSED);

    const run = await runCommand(['pause', '--url', api.url, '--subscription', 'sub_alice', '--reason', 'receiver migration']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests[0]?.body).toEqual({ reason: 'receiver migration' });
    expect(run.stdout).toBe('Subscription sub_alice is paused since 2026-12-04T12:00:00.000Z (receiver migration). Resume it with: ordered-webhooks resume --subscription sub_alice\n');
  });

  it('sends an empty body without --reason, and prints the answer with --json', async () => {
    api.on(PAUSE, PAUSED);

    const run = await runCommand(['pause', '--url', api.url, '--subscription', 'sub_alice', '--json']);

    expect(api.requests[0]?.body).toEqual({});
    expect(JSON.parse(run.stdout)).toEqual(PAUSED.body);
  });

  it('exits 2 and sends nothing without --subscription', async () => {
    const run = await runCommand(['pause', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('--subscription');
    expect(api.requests).toEqual([]);
  });

  it('exits 1 naming the subscription when there is none', async () => {
    api.on(PAUSE, apiError(404, 'not_found', 'No such subscription.'));

    const run = await runCommand(['pause', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('sub_alice');
  });

  it('exits 1 with the API\'s reason for a refused --reason', async () => {
    api.on(PAUSE, apiError(400, 'invalid_request', 'The request body is not valid.'));

    const run = await runCommand(['pause', '--url', api.url, '--subscription', 'sub_alice', '--reason', '']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('400 invalid_request');
  });
});

describe('resume command', () => {
  const api = useFakeApi();

  it('resumes and prints how many held groups were let go', async () => {
    api.on(RESUME, RESUMED);

    const run = await runCommand(['resume', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe('Subscription sub_alice resumed at 2026-12-04T13:00:00.000Z; 3 held groups let go.\n');
  });

  it('says how many parked events it sent back first, when it sent some', async () => {
    api.on(RESUME, { status: 200, body: { ...RESUMED.body, released_groups: 1, unparked_events: 120 } });

    const run = await runCommand(['resume', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe('Subscription sub_alice resumed at 2026-12-04T13:00:00.000Z; 1 held group let go; 120 parked events sent back first.\n');
  });

  it('prints the answer with --json', async () => {
    api.on(RESUME, RESUMED);

    const run = await runCommand(['resume', '--url', api.url, '--subscription', 'sub_alice', '--json']);

    expect(JSON.parse(run.stdout)).toEqual(RESUMED.body);
  });

  it('exits 1 naming the subscription when there is none', async () => {
    api.on(RESUME, apiError(404, 'not_found', 'No such subscription.'));

    const run = await runCommand(['resume', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('sub_alice');
  });
});

/**
 * `ordered-webhooks dead-letters` against a fake API: the table, --json, the pages it follows,
 * and the exit codes of failures.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { inTwoPages, deadLettersPage, subscriptionAnswer } from './support/answers.js';
import { apiError, useFakeApi } from './support/fake-api.js';
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
const LATER = { ...LETTER, event_id: 'evt_a5', sequence: 5, dead_lettered_at: '2025-01-02T15:09:00.000Z' };
/** Moved by SQS's backstop before the consumer gave it a sequence. */
const UNNUMBERED = { ...LETTER, event_id: 'evt_b1', sequence: null, attempts: 0, reason: 'moved to the dead-letter queue by SQS after 60 receives' };


describe('dead-letters command', () => {
  const api = useFakeApi();

  it('asks for the subscription, encoded, and prints a table', async () => {
    api.on('GET /v1/dead-letters', deadLettersPage([LETTER]));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests[0]?.rawQuery).toBe('subscription_id=sub%20alice%2F1&limit=1000');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^EVENT ID\s+SEQUENCE\s+ATTEMPTS\s+DEAD-LETTERED AT\s+REASON$/);
    expect(lines[1]?.split(/\s{2,}/)).toEqual(['evt_a2', '2', '5', '2025-01-02T15:04:05.000Z', 'HTTP 500 after 5 attempts']);
  });

  it('prints the answer with --json and a sentence when there is none', async () => {
    api.on('GET /v1/dead-letters', [
      deadLettersPage([LETTER]),
      deadLettersPage([]),
    ]);
    api.on('GET /v1/subscriptions/sub alice/1', subscriptionAnswer('sub alice/1'));

    const json = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1', '--json']);
    const none = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(JSON.parse(json.stdout)).toEqual({ items: [LETTER] });
    expect(none.stdout).toBe('Subscription sub alice/1 has no dead letters.\n');
  });

  it('follows next_cursor to the last page and prints every row, as one page would', async () => {
    api.on('GET /v1/dead-letters', inTwoPages(deadLettersPage, [LETTER, LATER], [UNNUMBERED]));
    const paged = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);
    const requests = api.requests.map((request) => Object.fromEntries(request.query));
    api.on('GET /v1/dead-letters', deadLettersPage([LETTER, LATER, UNNUMBERED], null));
    const whole = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(paged.exitCode).toBe(ExitCode.ok);
    expect(paged.stdout.trimEnd().split('\n').map((line) => line.split(/\s{2,}/).slice(0, 2))).toEqual([
      ['EVENT ID', 'SEQUENCE'],
      ['evt_a2', '2'],
      ['evt_a5', '5'],
      ['evt_b1', '-'],
    ]);
    expect(paged.stdout).toBe(whole.stdout);
    expect(requests).toEqual([
      { subscription_id: 'sub alice/1', limit: '1000' },
      { subscription_id: 'sub alice/1', limit: '1000', cursor: 'page-2' },
    ]);
  });

  it('prints the items of every page with --json, in the shape of one answer', async () => {
    api.on('GET /v1/dead-letters', inTwoPages(deadLettersPage, [LETTER], [{ ...UNNUMBERED, added_later: 'kept' }]));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1', '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({ items: [LETTER, { ...UNNUMBERED, added_later: 'kept' }] });
  });

  it('says so when every page is empty', async () => {
    api.on('GET /v1/dead-letters', inTwoPages(deadLettersPage, [], []));
    api.on('GET /v1/subscriptions/sub alice/1', subscriptionAnswer('sub alice/1'));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe('Subscription sub alice/1 has no dead letters.\n');
    expect(api.calls()).toEqual(['GET /v1/dead-letters', 'GET /v1/dead-letters', 'GET /v1/subscriptions/sub alice/1']);
  });

  it('exits 1 saying there is no such subscription when the list is empty and the subscription unknown', async () => {
    api.on('GET /v1/dead-letters', deadLettersPage([], null));
    api.on('GET /v1/subscriptions/sub_nobody', apiError(404, 'not_found', 'No subscription sub_nobody.'));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub_nobody']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('ordered-webhooks dead-letters: There is no subscription named sub_nobody.\n');
  });

  it('prints the unknown subscription as a JSON error on stdout with --json, exit 1', async () => {
    api.on('GET /v1/dead-letters', deadLettersPage([], null));
    api.on('GET /v1/subscriptions/sub_nobody', apiError(404, 'not_found', 'No subscription sub_nobody.'));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub_nobody', '--json']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'unknown_subscription', message: 'There is no subscription named sub_nobody.' } });
    expect(run.stderr).toBe('');
  });

  it('does not ask for the subscription when it has dead letters', async () => {
    api.on('GET /v1/dead-letters', deadLettersPage([LETTER], null));

    await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(api.calls()).toEqual(['GET /v1/dead-letters']);
  });

  it('exits 1 instead of paging forever when the API gives the same cursor twice', async () => {
    api.on('GET /v1/dead-letters', deadLettersPage([LETTER], 'again'));

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('GET /v1/dead-letters gave the cursor again twice');
    expect(api.requests).toHaveLength(2);
  });

  it('exits 1 naming the page when a later page fails, and prints nothing', async () => {
    api.on('GET /v1/dead-letters', [deadLettersPage([LETTER], 'page-2'), apiError(500, 'internal_error', 'Boom.')]);

    const run = await runCommand(['dead-letters', '--url', api.url, '--subscription', 'sub alice/1']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('ordered-webhooks dead-letters: GET /v1/dead-letters answered 500 internal_error: Boom.\n');
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

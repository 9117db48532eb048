/**
 * `ordered-webhooks skip` against a fake API: the request, its refusals, and `--wait`.
 */
import { describe, expect, it } from 'vitest';
import { hasHeadMovedOn } from '../../cli/commands/skip.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { messageGroupIdFor } from '../../lambda/core/routing.js';
import { lagPage, subscriptionAnswer } from './support/answers.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const GROUP = 'partition-3';
const SKIPPED = { status: 202, body: { message_group_id: GROUP, event_id: 'evt_7', status: 'skip_requested' } };

/** `GET /v1/routing`, accepting events. */
function routingAnswer(partitionCount: number | null) {
  return { status: 200, body: { version: 1, partition_count: partitionCount, is_paused: false, paused_at: null, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } } };
}

function lagRow(headAttempts: number, depth = 4, deadLettered = 0) {
  return { message_group_id: GROUP, depth, oldest_wait_seconds: 600, keys_affected: 2, head_attempts: headAttempts, last_error: 'HTTP 500', dead_lettered: deadLettered };
}

describe('skip command', () => {
  const api = useFakeApi();

  it('asks to skip the named event of the group and exits 0', async () => {
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--event', 'evt_7']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests[0]?.body).toEqual({ event_id: 'evt_7' });
    expect(run.stdout).toBe(`Skip requested: event evt_7, the head of group ${GROUP}, will be dead-lettered.\n`);
  });

  it('sends an empty body without --event, and prints the answer with --json', async () => {
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--json']);

    expect(api.requests[0]?.body).toEqual({});
    expect(JSON.parse(run.stdout)).toEqual(SKIPPED.body);
  });

  it('encodes the group in the path', async () => {
    api.on('POST /v1/groups/odd group/skip', { ...SKIPPED, body: { ...SKIPPED.body, message_group_id: 'odd group' } });

    const run = await runCommand(['skip', '--url', api.url, '--group', 'odd group']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests[0]?.path).toBe('/v1/groups/odd%20group/skip');
  });

  it.each([
    ['no_failing_head', 'The group has no failing head to skip.'],
    ['head_changed', 'The group’s head is another event now.'],
  ])('exits 4 with the code when the API refuses with %s', async (code, message) => {
    api.on('POST /v1/groups/partition-3/skip', apiError(409, code, message));

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--event', 'evt_7']);

    expect(run.exitCode).toBe(ExitCode.refused);
    expect(run.stderr).toBe(`ordered-webhooks skip: POST /v1/groups/partition-3/skip answered 409 ${code}: ${message}\n`);
  });

  it('with --wait, follows the lag view until the head has moved on', async () => {
    // Before the skip, then twice unchanged, then a new head with no failed attempt yet.
    api.on('GET /v1/lag', [lagRow(6), lagRow(6), lagRow(7), lagRow(0, 3)].map((row) => lagPage([row])));
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--wait', '--interval', '5ms']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(['GET /v1/lag', 'POST /v1/groups/partition-3/skip', 'GET /v1/lag', 'GET /v1/lag', 'GET /v1/lag']);
    expect(run.stderr).toContain(`Waiting for group ${GROUP} to move past evt_7: depth 4, head attempts 6`);
    expect(run.stdout).toMatch(new RegExp(`Group ${GROUP} moved past evt_7 after \\d+s; it has 3 pending, head attempts 0\\.\\n$`));
  });

  it('with --wait, reads every page of the lag view: a group on a later page has not moved on', async () => {
    const other = { ...lagRow(1), message_group_id: 'partition-1' };
    // The group stays on the second page, unchanged, for the first three reads of it.
    let readsOfSecondPage = 0;
    api.on('GET /v1/lag', (request) => {
      if (request.query.get('cursor') === null) return lagPage([other], 'page-2');
      readsOfSecondPage += 1;
      return lagPage([readsOfSecondPage <= 3 ? lagRow(6) : lagRow(0, 3)], null);
    });
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--wait', '--interval', '5ms']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(readsOfSecondPage).toBe(4);
    expect(run.stdout).toMatch(new RegExp(`Group ${GROUP} moved past evt_7 after \\d+s; it has 3 pending, head attempts 0\\.\\n$`));
  });

  it('with --wait and --json, prints the answer and the group as it was left', async () => {
    api.on('GET /v1/lag', [lagPage([lagRow(6)]), lagPage([])]);
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--wait', '--json', '--interval', '5ms']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({ ...SKIPPED.body, is_head_moved_on: true, group: null });
  });

  it('with --wait, rides out a 503 and exits 5 when the head never moves before --timeout', async () => {
    api.on('GET /v1/lag', (_request, call) => (call === 2 ? apiError(503, 'service_unavailable', 'Try again.') : lagPage([lagRow(6)])));
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--wait', '--interval', '5ms', '--timeout', '60ms']);

    expect(run.exitCode).toBe(ExitCode.timedOut);
    expect(run.stderr).toContain('GET /v1/lag answered 503 service_unavailable: Try again. (asking again)');
    expect(run.stderr).toContain(`Timed out after 60ms waiting for group ${GROUP} to move past event evt_7. The skip was requested; \`ordered-webhooks lag\` shows the group.`);
  });

  it('with --wait on a terminal, turns a spinner on one line and clears it', async () => {
    api.on('GET /v1/lag', [lagRow(6), lagRow(6), lagRow(0, 3)].map((row) => lagPage([row])));
    api.on('POST /v1/groups/partition-3/skip', SKIPPED);

    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--wait', '--interval', '5ms'], { isTTY: true });

    expect(run.exitCode).toBe(ExitCode.ok);
    // Any frame: the spinner also turns on its own timer.
    expect(run.stderr).toMatch(new RegExp(`\\r\\x1b\\[2K[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting for group ${GROUP} to move past evt_7  depth 4, head attempts 6`));
    expect(run.stderr.endsWith('\r\x1b[2K')).toBe(true);
    expect(run.stderr).not.toContain('\n');
  });

  it('exits 2 without a request when neither --group nor --subscription is given', async () => {
    const run = await runCommand(['skip', '--url', api.url, '--event', 'evt_7']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('--group (or --subscription) is required.');
    expect(api.requests).toHaveLength(0);
  });

  it('exits 2 without a request when both --group and --subscription are given', async () => {
    const run = await runCommand(['skip', '--url', api.url, '--group', GROUP, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain('Give --group or --subscription, not both.');
    expect(api.requests).toHaveLength(0);
  });

  it("skips the head of the subscription's own group with --subscription in per-key mode", async () => {
    const group = messageGroupIdFor('sub_alice', undefined);
    api.on('GET /v1/subscriptions/sub_alice', subscriptionAnswer('sub_alice'));
    api.on('GET /v1/routing', routingAnswer(null));
    api.on(`POST /v1/groups/${group}/skip`, { status: 202, body: { message_group_id: group, event_id: 'evt_a2', status: 'skip_requested' } });

    const run = await runCommand(['skip', '--url', api.url, '--subscription', 'sub_alice', '--event', 'evt_a2']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(['GET /v1/subscriptions/sub_alice', 'GET /v1/routing', `POST /v1/groups/${group}/skip`]);
    expect(api.requests[2]?.body).toEqual({ event_id: 'evt_a2' });
    expect(run.stdout).toBe(`Skip requested: event evt_a2, the head of group ${group}, will be dead-lettered.\n`);
  });

  it('refuses --subscription in partition mode, naming the partition, and skips nothing', async () => {
    api.on('GET /v1/subscriptions/sub_alice', subscriptionAnswer('sub_alice'));
    api.on('GET /v1/routing', routingAnswer(8));

    const run = await runCommand(['skip', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain(`routed to ${messageGroupIdFor('sub_alice', 8)}, which also carries other keys`);
    expect(api.calls()).toEqual(['GET /v1/subscriptions/sub_alice', 'GET /v1/routing']);
  });

  it('exits 1 with --subscription naming a subscription that does not exist, and skips nothing', async () => {
    api.on('GET /v1/subscriptions/sub_nobody', apiError(404, 'not_found', 'No subscription sub_nobody.'));

    const run = await runCommand(['skip', '--url', api.url, '--subscription', 'sub_nobody']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toBe('ordered-webhooks skip: There is no subscription named sub_nobody.\n');
    expect(api.calls()).toEqual(['GET /v1/subscriptions/sub_nobody']);
  });
});

describe('hasHeadMovedOn', () => {
  const before = lagRow(6, 4, 1);
  it.each([
    ['the group left the lag view', undefined, true],
    ['the group has nothing pending', lagRow(0, 0, 2), true],
    ['an event was settled', lagRow(6, 3, 1), true],
    ['the head attempts started again', lagRow(1, 4, 1), true],
    ['an event was dead-lettered', lagRow(6, 4, 2), true],
    ['the same head failed again', lagRow(7, 5, 1), false],
  ])('is %s → %s', (_case, now, expected) => {
    expect(hasHeadMovedOn(before, now)).toBe(expected);
  });
});

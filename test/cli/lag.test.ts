/**
 * `ordered-webhooks lag` against a fake API: the table, --json, --fail-on-stalled, the pages it
 * follows, and the exit codes of failures.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { messageGroupIdFor, Ordering, partitionKey } from '../../lambda/core/routing.js';
import { inTwoPages, lagPage, subscriptionAnswer } from './support/answers.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const STUCK = {
  message_group_id: '3f2a9c0e1b7d4a6e8f0c2b4d6e8a0c1f',
  depth: 12,
  oldest_wait_seconds: 192,
  keys_affected: 1,
  head_attempts: 4,
  last_error: 'HTTP 503',
  dead_lettered: 2,
};
const FLOWING = { message_group_id: 'partition-7', depth: 1, oldest_wait_seconds: 3, keys_affected: 3, head_attempts: 0, last_error: null, dead_lettered: 0 };
const DEAD = { message_group_id: 'partition-9', depth: 0, oldest_wait_seconds: 0, keys_affected: 0, head_attempts: 0, last_error: null, dead_lettered: 5 };

/** `GET /v1/routing`, drained and accepting events. */
function routingAnswer(partitionCount: number | null) {
  return { status: 200, body: { version: 1, partition_count: partitionCount, is_paused: false, paused_at: null, pending: { queued: 0, in_flight: 0, delayed: 0, groups_with_pending: 0 } } };
}

describe('lag command', () => {
  const api = useFakeApi();

  it('prints a table of the groups, worst first, with human waits when asked', async () => {
    api.on('GET /v1/lag', lagPage([STUCK, FLOWING]));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stderr).toBe('');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^GROUP\s+ORDERING KEY\s+DEPTH\s+OLDEST WAIT\s+KEYS\s+HEAD ATTEMPTS\s+LAST ERROR\s+DEAD LETTERS\s+ACCEPTED\/MIN\s+DELIVERED\/MIN\s+BEHIND\s+PAUSED$/);
    // An API without `ordering_key` and the rates (an older one): those columns show "-".
    expect(lines[1]?.split(/\s{2,}/)).toEqual([STUCK.message_group_id, '-', '12', '3m12s', '1', '4', 'HTTP 503', '2', '-', '-', '-', '-']);
    expect(lines[2]?.split(/\s{2,}/)).toEqual(['partition-7', '-', '1', '3s', '3', '0', '-', '0', '-', '-', '-', '-']);
    expect(api.calls()).toEqual(['GET /v1/lag']);
  });

  it('shows each group’s accepted and delivered events per minute, and marks a key falling behind', async () => {
    const whale = { ...FLOWING, message_group_id: 'whale', oldest_wait_seconds: 400, depth: 900, accepted_per_minute: 3000, delivered_per_minute: 2950, is_falling_behind: true };
    api.on('GET /v1/lag', lagPage([whale, { ...FLOWING, accepted_per_minute: 12, delivered_per_minute: 40, is_falling_behind: false }]));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[1]?.split(/\s{2,}/).slice(-4, -1)).toEqual(['3000', '2950', 'yes']);
    expect(lines[2]?.split(/\s{2,}/).slice(-4, -1)).toEqual(['12', '40', '-']);
  });

  it('marks a group held for a paused subscription', async () => {
    api.on('GET /v1/lag', lagPage([{ ...STUCK, is_paused: true, held_subscription_id: 'sub_alice' }, { ...FLOWING, is_paused: false, held_subscription_id: null }]));

    const run = await runCommand(['lag', '--url', api.url]);

    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[1]?.split(/\s{2,}/).at(-1)).toBe('yes');
    expect(lines[2]?.split(/\s{2,}/).at(-1)).toBe('-');
  });

  it('shows the ordering key beside the group hash, and - for a partition whose key is null', async () => {
    api.on('GET /v1/lag', lagPage([{ ...STUCK, ordering_key: 'sub_alice' }, { ...FLOWING, ordering_key: null }]));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[1]?.split(/\s{2,}/).slice(0, 3)).toEqual([STUCK.message_group_id, 'sub_alice', '12']);
    expect(lines[2]?.split(/\s{2,}/).slice(0, 3)).toEqual(['partition-7', '-', '1']);
  });

  it('keeps the rows whose ordering key is the subscription with --subscription, without reading the routing', async () => {
    const alice = { ...STUCK, ordering_key: 'sub_alice' };
    api.on('GET /v1/lag', lagPage([alice, { ...FLOWING, message_group_id: 'aa'.repeat(16), ordering_key: 'sub_bob' }]));

    const run = await runCommand(['lag', '--url', api.url, '--subscription', 'sub_alice', '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({ groups: [alice] });
    expect(api.calls()).toEqual(['GET /v1/lag']);
  });

  it('keeps the rows of the subscription\'s resource keys with --subscription when it orders by resource', async () => {
    const resourceKey = (subscriptionId: string, resourceId: string) => partitionKey({ subscription_id: subscriptionId, resource_id: resourceId }, Ordering.resource);
    const order7 = { ...STUCK, message_group_id: messageGroupIdFor(resourceKey('sub_alice', 'order-7'), undefined), ordering_key: resourceKey('sub_alice', 'order-7') };
    // Bob's resource named like Alice: his row, not hers.
    const bobs = { ...FLOWING, message_group_id: 'bb'.repeat(16), ordering_key: resourceKey('sub_bob', 'sub_alice') };
    api.on('GET /v1/lag', lagPage([order7, bobs]));

    const run = await runCommand(['lag', '--url', api.url, '--subscription', 'sub_alice', '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({ groups: [order7] });
  });

  it('finds the subscription by its computed group with --subscription when the API names no ordering key', async () => {
    const alice = { ...STUCK, message_group_id: messageGroupIdFor('sub_alice', undefined) };
    api.on('GET /v1/lag', lagPage([FLOWING, alice, { ...STUCK, message_group_id: messageGroupIdFor('sub_bob', undefined) }]));
    api.on('GET /v1/routing', routingAnswer(null));

    const run = await runCommand(['lag', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/\s{2,}/)[0])).toEqual(['GROUP', alice.message_group_id]);
    expect(run.stderr).toBe('');
  });

  it("finds the subscription's partition in partition mode, and says the partition carries other keys", async () => {
    const partition = messageGroupIdFor('sub_alice', 8);
    const other = partition === 'partition-0' ? 'partition-1' : 'partition-0';
    api.on('GET /v1/lag', lagPage([{ ...FLOWING, message_group_id: other }, { ...FLOWING, message_group_id: partition, ordering_key: null }]));
    api.on('GET /v1/routing', routingAnswer(8));

    const run = await runCommand(['lag', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout.trimEnd().split('\n').map((line) => line.split(/\s{2,}/)[0])).toEqual(['GROUP', partition]);
    expect(run.stderr).toBe(`${partition} is a partition: its row also counts other subscriptions' keys.\n`);
  });

  it('says the subscription has nothing pending with --subscription when it exists and has no group', async () => {
    api.on('GET /v1/lag', lagPage([FLOWING]));
    api.on('GET /v1/routing', routingAnswer(null));
    api.on('GET /v1/subscriptions/sub_alice', subscriptionAnswer('sub_alice'));

    const run = await runCommand(['lag', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe('No message group of subscription sub_alice has pending or dead-lettered events.\n');
  });

  it('exits 1 with --subscription naming a subscription that does not exist', async () => {
    api.on('GET /v1/lag', lagPage([FLOWING]));
    api.on('GET /v1/routing', routingAnswer(null));
    api.on('GET /v1/subscriptions/sub_nobody', apiError(404, 'not_found', 'No subscription sub_nobody.'));

    const run = await runCommand(['lag', '--url', api.url, '--subscription', 'sub_nobody']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toBe('ordered-webhooks lag: There is no subscription named sub_nobody.\n');
  });

  it('prints the API answer as it is with --json, unknown fields included', async () => {
    const body = { groups: [{ ...STUCK, added_later: 'kept' }] };
    api.on('GET /v1/lag', { status: 200, body });

    const run = await runCommand(['lag', '--url', api.url, '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual(body);
  });

  it('follows next_cursor to the last page and prints every row, as one page would', async () => {
    api.on('GET /v1/lag', inTwoPages(lagPage, [STUCK, FLOWING], [DEAD]));
    const paged = await runCommand(['lag', '--url', api.url]);
    const requests = api.requests.map((request) => Object.fromEntries(request.query));
    api.on('GET /v1/lag', lagPage([STUCK, FLOWING, DEAD]));
    const whole = await runCommand(['lag', '--url', api.url]);

    expect(paged.exitCode).toBe(ExitCode.ok);
    expect(paged.stdout.trimEnd().split('\n').map((line) => line.split(/\s{2,}/)[0])).toEqual(['GROUP', STUCK.message_group_id, 'partition-7', 'partition-9']);
    expect(paged.stdout).toBe(whole.stdout);
    expect(requests).toEqual([{ limit: '1000' }, { limit: '1000', cursor: 'page-2' }]);
  });

  it('prints the rows of every page with --json, in the shape of one answer', async () => {
    api.on('GET /v1/lag', inTwoPages(lagPage, [STUCK], [{ ...FLOWING, added_later: 'kept' }]));

    const run = await runCommand(['lag', '--url', api.url, '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({ groups: [STUCK, { ...FLOWING, added_later: 'kept' }] });
  });

  it('finds a stalled group on a later page with --fail-on-stalled', async () => {
    api.on('GET /v1/lag', inTwoPages(lagPage, [FLOWING], [STUCK]));

    const run = await runCommand(['lag', '--url', api.url, '--fail-on-stalled', '3m', '--json']);

    expect(run.exitCode).toBe(ExitCode.attentionNeeded);
    expect(run.stderr).toContain(`the worst, ${STUCK.message_group_id}, 3m12s`);
  });

  it('exits 1 instead of paging forever when the API gives the same cursor twice', async () => {
    api.on('GET /v1/lag', lagPage([FLOWING], 'again'));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('GET /v1/lag gave the cursor again twice');
    expect(api.requests).toHaveLength(2);
  });

  it('says so when no group has pending or dead-lettered events', async () => {
    api.on('GET /v1/lag', lagPage([]));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe('No message group has pending or dead-lettered events.\n');
  });

  it('exits 3 with --fail-on-stalled when a group has waited at least that long', async () => {
    api.on('GET /v1/lag', lagPage([FLOWING, STUCK]));

    const stalled = await runCommand(['lag', '--url', api.url, '--fail-on-stalled', '3m']);
    const fine = await runCommand(['lag', '--url', api.url, '--fail-on-stalled', '193', '--json']);

    expect(stalled.exitCode).toBe(ExitCode.attentionNeeded);
    expect(stalled.stderr).toContain(`1 message group(s) have waited at least 3m00s; the worst, ${STUCK.message_group_id}, 3m12s`);
    expect(fine.exitCode).toBe(ExitCode.ok);
    expect(fine.stderr).toBe('');
  });

  it('uses ORDERED_WEBHOOKS_URL when --url is absent', async () => {
    api.on('GET /v1/lag', lagPage([]));

    const run = await runCommand(['lag'], { environment: { ORDERED_WEBHOOKS_URL: `${api.url}/` } });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(['GET /v1/lag']);
  });

  it('keeps the stage path of the base URL', async () => {
    api.on('GET /prod/v1/lag', lagPage([]));

    const run = await runCommand(['lag', '--url', `${api.url}/prod`]);

    expect(run.exitCode).toBe(ExitCode.ok);
  });

  it("exits 1 with the API's error code and message when the API fails", async () => {
    api.on('GET /v1/lag', apiError(500, 'internal_error', 'Something broke.'));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('ordered-webhooks lag: GET /v1/lag answered 500 internal_error: Something broke.\n');
  });

  it('exits 1 naming the answer when its body is not what the contract says', async () => {
    api.on('GET /v1/lag', { status: 200, body: { rows: [] } });

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('GET /v1/lag answered 200 with a body this CLI does not understand: {"rows":[]}');
  });

  it('exits 1 without a stack trace when nothing listens', async () => {
    const url = api.url;
    await api.stop();

    const run = await runCommand(['lag', '--url', url]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toMatch(/^ordered-webhooks lag: GET \/v1\/lag: cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED/);
    expect(run.stderr).not.toContain('    at ');
  });

  it.each([
    [['lag', '--fail-on-stalled', 'soon'], '--fail-on-stalled must be a duration'],
    [['lag', '--nope'], "Unknown option '--nope'"],
    [['lag', 'extra'], "Unexpected argument 'extra'"],
    [['lag', '--url', 'ftp://example.com'], '--url must be an http(s) URL'],
  ])('exits 2 and sends nothing for %j', async (args, message) => {
    const run = await runCommand([...args, ...(args.includes('--url') ? [] : ['--url', api.url])]);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain(message);
    expect(api.requests).toHaveLength(0);
  });
});

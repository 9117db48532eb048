/**
 * The operator CLI as a user runs it: `npx ordered-webhooks` (the workspace bin, TypeScript
 * through tsx) against a local stack, with a group stuck on a refusing receiver.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LagAnswer } from '../../cli/api/schemas.js';
import cliPackage from '../../cli/package.json' with { type: 'json' };
import { ExitCode } from '../../cli/exit-codes.js';
import { call, makeEvent, postEvents, subscribe, uniquePrefix } from './support/api.js';
import { waitFor } from './support/poll.js';
import { lagRowOf, lagRows } from './support/operator-api.js';
import { useStackAndReceiver } from './support/stack-and-receiver.js';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));

interface Finished {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `npx ordered-webhooks <args>` in the repository, as an operator would. */
function npxOrderedWebhooks(args: readonly string[]): Promise<Finished> {
  return new Promise((resolve) => {
    execFile('npx', ['ordered-webhooks', ...args], { cwd: REPOSITORY, timeout: 20_000 }, (error, stdout, stderr) => {
      const exitCode = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ exitCode, stdout, stderr });
    });
  });
}

describe('npx ordered-webhooks on the local stack', { timeout: 60_000 }, () => {
  const prefix = uniquePrefix('cli');
  let stuckGroup: string;
  const { stack, receiver } = useStackAndReceiver(
    { MAX_DELIVERY_ATTEMPTS: '100', RETRY_BASE_SECONDS: '1', RETRY_MAX_SECONDS: '1' },
    { respond: () => ({ statusCode: 503 }) },
  );

  beforeAll(async () => {
    await subscribe(stack().url, prefix, receiver().endpointFor(prefix));
    const [result] = await postEvents(stack().url, [makeEvent(prefix, `${prefix}-1`), makeEvent(prefix, `${prefix}-2`)]);
    stuckGroup = result?.message_group_id ?? '';
    await waitFor('the stuck group in the lag view, its head failing, for at least a second', async () => {
      const row = await lagRowOf(stack(), stuckGroup);
      return row !== undefined && row.head_attempts >= 1 && row.oldest_wait_seconds >= 1;
    });
  });

  it('prints the lag view as JSON with `lag --json`', async () => {
    const run = await npxOrderedWebhooks(['lag', '--url', stack().url, '--json']);

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    const answer = JSON.parse(run.stdout) as LagAnswer;
    expect(answer.groups.find((row) => row.message_group_id === stuckGroup)).toMatchObject({ depth: 2, keys_affected: 1, last_error: 'HTTP 503' });
  });

  it("keeps only the subscription's group with `lag --subscription`, computed as ingest routes it", async () => {
    const other = uniquePrefix('cli-other');
    await subscribe(stack().url, other, receiver().endpointFor(other));
    await postEvents(stack().url, [makeEvent(other, `${other}-1`)]);
    await waitFor("the other subscription's group in the lag view", async () => (await lagRows(stack())).some((row) => row.message_group_id !== stuckGroup));

    const run = await npxOrderedWebhooks(['lag', '--url', stack().url, '--subscription', prefix, '--json']);

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    const answer = JSON.parse(run.stdout) as LagAnswer;
    expect(answer.groups.map((row) => row.message_group_id)).toEqual([stuckGroup]);
  });

  it('exits 1 naming the subscription with `dead-letters --subscription` for one that does not exist', async () => {
    const run = await npxOrderedWebhooks(['dead-letters', '--url', stack().url, '--subscription', `${prefix}-nobody`]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain(`There is no subscription named ${prefix}-nobody.`);
  });

  it('prints the secret in force, and the previous one during a rotation\'s grace, with `secret`', async () => {
    const subscription = `${prefix}-secret`;
    const secret = await subscribe(stack().url, subscription, receiver().endpointFor(subscription));

    const before = await npxOrderedWebhooks(['secret', '--url', stack().url, '--subscription', subscription, '--json']);
    expect(before.exitCode, before.stderr).toBe(ExitCode.ok);
    expect(JSON.parse(before.stdout)).toEqual({ secret });

    const rotated = await call(stack().url, 'POST', `/v1/subscriptions/${subscription}/secret/rotate`, { grace_seconds: 600 });
    const { secret: next, previous_secret_expires_at: expiresAt } = rotated.body as { secret: string; previous_secret_expires_at: string };
    const during = await npxOrderedWebhooks(['secret', '--url', stack().url, '--subscription', subscription]);
    expect(during.exitCode, during.stderr).toBe(ExitCode.ok);
    expect(during.stdout).toBe(`Secret of ${subscription}: ${next}\nPrevious secret, signing beside it until ${expiresAt}: ${secret}\n`);
  });

  it('prints the version of the cli package with `--version`', async () => {
    const run = await npxOrderedWebhooks(['--version']);

    expect(run.exitCode, run.stderr).toBe(ExitCode.ok);
    expect(run.stdout).toBe(`${cliPackage.version}\n`);
  });

  it('prints the table and exits 3 with `lag --fail-on-stalled 1`', async () => {
    const run = await npxOrderedWebhooks(['lag', '--url', stack().url, '--fail-on-stalled', '1']);

    expect(run.exitCode, run.stderr).toBe(ExitCode.attentionNeeded);
    // The ordering key column shows the key when the API names it, "-" before it does; BEHIND and PAUSED are "-".
    expect(run.stdout).toMatch(new RegExp(`^${stuckGroup}\\s+(${prefix}|-)\\s+2\\s+\\d+s\\s+1\\s+\\d+\\s+HTTP 503\\s+0\\s+\\d+\\s+\\d+\\s+-\\s+-$`, 'm'));
    expect(run.stderr).toContain('message group(s) have waited at least 1s');
  });
});

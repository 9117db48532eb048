/**
 * `ordered-webhooks redrive` against a fake API: it repeats the redrive step until `is_done`,
 * shows progress, and says what was done when it stops early.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { apiError, useFakeApi, type Reply } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const SUBSCRIPTION = 'sub_alice';

function step(redriven: readonly [string, number | null][], remaining: number, isDone: boolean): Reply {
  return {
    status: 200,
    body: { subscription_id: SUBSCRIPTION, redriven: redriven.map(([event_id, sequence]) => ({ event_id, sequence })), remaining, is_done: isDone },
  };
}

describe('redrive command', () => {
  const api = useFakeApi();

  it('repeats the step until is_done, in order, and prints a summary with plain progress lines', async () => {
    api.on('POST /v1/dead-letters/redrive', [
      step([['evt_2', 2], ['evt_5', 5]], 3, false),
      step([['evt_6', 6], ['evt_7', 7]], 1, false),
      step([['evt_9', 9]], 0, true),
    ]);

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(Array(3).fill('POST /v1/dead-letters/redrive'));
    expect(api.requests.map((request) => request.body)).toEqual(Array(3).fill({ subscription_id: SUBSCRIPTION }));
    expect(run.stderr).toBe(
      [`Redriving ${SUBSCRIPTION}: sending the first step`, `Redriving ${SUBSCRIPTION}: 2/5  3 remaining`, `Redriving ${SUBSCRIPTION}: 4/5  1 remaining`, `Redriving ${SUBSCRIPTION}: 5/5  0 remaining`, ''].join('\n'),
    );
    expect(run.stdout).toBe(`Redrove 5 dead letter(s) of subscription ${SUBSCRIPTION} (sequences 2 to 9), in their original order.\n`);
  });

  it('prints the totals and the events with --json', async () => {
    api.on('POST /v1/dead-letters/redrive', [step([['evt_2', 2]], 1, false), step([['evt_3', null]], 0, true)]);

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION, '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({
      subscription_id: SUBSCRIPTION,
      redriven: 2,
      remaining: 0,
      is_done: true,
      events: [
        { event_id: 'evt_2', sequence: 2 },
        { event_id: 'evt_3', sequence: null },
      ],
    });
  });

  it('draws a bar on a terminal', async () => {
    api.on('POST /v1/dead-letters/redrive', [step([['evt_2', 2]], 1, false), step([['evt_3', 3]], 0, true)]);

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION], { isTTY: true });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stderr).toContain(`\r\x1b[2KRedriving ${SUBSCRIPTION} ${'█'.repeat(12)}${'░'.repeat(12)} 1/2 50%  1 remaining`);
    expect(run.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it.each([false, true])('shows progress before the first step is answered (terminal: %s)', async (isTTY) => {
    let shownBeforeAnswer = '';
    const writes: string[] = [];
    api.on('POST /v1/dead-letters/redrive', () => {
      shownBeforeAnswer = writes.join('');
      return step([['evt_2', 2]], 0, true);
    });

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION], { isTTY, onStderrWrite: (text) => writes.push(text) });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(shownBeforeAnswer).toContain(isTTY ? `Redriving ${SUBSCRIPTION}  sending the first step` : `Redriving ${SUBSCRIPTION}: sending the first step\n`);
  });

  it('says so when there is nothing to redrive', async () => {
    api.on('POST /v1/dead-letters/redrive', step([], 0, true));

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe(`Subscription ${SUBSCRIPTION} has no dead letters to redrive.\n`);
  });

  it('asks again after the interval when a step moved nothing', async () => {
    api.on('POST /v1/dead-letters/redrive', [step([], 2, false), step([], 2, false), step([['evt_2', 2], ['evt_3', 3]], 0, true)]);

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION, '--interval', '5ms']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests).toHaveLength(3);
  });

  it('exits 5 when the dead letters never run out before --timeout', async () => {
    api.on('POST /v1/dead-letters/redrive', step([], 2, false));

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION, '--interval', '5ms', '--timeout', '50ms']);

    expect(run.exitCode).toBe(ExitCode.timedOut);
    expect(run.stderr).toContain(`Timed out after 50ms redriving ${SUBSCRIPTION}: 2 dead letter(s) remain.`);
  });

  it('says how many were redriven when a later step fails, and exits 1', async () => {
    api.on('POST /v1/dead-letters/redrive', [step([['evt_2', 2], ['evt_3', 3]], 4, false), apiError(500, 'internal_error', 'Boom.')]);

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', SUBSCRIPTION]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('2 dead letter(s) were redriven before this failure; run the command again to redrive the rest.');
    expect(run.stderr).toContain('POST /v1/dead-letters/redrive answered 500 internal_error: Boom.');
    expect(run.stdout).toBe('');
  });
});

/**
 * `ordered-webhooks replay` against a fake API: it fixes the window once, repeats the step with
 * that window until `is_done`, shows how far into the window it is, and says what was done.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { systemClock, type Clock } from '../../cli/poll.js';
import { apiError, useFakeApi, type Reply } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const SUBSCRIPTION = 'sub_alice';
const ROUTE = `POST /v1/subscriptions/${SUBSCRIPTION}/replay`;
const NOW = Date.parse('2026-12-04T12:00:00.000Z');
const clock: Clock = { now: () => NOW, sleep: systemClock.sleep };

function step(input: { reached: string | null; replayed: number; isDone: boolean; deadLettered?: number }): Reply {
  return {
    status: 200,
    body: {
      subscription_id: SUBSCRIPTION,
      since: '2026-12-04T10:00:00.000Z',
      until: '2026-12-04T12:00:00.000Z',
      started_at: '2026-12-04T12:00:00.000Z',
      reached: input.reached,
      replayed: input.replayed,
      dead_lettered: input.deadLettered ?? 0,
      not_delivered: 0,
      is_done: input.isDone,
    },
  };
}

describe('replay command', () => {
  const api = useFakeApi();

  it('sends the window a duration ago, then the window the first answer fixed, until is_done, with its progress through the window', async () => {
    api.on(ROUTE, [step({ reached: '2026-12-04T10:30:00.000Z', replayed: 100, isDone: false }), step({ reached: '2026-12-04T11:00:00.000Z', replayed: 180, isDone: false }), step({ reached: '2026-12-04T12:00:00.000Z', replayed: 250, isDone: true, deadLettered: 2 })]);

    const run = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--since', '2h'], { clock });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests.map((request) => request.body)).toEqual([
      { since: '2026-12-04T10:00:00.000Z' },
      { since: '2026-12-04T10:00:00.000Z', until: '2026-12-04T12:00:00.000Z' },
      { since: '2026-12-04T10:00:00.000Z', until: '2026-12-04T12:00:00.000Z' },
    ]);
    expect(run.stderr).toBe(
      [`Replaying ${SUBSCRIPTION}: sending the first step`, `Replaying ${SUBSCRIPTION}: 1800/7200  100 replayed`, `Replaying ${SUBSCRIPTION}: 3600/7200  180 replayed`, `Replaying ${SUBSCRIPTION}: 7200/7200  250 replayed`, ''].join('\n'),
    );
    expect(run.stdout).toBe(`Replayed 250 event(s) of subscription ${SUBSCRIPTION} accepted from 2026-12-04T10:00:00.000Z to 2026-12-04T12:00:00.000Z, in their original order; 2 dead letter(s) left to redrive.\n`);
  });

  it('takes RFC 3339 times, prints the replay with --json, and refuses a time it cannot read', async () => {
    api.on(ROUTE, step({ reached: '2026-12-04T12:00:00.000Z', replayed: 3, isDone: true }));
    const run = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--since', '2026-12-04T12:00:00+02:00', '--until', '2026-12-04T11:00:00Z', '--json'], { clock });
    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests.map((request) => request.body)).toEqual([{ since: '2026-12-04T10:00:00.000Z', until: '2026-12-04T11:00:00.000Z' }]);
    expect(JSON.parse(run.stdout)).toMatchObject({ subscription_id: SUBSCRIPTION, replayed: 3, is_done: true });

    const bad = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--since', 'yesterday'], { clock });
    expect(bad.exitCode).toBe(ExitCode.usage);
    expect(bad.stderr).toContain('--since must be a time (2026-12-04T10:00:00Z) or a duration ago (2h, 90m), not "yesterday"');
  });

  it("waits the interval while another caller's step holds the replay, and shows the API's refusal of another window", async () => {
    api.on(ROUTE, [step({ reached: null, replayed: 0, isDone: false }), step({ reached: null, replayed: 0, isDone: false }), step({ reached: '2026-12-04T12:00:00.000Z', replayed: 1, isDone: true })]);
    const run = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--since', '2h', '--interval', '5ms'], { clock });
    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests).toHaveLength(3);

    api.on(ROUTE, apiError(409, 'replay_in_progress', 'A replay of 2026-12-04T09:00:00.000Z to … is under way.'));
    const refused = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--since', '2h'], { clock });
    expect(refused.exitCode).toBe(ExitCode.refused);
    expect(refused.stderr).toContain('replay_in_progress');
  });

  it('cancels the replay under way with --cancel, and exits 1 when none is', async () => {
    api.on(`DELETE /v1/subscriptions/${SUBSCRIPTION}/replay`, { status: 200, body: { ...(step({ reached: '2026-12-04T11:00:00.000Z', replayed: 40, isDone: false }).body as object), cancelled_at: '2026-12-04T12:00:00.000Z' } });
    const run = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--cancel'], { clock });
    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe(`Cancelled the replay of subscription ${SUBSCRIPTION} (2026-12-04T10:00:00.000Z to 2026-12-04T12:00:00.000Z) after 40 event(s) replayed.\n`);

    api.on(`DELETE /v1/subscriptions/${SUBSCRIPTION}/replay`, apiError(404, 'not_found', `No replay of subscription ${SUBSCRIPTION} is under way.`));
    const none = await runCommand(['replay', '--url', api.url, '--subscription', SUBSCRIPTION, '--cancel'], { clock });
    expect(none.exitCode).toBe(ExitCode.failed);
    expect(none.stderr).toContain('is under way');
  });
});

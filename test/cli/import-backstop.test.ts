/**
 * `ordered-webhooks import-backstop` against a fake API: it repeats the import step until
 * `is_done`, shows progress, prints what was imported, and exits 3 when records that are no event
 * were left in the backstop queue.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { apiError, useFakeApi, type Reply } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

const ROUTE = 'POST /v1/dead-letters/import';

function step(imported: readonly [string, string, number | null][], unreadable: number, isDone: boolean): Reply {
  return {
    status: 200,
    body: { imported: imported.map(([event_id, subscription_id, sequence]) => ({ event_id, subscription_id, sequence })), unreadable, is_done: isDone },
  };
}

describe('import-backstop command', () => {
  const api = useFakeApi();

  it('repeats the step until is_done and prints a table of the events, with plain progress lines', async () => {
    api.on(ROUTE, [
      step([['evt_a3', 'sub_alice', 3], ['evt_b1', 'sub_bob', null]], 0, false),
      step([['evt_a4', 'sub_alice', 4]], 0, false),
      step([], 0, true),
    ]);

    const run = await runCommand(['import-backstop', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.calls()).toEqual(Array(3).fill(ROUTE));
    expect(api.requests.map((request) => request.rawBody)).toEqual(['', '', '']);
    expect(run.stderr).toBe(['Importing the backstop queue: 2 imported', 'Importing the backstop queue: 3 imported', ''].join('\n'));
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^EVENT ID\s+SUBSCRIPTION\s+SEQUENCE$/);
    expect(lines.slice(1, 4).map((line) => line.split(/\s{2,}/))).toEqual([
      ['evt_a3', 'sub_alice', '3'],
      ['evt_b1', 'sub_bob', '-'],
      ['evt_a4', 'sub_alice', '4'],
    ]);
    expect(lines[4]).toBe('Imported 3 event(s) from the backstop queue into the dead letters of 2 subscription(s) (sub_alice, sub_bob); 0 unreadable record(s) left in it.');
    expect(lines[5]).toContain('ordered-webhooks redrive --subscription <id>');
  });

  it('prints the totals and the events with --json', async () => {
    api.on(ROUTE, [step([['evt_a3', 'sub_alice', 3]], 0, false), step([['evt_b1', 'sub_bob', null]], 0, true)]);

    const run = await runCommand(['import-backstop', '--url', api.url, '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({
      imported: 2,
      unreadable: 0,
      is_done: true,
      events: [
        { event_id: 'evt_a3', subscription_id: 'sub_alice', sequence: 3 },
        { event_id: 'evt_b1', subscription_id: 'sub_bob', sequence: null },
      ],
    });
  });

  it('exits 3 naming the unreadable records left, counted by the last step, not summed over steps', async () => {
    // Every step receives the same unreadable records again.
    api.on(ROUTE, [step([['evt_a3', 'sub_alice', 3]], 2, false), step([], 2, true)]);

    const run = await runCommand(['import-backstop', '--url', api.url, '--interval', '5ms']);
    const json = await runCommand(['import-backstop', '--url', api.url, '--json']);

    expect(run.exitCode).toBe(ExitCode.attentionNeeded);
    expect(run.stdout).toContain('into the dead letters of 1 subscription(s) (sub_alice); 2 unreadable record(s) left in it.');
    expect(run.stderr).toContain('2 record(s) in the backstop queue are no event and were left there: look at them in the SQS console');
    expect(json.exitCode).toBe(ExitCode.attentionNeeded);
    expect(JSON.parse(json.stdout)).toMatchObject({ imported: 0, unreadable: 2, is_done: true });
  });

  it('says so when the backstop queue holds nothing', async () => {
    api.on(ROUTE, step([], 0, true));

    const run = await runCommand(['import-backstop', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe('The backstop queue held no event to import; 0 unreadable record(s) left in it.\n');
  });

  it('draws a spinner on a terminal and leaves the line clean', async () => {
    api.on(ROUTE, [step([['evt_a3', 'sub_alice', 3]], 0, false), step([], 0, true)]);

    const run = await runCommand(['import-backstop', '--url', api.url], { isTTY: true });

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stderr).toContain('Importing the backstop queue  1 imported');
    expect(run.stderr.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('asks again after the interval when a step imported nothing and is not done', async () => {
    api.on(ROUTE, [step([], 0, false), step([], 0, false), step([['evt_a3', 'sub_alice', 3]], 0, true)]);

    const run = await runCommand(['import-backstop', '--url', api.url, '--interval', '5ms']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(api.requests).toHaveLength(3);
  });

  it('exits 5 when the queue is never done before --timeout', async () => {
    api.on(ROUTE, step([], 0, false));

    const run = await runCommand(['import-backstop', '--url', api.url, '--interval', '5ms', '--timeout', '50ms']);

    expect(run.exitCode).toBe(ExitCode.timedOut);
    expect(run.stderr).toContain('Timed out after 50ms importing the backstop queue, which still holds messages.');
    expect(run.stdout).toBe('');
  });

  it('says how many were imported when a later step fails, and exits 1', async () => {
    api.on(ROUTE, [step([['evt_a3', 'sub_alice', 3], ['evt_a4', 'sub_alice', 4]], 0, false), apiError(500, 'internal_error', 'Boom.')]);

    const run = await runCommand(['import-backstop', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('2 event(s) were imported before this failure; run the command again to import the rest.');
    expect(run.stderr).toContain('POST /v1/dead-letters/import answered 500 internal_error: Boom.');
    expect(run.stdout).toBe('');
  });

  it('exits 1 naming the answer when its body is not what the API gives', async () => {
    api.on(ROUTE, { status: 200, body: { imported: 3, is_done: true } });

    const run = await runCommand(['import-backstop', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(run.stderr).toContain('POST /v1/dead-letters/import answered 200 with a body this CLI does not understand');
  });

  it.each([
    [['import-backstop', '--timeout', 'soon'], '--timeout must be a duration'],
    [['import-backstop', '--subscription', 'sub_alice'], "Unknown option '--subscription'"],
    [['import-backstop', 'now'], "Unexpected argument 'now'"],
  ])('exits 2 and sends nothing for %j', async (args, message) => {
    const run = await runCommand([...args, '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toContain(message);
    expect(api.requests).toHaveLength(0);
  });
});

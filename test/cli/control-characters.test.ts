/**
 * Values from the API are data, never terminal commands: every control character in them (C0, DEL,
 * C1, the bidi embeddings, overrides and isolates) is printed as a visible `\uXXXX` escape, in
 * tables, lines, progress, error messages and `--json`, whatever the command.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { lagPage } from './support/answers.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

/** Recolours the terminal (CSI), sets its title (OSC … BEL). */
const ESCAPES = 'sub_\x1b[31mred\x1b]0;pwned\x07';
const ESCAPES_SHOWN = 'sub_\\u001b[31mred\\u001b]0;pwned\\u0007';
/** The C1 form of CSI, a right-to-left override and an isolate, and DEL. */
const C1_AND_BIDI = 'key_\u009b2J\u202eevil\u2066\u007f';
const C1_AND_BIDI_SHOWN = 'key_\\u009b2J\\u202eevil\\u2066\\u007f';

/** Every character the CLI must not print as it is; line feeds are the output's own. */
function controlCharactersIn(text: string): string[] {
  return text.match(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g) ?? [];
}

const GROUP = {
  message_group_id: '3f2a9c0e1b7d4a6e8f0c2b4d6e8a0c1f',
  depth: 2,
  oldest_wait_seconds: 30,
  keys_affected: 1,
  head_attempts: 1,
  last_error: 'HTTP 500\x1b[2J',
  dead_lettered: 0,
};

describe('control characters in what the CLI prints', () => {
  const api = useFakeApi();

  it('escapes them in the lag table, keeping its columns aligned', async () => {
    api.on('GET /v1/lag', lagPage([{ ...GROUP, ordering_key: ESCAPES }, { ...GROUP, message_group_id: C1_AND_BIDI, ordering_key: 'sub_plain', last_error: null }]));

    const run = await runCommand(['lag', '--url', api.url]);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(controlCharactersIn(run.stdout)).toEqual([]);
    const [header = '', first = '', second = ''] = run.stdout.split('\n');
    expect(first.split(/\s{2,}/).slice(0, 2)).toEqual([GROUP.message_group_id, ESCAPES_SHOWN]);
    expect(first).toContain('HTTP 500\\u001b[2J');
    expect(second.split(/\s{2,}/).slice(0, 2)).toEqual([C1_AND_BIDI_SHOWN, 'sub_plain']);
    // Widths are measured on the escapes as shown: the second column starts at one offset.
    expect([first.indexOf(ESCAPES_SHOWN), second.indexOf('sub_plain')]).toEqual([header.indexOf('ORDERING KEY'), header.indexOf('ORDERING KEY')]);
  });

  it('escapes C1 and bidi characters in lag --json as \\u escapes, which parse back to the values', async () => {
    const groups = [{ ...GROUP, ordering_key: ESCAPES }, { ...GROUP, message_group_id: C1_AND_BIDI, ordering_key: null }];
    api.on('GET /v1/lag', lagPage(groups));

    const run = await runCommand(['lag', '--url', api.url, '--json']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(controlCharactersIn(run.stdout)).toEqual([]);
    expect(run.stdout).toContain(`"message_group_id": "${C1_AND_BIDI_SHOWN}"`);
    expect((JSON.parse(run.stdout) as { groups: unknown[] }).groups).toEqual(groups);
  });

  it('escapes them in the line pause prints', async () => {
    api.on('POST /v1/subscriptions/sub_alice/pause', {
      status: 200,
      body: { subscription_id: ESCAPES, is_paused: true, paused_at: '2026-12-04T12:00:00.000Z', pause_reason: `moving\n${C1_AND_BIDI}` },
    });

    const run = await runCommand(['pause', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(controlCharactersIn(run.stdout)).toEqual([]);
    expect(run.stdout).toContain(`Subscription ${ESCAPES_SHOWN} is paused since 2026-12-04T12:00:00.000Z (moving`);
    expect(run.stdout).toContain(C1_AND_BIDI_SHOWN);
  });

  it('escapes them in an error message from the API', async () => {
    api.on('POST /v1/subscriptions/sub_alice/resume', apiError(409, 'refused', `Not now ${ESCAPES} ${C1_AND_BIDI}`));

    const run = await runCommand(['resume', '--url', api.url, '--subscription', 'sub_alice']);

    expect(run.exitCode).toBe(ExitCode.refused);
    expect(controlCharactersIn(run.stderr)).toEqual([]);
    expect(run.stderr).toContain(`Not now ${ESCAPES_SHOWN} ${C1_AND_BIDI_SHOWN}`);
  });

  it('escapes them in a progress bar on a terminal, whose own redraw is the only control sequence', async () => {
    api.on('POST /v1/dead-letters/redrive', { status: 200, body: { subscription_id: ESCAPES, redriven: [{ event_id: C1_AND_BIDI, sequence: 2 }], remaining: 0, is_done: true } });

    const run = await runCommand(['redrive', '--url', api.url, '--subscription', ESCAPES], { isTTY: true });

    expect(run.exitCode).toBe(ExitCode.ok);
    const redraws = run.stderr.split('\r\x1b[2K');
    expect(redraws.length).toBeGreaterThan(2);
    expect(controlCharactersIn(redraws.join(''))).toEqual([]);
    expect(run.stderr).toContain(`\r\x1b[2KRedriving ${ESCAPES_SHOWN} `);
    expect(controlCharactersIn(run.stdout)).toEqual([]);
  });
});

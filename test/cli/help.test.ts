/**
 * The command line itself: help, unknown commands, and the exit codes that tell them apart.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import cliPackage from '../../cli/package.json' with { type: 'json' };
import { COMMANDS } from '../../cli/run.js';
import { apiError, useFakeApi } from './support/fake-api.js';
import { runCommand } from './support/run-cli.js';

describe('ordered-webhooks', () => {
  it('lists every command and the exit codes with --help, on stdout, exit 0', async () => {
    const run = await runCommand(['--help']);

    expect(run.exitCode).toBe(ExitCode.ok);
    for (const name of ['lag', 'dead-letters', 'redrive', 'import-backstop', 'skip', 'repartition', 'secret', 'rotate-secret', 'console']) expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    expect(run.stdout).toContain('--sigv4');
    expect(run.stdout).toContain('  4  refused by the API (409 or 422)');
  });

  it('prints the version of the cli package with --version, exit 0', async () => {
    const run = await runCommand(['--version']);

    expect(run.exitCode).toBe(ExitCode.ok);
    expect(run.stdout).toBe(`${cliPackage.version}\n`);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(run.stderr).toBe('');
  });

  it('prints the usage on stderr and exits 2 without a command', async () => {
    const run = await runCommand([]);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Usage: ordered-webhooks <command> [options]');
  });

  it('exits 2 naming the commands for an unknown one', async () => {
    const run = await runCommand(['drain']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(run.stderr).toBe('ordered-webhooks: unknown command "drain". Commands: lag, dead-letters, redrive, replay, import-backstop, skip, pause, resume, repartition, secret, rotate-secret, console. See --help.\n');
  });

  it.each(COMMANDS.map((command) => [command.name]))('prints the help of %s without needing its required options', async (name) => {
    const viaFlag = await runCommand([name, '--help']);
    const viaHelp = await runCommand(['help', name]);

    expect(viaFlag.exitCode).toBe(ExitCode.ok);
    expect(viaFlag.stdout).toMatch(new RegExp(`^Usage: ordered-webhooks ${name}`));
    expect(viaFlag.stdout).toContain('Common options:');
    expect(viaFlag.stdout).toContain('Exit codes:');
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });
});

describe('ordered-webhooks --json errors', () => {
  const api = useFakeApi();

  it("prints a refusal as the API's error shape on stdout, details included, with the same exit code", async () => {
    api.on('POST /v1/groups/partition-3/skip', {
      status: 409,
      body: { error: { code: 'head_changed', message: 'The head is another event now.', details: [{ path: 'event_id', message: 'not the head' }] } },
    });

    const run = await runCommand(['skip', '--url', api.url, '--group', 'partition-3', '--event', 'evt_7', '--json']);

    expect(run.exitCode).toBe(ExitCode.refused);
    expect(JSON.parse(run.stdout)).toEqual({
      error: {
        code: 'head_changed',
        message: 'POST /v1/groups/partition-3/skip answered 409 head_changed: The head is another event now.\n  event_id: not the head',
        details: [{ path: 'event_id', message: 'not the head' }],
      },
    });
    expect(run.stderr).toBe('');
  });

  it('prints a usage error as JSON with exit 2', async () => {
    const run = await runCommand(['lag', '--url', api.url, '--json', '--fail-on-stalled', 'soon']);

    expect(run.exitCode).toBe(ExitCode.usage);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'usage_error', message: expect.stringContaining('--fail-on-stalled must be a duration') } });
    expect(api.requests).toHaveLength(0);
  });

  it('prints an unreachable API as JSON with exit 1', async () => {
    const url = api.url;
    await api.stop();

    const run = await runCommand(['lag', '--url', url, '--json']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'unreachable', message: expect.stringContaining('cannot reach') } });
  });

  it('prints a server error as JSON with its code, exit 1', async () => {
    api.on('GET /v1/lag', apiError(500, 'internal_error', 'Something broke.'));

    const run = await runCommand(['lag', '--url', api.url, '--json']);

    expect(run.exitCode).toBe(ExitCode.failed);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'internal_error', message: 'GET /v1/lag answered 500 internal_error: Something broke.' } });
  });
});

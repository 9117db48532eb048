/**
 * The command line itself: help, unknown commands, and the exit codes that tell them apart.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../cli/exit-codes.js';
import { COMMANDS } from '../../cli/run.js';
import { runCommand } from './support/run-cli.js';

describe('ordered-webhooks', () => {
  it('lists every command and the exit codes with --help, on stdout, exit 0', async () => {
    const run = await runCommand(['--help']);

    expect(run.exitCode).toBe(ExitCode.ok);
    for (const name of ['lag', 'dead-letters', 'redrive', 'import-backstop', 'skip', 'repartition', 'rotate-secret']) expect(run.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    expect(run.stdout).toContain('--sigv4');
    expect(run.stdout).toContain('  4  refused by the API (409 or 422)');
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
    expect(run.stderr).toBe('ordered-webhooks: unknown command "drain". Commands: lag, dead-letters, redrive, import-backstop, skip, repartition, rotate-secret. See --help.\n');
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

/**
 * The command line's one boundary: picks the command, prints help or the version, runs it, and
 * turns every expected failure into its exit code and a message: on stderr, or with `--json` as
 * the contract's error body on stdout. Only a fault shows a stack.
 */
import type { Command, CommandIo } from './command.js';
import { consoleCommand } from './commands/console.js';
import { deadLettersCommand } from './commands/dead-letters.js';
import { importBackstopCommand } from './commands/import-backstop.js';
import { lagCommand } from './commands/lag.js';
import { redriveCommand } from './commands/redrive.js';
import { replayCommand } from './commands/replay.js';
import { repartitionCommand } from './commands/repartition.js';
import { pauseCommand, resumeCommand } from './commands/pause-resume.js';
import { rotateSecretCommand } from './commands/rotate-secret.js';
import { secretCommand } from './commands/secret.js';
import { skipCommand } from './commands/skip.js';
import cliPackage from './package.json' with { type: 'json' };
import { ApiError, CliError, type ApiErrorDetail } from './errors.js';
import { EXIT_CODES_HELP, ExitCode } from './exit-codes.js';
import { COMMON_OPTIONS_HELP } from './options.js';
import { escapingStream, writeJson, writeLine } from './output/stream.js';

/** Every command, in the order the help lists them. */
export const COMMANDS: readonly Command[] = [lagCommand, deadLettersCommand, redriveCommand, replayCommand, importBackstopCommand, skipCommand, pauseCommand, resumeCommand, repartitionCommand, secretCommand, rotateSecretCommand, consoleCommand];

const HELP_FLAGS: ReadonlySet<string> = new Set(['--help', '-h']);

/**
 * The CLI's version: the `version` of `cli/package.json`, imported (not read from disk at run
 * time) so that it is the package's wherever the CLI is started from.
 */
export const CLI_VERSION: string = cliPackage.version;

/** An expected failure as `--json` prints it: the API's error shape (docs/api.md#errors). */
export interface JsonError {
  readonly error: { readonly code: string; readonly message: string; readonly details?: readonly ApiErrorDetail[] };
}

export function toJsonError(error: CliError): JsonError {
  const details = error instanceof ApiError && error.details.length > 0 ? { details: error.details } : {};
  return { error: { code: error.code, message: error.message, ...details } };
}

export function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return `Usage: ordered-webhooks <command> [options]

Operates an ordered-webhooks API: the local stack (npm start) or a deployed one (IAM-signed).

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n')}

Run \`ordered-webhooks <command> --help\` for a command's options, \`ordered-webhooks --version\`
for the version.

${COMMON_OPTIONS_HELP}

${EXIT_CODES_HELP}
`;
}

function commandHelp(command: Command): string {
  return `${command.help}\n\n${COMMON_OPTIONS_HELP}\n\n${EXIT_CODES_HELP}\n`;
}

/** Runs `ordered-webhooks <args>`; resolves with the exit code and never throws for expected failures. */
export async function runCli(args: readonly string[], given: CommandIo): Promise<ExitCode> {
  // Every write of every command goes through these: values from the API are escaped (see escapingStream).
  const io: CommandIo = { ...given, stdout: escapingStream(given.stdout), stderr: escapingStream(given.stderr) };
  const [name, ...rest] = args;
  if (name === '--version' || name === '-V') {
    writeLine(io.stdout, CLI_VERSION);
    return ExitCode.ok;
  }
  if (name === undefined || HELP_FLAGS.has(name) || name === 'help') {
    const command = COMMANDS.find((candidate) => candidate.name === rest[0]);
    if (name === undefined) {
      io.stderr.write(generalHelp());
      return ExitCode.usage;
    }
    io.stdout.write(command === undefined ? generalHelp() : commandHelp(command));
    return ExitCode.ok;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (command === undefined) {
    writeLine(io.stderr, `ordered-webhooks: unknown command "${name}". Commands: ${COMMANDS.map((candidate) => candidate.name).join(', ')}. See --help.`);
    return ExitCode.usage;
  }
  if (rest.some((arg) => HELP_FLAGS.has(arg))) {
    io.stdout.write(commandHelp(command));
    return ExitCode.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    // With --json, stdout holds one JSON document whatever happens: the result, or the error.
    if (rest.includes('--json')) {
      writeJson(io.stdout, toJsonError(error));
      return error.exitCode;
    }
    writeLine(io.stderr, `ordered-webhooks ${command.name}: ${error.message}`);
    if (error.exitCode === ExitCode.usage) writeLine(io.stderr, `See \`ordered-webhooks ${command.name} --help\`.`);
    return error.exitCode;
  }
}

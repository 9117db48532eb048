/**
 * Runs the CLI in-process, as `main.ts` does, with in-memory stdout and stderr: fast, and the
 * output and exit code are what a user would see.
 */
import { systemClock, type Clock } from '../../../cli/poll.js';
import { runCli } from '../../../cli/run.js';
import type { CliEnvironment } from '../../../cli/command.js';
import type { ExitCode } from '../../../cli/exit-codes.js';
import type { OutputStream } from '../../../cli/output/stream.js';

export interface CliRun {
  readonly exitCode: ExitCode;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  readonly environment?: CliEnvironment;
  /** Whether stdout and stderr are terminals; false as in CI by default. */
  readonly isTTY?: boolean;
  /** Plays Ctrl-C when aborted. */
  readonly signal?: AbortSignal;
  /** The CLI's clock; the system clock by default. */
  readonly clock?: Clock;
  /** Told of each write to stderr as it happens, e.g. to see what was shown before an answer. */
  readonly onStderrWrite?: (text: string) => void;
  /** Told of each write to stdout as it happens, e.g. to learn where a command that runs until Ctrl-C listens. */
  readonly onStdoutWrite?: (text: string) => void;
}

interface MemoryStream extends OutputStream {
  readonly text: () => string;
}

function memoryStream(isTTY: boolean, onWrite: (text: string) => void = () => undefined): MemoryStream {
  const chunks: string[] = [];
  return {
    isTTY,
    columns: 100,
    write: (text: string) => {
      onWrite(text);
      return chunks.push(text);
    },
    text: () => chunks.join(''),
  };
}

export async function runCommand(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  const stdout = memoryStream(options.isTTY ?? false, options.onStdoutWrite);
  const stderr = memoryStream(options.isTTY ?? false, options.onStderrWrite);
  const exitCode = await runCli(args, {
    stdout,
    stderr,
    environment: options.environment ?? {},
    clock: options.clock ?? systemClock,
    signal: options.signal ?? new AbortController().signal,
  });
  return { exitCode, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * The process: reads argv and the environment once, wires Ctrl-C to the commands' abort signal,
 * and exits with the command's code. A first Ctrl-C lets a command clean up (resume a paused
 * ingest); a second one exits at once.
 */
import { ExitCode } from './exit-codes.js';
import { systemClock } from './poll.js';
import { runCli } from './run.js';

const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(ExitCode.interrupted);
  process.stderr.write('\nInterrupted: cleaning up (Ctrl-C again to exit at once)…\n');
  interrupt.abort();
});

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  environment: process.env,
  clock: systemClock,
  signal: interrupt.signal,
});

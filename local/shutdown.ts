/**
 * Clean stop on SIGINT and SIGTERM for the local entry points: the first signal stops the process
 * gracefully and exits 0 (1 if stopping fails); a later one exits at once.
 */

/**
 * Ctrl-C reaches a process started by `npm run` twice: from the terminal (the whole foreground
 * process group) and forwarded by npm. A repeat this soon after the first is that echo.
 */
const SIGNAL_ECHO_MS = 1000;

export interface ShutdownReporter {
  readonly stopping: (signal: NodeJS.Signals) => void;
  readonly stopped: () => void;
  readonly failed: (error: unknown) => void;
  readonly forced: (signal: NodeJS.Signals) => void;
}

/** Installs the handlers; `stop` runs once. */
export function stopOnSignals(stop: () => Promise<void>, report: ShutdownReporter): void {
  let stoppingSince: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < SIGNAL_ECHO_MS) return;
      report.forced(signal);
      process.exit(1);
    }
    stoppingSince = Date.now();
    report.stopping(signal);
    stop().then(
      () => {
        report.stopped();
        process.exit(0);
      },
      (error: unknown) => {
        report.failed(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

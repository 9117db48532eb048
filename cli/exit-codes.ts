/**
 * What the process's exit status means, for scripts and alerting: every command ends with one of
 * these, and the help text lists them.
 */
export const ExitCode = {
  /** Done, nothing needs attention. */
  ok: 0,
  /** The API could not be reached, answered an error, or answered something unexpected. */
  failed: 1,
  /** Bad arguments: nothing was sent. */
  usage: 2,
  /** The command worked, and what it found needs an operator (e.g. `lag --fail-on-stalled`, unreadable records left by `import-backstop`). */
  attentionNeeded: 3,
  /** The API refused the operation (409 or 422): the state was not what the operation needs. */
  refused: 4,
  /** A wait (`--timeout`) ran out before the awaited state was reached. */
  timedOut: 5,
  /** Interrupted (Ctrl-C) after cleaning up: 128 + SIGINT, as shells report it. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit codes as the help text shows them. */
export const EXIT_CODES_HELP = `Exit codes:
    0  ok
    1  the API could not be reached or answered an error
    2  usage error: bad or missing arguments, nothing was sent
    3  attention needed (e.g. lag --fail-on-stalled found a group waiting too long, or
       import-backstop left records that are no event in the backstop queue)
    4  refused by the API (409 or 422), with its error code
    5  timed out waiting (--timeout)
  130  interrupted (Ctrl-C), after resuming what the command had paused`;

/**
 * Where a command writes: stdout for results (tables, JSON), stderr for progress, warnings and
 * errors, so that `--json` output stays parseable. Tests pass in-memory streams.
 */
export interface OutputStream {
  write(text: string): unknown;
  /** True on a terminal: progress bars and spinners redraw one line; otherwise plain lines. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/** Writes `text` followed by a new line. */
export function writeLine(stream: OutputStream, text = ''): void {
  stream.write(`${text}\n`);
}

/** Pretty JSON and a new line: what `--json` prints. */
export function writeJson(stream: OutputStream, value: unknown): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

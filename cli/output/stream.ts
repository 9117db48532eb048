/**
 * Where a command writes: stdout for results (tables, JSON), stderr for progress, warnings and
 * errors, so that `--json` output stays parseable. Tests pass in-memory streams.
 */
import { escapeControlCharacters } from './escape.js';

export interface OutputStream {
  write(text: string): unknown;
  /**
   * Writes `controls`, the CLI's own terminal control sequences (a progress line's redraw), as
   * they are, then `text` as {@link OutputStream.write} writes it. A stream without it (a test's)
   * writes both with `write`: see {@link writeWithControls}.
   */
  readonly writeWithControls?: (controls: string, text: string) => unknown;
  /** True on a terminal: progress bars and spinners redraw one line; otherwise plain lines. */
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * `stream` with every control character escaped (`escapeControlCharacters`) in all it writes but
 * the line feeds, which are the output's own lines. The one boundary in `run.ts` gives commands
 * only such streams, so that no command can print a value from the API as terminal commands,
 * whichever way it writes it; JSON stays valid, as JSON.stringify has escaped C0 inside strings
 * already and every other escaped character can only be inside a string.
 */
export function escapingStream(stream: OutputStream): OutputStream {
  const escape = (text: string): string => text.split('\n').map(escapeControlCharacters).join('\n');
  return {
    write: (text) => stream.write(escape(text)),
    writeWithControls: (controls, text) => stream.write(controls + escape(text)),
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
  };
}

/** Writes the CLI's own terminal `controls` as they are, followed by `text`, in one write. */
export function writeWithControls(stream: OutputStream, controls: string, text: string): void {
  if (stream.writeWithControls === undefined) stream.write(controls + text);
  else stream.writeWithControls(controls, text);
}

/** Writes `text` followed by a new line. */
export function writeLine(stream: OutputStream, text = ''): void {
  stream.write(`${text}\n`);
}

/** Pretty JSON and a new line: what `--json` prints. */
export function writeJson(stream: OutputStream, value: unknown): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

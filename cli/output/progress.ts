/**
 * Progress of long waits (drain, redrive, skip) on stderr. On a terminal a bar or a spinner
 * redraws one line; otherwise (CI logs, pipes) a plain line is printed each time the state
 * changes, never a carriage return.
 */
import { formatSeconds } from '../duration.js';
import { escapeControlCharacters } from './escape.js';
import { writeWithControls, type OutputStream } from './stream.js';

const BAR_WIDTH = 24;
const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_FRAME_MS = 100;
/** Carriage return and erase line. */
const CLEAR_LINE = '\r\x1b[2K';

/** A note, or a function that gives it at each redraw (a countdown). */
export type ProgressNote = string | (() => string);

export interface ProgressBar {
  /**
   * `done` of `total`, with an optional note such as what is still pending. On a terminal a
   * note given as a function is redrawn every second until the next update, so that a countdown
   * moves between updates; plain lines print it once.
   */
  readonly update: (done: number, total: number, note?: ProgressNote) => void;
  /** Leaves the terminal line clean for what follows. */
  readonly finish: () => void;
}

export interface Spinner {
  readonly update: (note: string) => void;
  /** Stops it and leaves the line clean; finishing it again does nothing. */
  readonly finish: () => void;
}

/** How often a note given as a function is redrawn. */
const NOTE_REDRAW_MS = 1_000;

/** A bar of `done` / `total`; `total` may grow between updates. */
export function createProgressBar(stream: OutputStream, rawLabel: string): ProgressBar {
  // One line by nature: a line feed in a value (a label names a subscription or a group) is escaped too.
  const label = escapeControlCharacters(rawLabel);
  let lastLine: string | undefined;
  let isDrawn = false;
  let redraw: NodeJS.Timeout | undefined;
  const stopRedraw = (): void => {
    clearInterval(redraw);
    redraw = undefined;
  };
  const draw = (done: number, total: number, note: ProgressNote | undefined): void => {
    const text = typeof note === 'function' ? note() : note;
    const suffix = text === undefined ? '' : `  ${escapeControlCharacters(text)}`;
    const ratio = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
    const filled = Math.round(ratio * BAR_WIDTH);
    writeWithControls(stream, CLEAR_LINE, `${label} ${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} ${done}/${total} ${Math.floor(ratio * 100)}%${suffix}`);
    isDrawn = true;
  };
  return {
    update: (done, total, note) => {
      stopRedraw();
      if (stream.isTTY !== true) {
        const text = typeof note === 'function' ? note() : note;
        const line = `${label}: ${done}/${total}${text === undefined ? '' : `  ${escapeControlCharacters(text)}`}`;
        if (line !== lastLine) stream.write(`${line}\n`);
        lastLine = line;
        return;
      }
      draw(done, total, note);
      if (typeof note === 'function') {
        redraw = setInterval(() => draw(done, total, note), NOTE_REDRAW_MS);
        // Never keeps the process alive on its own.
        redraw.unref();
      }
    },
    finish: () => {
      stopRedraw();
      if (isDrawn) writeWithControls(stream, CLEAR_LINE, '');
      isDrawn = false;
    },
  };
}

/** What a spinner reads the time from; the system clock unless a test gives its own. */
export interface SpinnerOptions {
  readonly now?: () => number;
}

/**
 * A spinner for waits whose length is unknown. On a terminal it turns by itself and shows the
 * time elapsed since it started, recomputed at every frame: a note given at the last update
 * would freeze the clock between updates. Plain lines (no terminal) leave the time out, so that
 * a line is printed only when the state changes.
 */
export function createSpinner(stream: OutputStream, rawLabel: string, options: SpinnerOptions = {}): Spinner {
  const label = escapeControlCharacters(rawLabel);
  let note = '';
  let lastLine: string | undefined;
  if (stream.isTTY !== true) {
    return {
      update: (next) => {
        const line = `${label}: ${escapeControlCharacters(next)}`;
        if (line !== lastLine) stream.write(`${line}\n`);
        lastLine = line;
      },
      finish: () => undefined,
    };
  }
  const now = options.now ?? Date.now;
  const startedAt = now();
  let frame = 0;
  let isFinished = false;
  const draw = (): void => {
    const elapsed = formatSeconds((now() - startedAt) / 1_000);
    writeWithControls(stream, CLEAR_LINE, `${SPINNER_FRAMES[frame % SPINNER_FRAMES.length] ?? ''} ${label}${note === '' ? '' : `  ${note}`}  ${elapsed}`);
    frame += 1;
  };
  const timer = setInterval(draw, SPINNER_FRAME_MS);
  // The spinner never keeps the process alive on its own.
  timer.unref();
  draw();
  return {
    update: (next) => {
      note = escapeControlCharacters(next);
      draw();
    },
    // Idempotent: a command may finish a spinner on every path out of a loop.
    finish: () => {
      if (isFinished) return;
      isFinished = true;
      clearInterval(timer);
      writeWithControls(stream, CLEAR_LINE, '');
    },
  };
}

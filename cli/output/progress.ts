/**
 * Progress of long waits (drain, redrive, skip) on stderr. On a terminal a bar or a spinner
 * redraws one line; otherwise (CI logs, pipes) a plain line is printed each time the state
 * changes, never a carriage return.
 */
import type { OutputStream } from './stream.js';

const BAR_WIDTH = 24;
const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_FRAME_MS = 100;
/** Carriage return and erase line. */
const CLEAR_LINE = '\r\x1b[2K';

export interface ProgressBar {
  /** `done` of `total`, with an optional note such as what is still pending. */
  readonly update: (done: number, total: number, note?: string) => void;
  /** Leaves the terminal line clean for what follows. */
  readonly finish: () => void;
}

export interface Spinner {
  readonly update: (note: string) => void;
  readonly finish: () => void;
}

/** A bar of `done` / `total`; `total` may grow between updates. */
export function createProgressBar(stream: OutputStream, label: string): ProgressBar {
  let lastLine: string | undefined;
  let isDrawn = false;
  return {
    update: (done, total, note) => {
      const suffix = note === undefined ? '' : `  ${note}`;
      if (stream.isTTY !== true) {
        const line = `${label}: ${done}/${total}${suffix}`;
        if (line !== lastLine) stream.write(`${line}\n`);
        lastLine = line;
        return;
      }
      const ratio = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
      const filled = Math.round(ratio * BAR_WIDTH);
      stream.write(`${CLEAR_LINE}${label} ${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} ${done}/${total} ${Math.floor(ratio * 100)}%${suffix}`);
      isDrawn = true;
    },
    finish: () => {
      if (isDrawn) stream.write(CLEAR_LINE);
      isDrawn = false;
    },
  };
}

/** A spinner for waits whose length is unknown; on a terminal it turns by itself. */
export function createSpinner(stream: OutputStream, label: string): Spinner {
  let note = '';
  let lastLine: string | undefined;
  if (stream.isTTY !== true) {
    return {
      update: (next) => {
        const line = `${label}: ${next}`;
        if (line !== lastLine) stream.write(`${line}\n`);
        lastLine = line;
      },
      finish: () => undefined,
    };
  }
  let frame = 0;
  const draw = (): void => {
    stream.write(`${CLEAR_LINE}${SPINNER_FRAMES[frame % SPINNER_FRAMES.length] ?? ''} ${label}${note === '' ? '' : `  ${note}`}`);
    frame += 1;
  };
  const timer = setInterval(draw, SPINNER_FRAME_MS);
  // The spinner never keeps the process alive on its own.
  timer.unref();
  draw();
  return {
    update: (next) => {
      note = next;
      draw();
    },
    finish: () => {
      clearInterval(timer);
      stream.write(CLEAR_LINE);
    },
  };
}

/** What a page of the console is: it renders into `main`, and stops its refreshes when left. */
import { isDialogOpen } from './ui.js';

/** A page rendered: `stop` ends its timers and requests when the reader moves on. */
export interface PageView {
  readonly stop: () => void;
}

/** A page that reads the API again and again (see {@link every}). */
export interface LiveView extends PageView {
  /** Reads again now (after an action, or a new page of a list): after the read under way, if any. */
  readonly refresh: () => void;
}

/** Where the page was asked for: the route's parameters and query (`#/dead-letters?subscription=…`). */
export interface PageRequest {
  readonly params: readonly string[];
  readonly query: URLSearchParams;
}

export type Page = (main: HTMLElement, request: PageRequest) => PageView;

/** How often the live pages read the API again. */
export const REFRESH_MS = 3000;

/**
 * Calls `read` now and then every `everyMs()` after each read ends, one read at a time: a read
 * asked for while one is under way runs after it, so an older answer never lands over a newer one.
 * While a confirmation dialog is open nothing is read: the page under it stays as the reader saw
 * it. A read that throws is reported on the console's error line, and the refreshes go on.
 */
export function every(everyMs: () => number, read: () => Promise<void>): LiveView {
  let isStopped = false;
  let isReading = false;
  let isAskedAgain = false;
  let timer: number | undefined;
  const schedule = (ms: number): void => {
    if (timer !== undefined) window.clearTimeout(timer);
    timer = isStopped ? undefined : window.setTimeout(() => void run(), ms);
  };
  const run = async (): Promise<void> => {
    if (isStopped) return;
    if (isReading) {
      isAskedAgain = true;
      return;
    }
    if (isDialogOpen()) {
      schedule(250);
      return;
    }
    isReading = true;
    try {
      await read();
    } catch (error) {
      console.error('the console failed to refresh a page', error);
    } finally {
      isReading = false;
    }
    if (isAskedAgain) {
      isAskedAgain = false;
      schedule(0);
    } else schedule(everyMs());
  };
  void run();
  return {
    refresh: () => void run(),
    stop: () => {
      isStopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    },
  };
}

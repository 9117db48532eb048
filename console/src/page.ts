/** What a page of the console is: it renders into `main`, and stops its refreshes when left. */

/** A page rendered: `stop` ends its timers and requests when the reader moves on. */
export interface PageView {
  readonly stop: () => void;
}

/** Where the page was asked for: the route's parameters and query (`#/dead-letters?subscription=…`). */
export interface PageRequest {
  readonly params: readonly string[];
  readonly query: URLSearchParams;
}

export type Page = (main: HTMLElement, request: PageRequest) => PageView;

/**
 * Calls `refresh` now and then every `everyMs`, one at a time (a slow answer is never overtaken
 * by the next), until stopped.
 */
export function every(everyMs: number, refresh: () => Promise<void>): PageView {
  let isStopped = false;
  let timer: number | undefined;
  const run = async (): Promise<void> => {
    if (isStopped) return;
    await refresh();
    if (!isStopped) timer = window.setTimeout(() => void run(), everyMs);
  };
  void run();
  return {
    stop: () => {
      isStopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    },
  };
}

/** How often the live pages read the API again. */
export const REFRESH_MS = 3000;

/** Where the operator console is served, beside the API: its page at `/console/`. */
export const CONSOLE_PATH = '/console';

/** Whether a request path is the console's rather than the API's. */
export function isConsolePath(pathname: string): boolean {
  return pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`);
}

/**
 * "Poll until a deadline, then assert": the only way integration tests wait. No fixed sleeps.
 */

/** How often a condition is checked. */
const POLL_INTERVAL_MS = 25;

/**
 * Resolves with the first truthy value `check` returns; rejects naming `what` once `timeoutMs`
 * has passed. `check` may throw an assertion error while the condition does not hold yet; the
 * last one is reported.
 */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
}

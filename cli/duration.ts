/**
 * Durations as operators type and read them: `90s`, `15m`, `1h30m`, `500ms`; a bare number is
 * seconds.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Milliseconds of `15m`, `1h30m`, `90s`, `500ms` or `90` (seconds); undefined when not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1_000);
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined;
  let totalMs = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART)) totalMs += Number(amount) * (UNIT_MS[unit ?? ''] ?? 0);
  return Math.round(totalMs);
}

/** `42s`, `3m12s`, `2h05m`, `3d04h`: two units at most, the larger first. */
export function formatSeconds(totalSeconds: number): string {
  const seconds = Math.max(0, Math.floor(totalSeconds));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m${pad(seconds % 60)}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h${pad(Math.floor((seconds % 3_600) / 60))}m`;
  return `${Math.floor(seconds / 86_400)}d${pad(Math.floor((seconds % 86_400) / 3_600))}h`;
}

/** Like {@link formatSeconds}, with milliseconds below one second (`250ms`). */
export function formatMs(totalMs: number): string {
  return totalMs < 1_000 ? `${Math.max(0, Math.round(totalMs))}ms` : formatSeconds(totalMs / 1_000);
}

function pad(value: number): string {
  return String(value).padStart(2, '0');
}

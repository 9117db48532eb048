/** How the console writes durations and times: short, and the same everywhere. */

/** `0 s`, `42 s`, `4 min 10 s`, `3 h 5 min`, `2 d 4 h`. */
export function formatSeconds(total: number): string {
  const seconds = Math.max(0, Math.floor(total));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
}

/** A timestamp in the reader's time zone, to the second. */
export function formatTime(iso: string | null): string {
  if (iso === null) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** What a group page says of what waits behind the head: `1 event waits …`, `3 events wait …`. */
export function waitingLine(waiting: number): string {
  return `${waiting === 1 ? '1 event waits' : `${waiting} events wait`} behind the head, in order. (The queue holds them; the API shows how many, not which.)`;
}

/** What a group page says when nothing waits: delivered, or dead-lettered and left to a redrive. */
export function nothingWaitsLine(deadLettered: number): string {
  return deadLettered === 0
    ? 'Nothing waits: the group has delivered all it was given.'
    : `Nothing waits: the group has delivered or dead-lettered all it was given (${plural(deadLettered, 'dead letter')}, sent again by a redrive).`;
}

/** `1 event`, `3 events`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

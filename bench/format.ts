/**
 * Plain-text tables for the terminal: Markdown pipe tables, so that the printed figures paste
 * into docs/performance.md and into issues unchanged.
 */

/** Renders rows under headers; numeric-looking cells are right-aligned. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  // A column is numeric when every non-empty cell is a number (or a dash for none).
  const isNumeric = headers.map(
    (_, column) => rows.some((row) => (row[column] ?? '') !== '') && rows.every((row) => /^[-+$]?[\d.,]+[%×x]?$|^—$|^-$|^$/.test(row[column] ?? '')),
  );
  const cell = (text: string, column: number): string => {
    const width = widths[column] ?? 0;
    return isNumeric[column] === true ? text.padStart(width) : text.padEnd(width);
  };
  const line = (cells: readonly string[]): string => `| ${headers.map((_, column) => cell(cells[column] ?? '', column)).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (isNumeric[column] === true ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

/** A number with `digits` decimals, or `—` when there is none. */
export function fixed(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(digits);
}

/** A count with thousands separators. */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** US dollars: cents below $100, whole dollars above. */
export function usd(value: number): string {
  return value >= 100 ? `$${count(value)}` : `$${value.toFixed(2)}`;
}

/** The ratio after/before, e.g. `1.25×`, or `—` when either side is missing or zero. */
export function ratio(after: number | undefined, before: number | undefined): string {
  if (after === undefined || before === undefined || before === 0) return '—';
  return `${(after / before).toFixed(2)}×`;
}

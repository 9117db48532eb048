/**
 * Plain-text tables for people: a header row, columns padded to their widest cell, numbers
 * aligned right, long cells cut with an ellipsis. Scripts use `--json` instead.
 */
import { escapeControlCharacters } from './escape.js';

export interface Column<Row> {
  readonly header: string;
  readonly cell: (row: Row) => string;
  /** Numbers read better aligned right. Default left. */
  readonly align?: 'left' | 'right';
  /** Longer cells are cut to this many characters, the last one an ellipsis. */
  readonly maxWidth?: number;
}

/** Shown for an absent value. */
export const EMPTY_CELL = '-';

/** The table as lines joined by `\n`, with a trailing new line. */
export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  // Escaped before widths are measured, so that columns stay aligned as the escapes are shown.
  const cells = rows.map((row) => columns.map((column) => fit(escapeControlCharacters(singleLine(column.cell(row))), column.maxWidth)));
  const widths = columns.map((column, index) => Math.max(length(column.header), ...cells.map((line) => length(line[index] ?? ''))));
  const render = (line: readonly string[]): string =>
    line
      .map((cell, index) => {
        const width = widths[index] ?? 0;
        const padding = ' '.repeat(Math.max(0, width - length(cell)));
        return columns[index]?.align === 'right' ? padding + cell : cell + padding;
      })
      .join('  ')
      .trimEnd();
  return [render(columns.map((column) => column.header)), ...cells.map(render)].join('\n') + '\n';
}

function singleLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function length(text: string): number {
  return [...text].length;
}

function fit(text: string, maxWidth: number | undefined): string {
  if (maxWidth === undefined || length(text) <= maxWidth) return text;
  return `${[...text].slice(0, Math.max(0, maxWidth - 1)).join('')}…`;
}

/**
 * DynamoDB items are an edge: every item read is validated before the code relies on its shape.
 */
import type * as z from 'zod';

/** A stored item does not have the shape the code relies on: a fault, never a 4xx. */
export class CorruptItemError extends Error {
  override readonly name = 'CorruptItemError';
  constructor(table: string, key: string, problem: string) {
    super(`Item ${key} of table ${table} is not readable: ${problem}`);
  }
}

/** Validates one item read from `table`. @throws CorruptItemError */
export function parseItem<T>(schema: z.ZodType<T>, item: unknown, table: string, key: string): T {
  const parsed = schema.safeParse(item);
  if (!parsed.success) {
    throw new CorruptItemError(table, key, parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; '));
  }
  return parsed.data;
}

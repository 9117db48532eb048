/**
 * BatchGetItem over any number of keys: chunks of 100, with unprocessed keys retried.
 */
import { BatchGetCommand, type BatchGetCommandOutput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { MAX_BATCH_GET_KEYS } from '../core/limits.js';

/** DynamoDB returns unprocessed keys under throttling; give up after this many rounds. */
const MAX_ROUNDS = 6;

/** DynamoDB left keys unprocessed after every round: a fault (sustained throttling), never a 4xx. */
export class UnprocessedKeysError extends Error {
  override readonly name = 'UnprocessedKeysError';
  constructor(
    readonly tableName: string,
    readonly unprocessedCount: number,
    readonly rounds: number,
  ) {
    super(`BatchGetItem on ${tableName} left ${unprocessedCount} keys unprocessed after ${rounds} rounds`);
  }
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/**
 * Reads the items with these string partition-key values, projected to `attributes`. Missing items
 * are absent. Strongly consistent unless `isConsistent` is false: an eventually consistent read
 * costs half the read units and may miss a write of the last second.
 * @throws UnprocessedKeysError when keys are still unprocessed after {@link MAX_ROUNDS} rounds
 */
export async function batchGetItems(
  client: DynamoDBDocumentClient,
  input: {
    readonly tableName: string;
    readonly keyName: string;
    readonly keys: readonly string[];
    readonly attributes: readonly string[];
    /** @default true */
    readonly isConsistent?: boolean;
  },
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  const names = Object.fromEntries(input.attributes.map((attribute, i) => [`#a${i}`, attribute]));
  const projection = Object.keys(names).join(', ');
  for (const keys of chunk([...new Set(input.keys)], MAX_BATCH_GET_KEYS)) {
    let pending: Record<string, unknown>[] | undefined = keys.map((key) => ({ [input.keyName]: key }));
    for (let round = 0; pending !== undefined && pending.length > 0; round += 1) {
      if (round === MAX_ROUNDS) throw new UnprocessedKeysError(input.tableName, pending.length, MAX_ROUNDS);
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));
      const output: BatchGetCommandOutput = await client.send(
        new BatchGetCommand({
          RequestItems: {
            [input.tableName]: { Keys: pending, ProjectionExpression: projection, ExpressionAttributeNames: names, ConsistentRead: input.isConsistent ?? true },
          },
        }),
      );
      found.push(...(output.Responses?.[input.tableName] ?? []));
      pending = output.UnprocessedKeys?.[input.tableName]?.Keys;
    }
  }
  return found;
}

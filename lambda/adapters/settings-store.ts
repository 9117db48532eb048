/**
 * The Settings table: the `routing` item that ingest reads on every request (a consistent read,
 * so a pause takes effect at once) and that the drain-and-switch changes with conditional writes.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { initialRouting, type RoutingSettings } from '../core/routing-settings.js';
import { TABLES } from '../resources.js';
import type { AccessMap } from './access.js';
import { updateIfCondition } from './aws-clients.js';
import { parseItem } from './dynamo-item.js';

const ROUTING = 'routing';

const routingItemSchema = z.object({
  version: z.number().int().nonnegative(),
  partition_count: z.number().int().positive().optional(),
  is_paused: z.boolean(),
  paused_at: z.string().optional(),
});

export interface SettingsStore {
  /** The routing in force: the stored one, or the deployment's own before any switch. */
  readonly getRouting: () => Promise<RoutingSettings>;
  readonly setPaused: (isPaused: boolean, at: string) => Promise<RoutingSettings>;
  /** Switches the partition count and resumes nothing; false when the version or the pause changed meanwhile. */
  readonly switchRouting: (input: { readonly expectedVersion: number; readonly partitionCount: number | undefined; readonly at: string }) => Promise<boolean>;
}

/** The IAM actions of each method of {@link SettingsStore}, all on the Settings table. */
export const SETTINGS_STORE_ACCESS = {
  getRouting: [{ resource: 'settingsTable', actions: ['dynamodb:GetItem'] }],
  setPaused: [{ resource: 'settingsTable', actions: ['dynamodb:UpdateItem'] }],
  switchRouting: [{ resource: 'settingsTable', actions: ['dynamodb:UpdateItem'] }],
} as const satisfies AccessMap<SettingsStore>;

export function createSettingsStore(client: DynamoDBDocumentClient, tableName: string, deployedPartitionCount: number | undefined): SettingsStore {
  const key = { [TABLES.settings.partitionKey]: ROUTING };
  const initial = initialRouting(deployedPartitionCount);
  // Version 0 is the deployment's PARTITION_COUNT, whatever pausing wrote: a switch stores its own.
  const toRouting = (item: unknown): RoutingSettings => {
    const parsed = parseItem(routingItemSchema, item, tableName, ROUTING);
    const partitionCount = parsed.version === 0 ? deployedPartitionCount : parsed.partition_count;
    return { version: parsed.version, partitionCount, isPaused: parsed.is_paused, pausedAt: parsed.paused_at };
  };
  const partitionFields = (partitionCount: number | undefined) =>
    partitionCount === undefined ? { set: '', remove: ' REMOVE partition_count', values: {} } : { set: ', partition_count = :partitions', remove: '', values: { ':partitions': partitionCount } };

  const getRouting = async (): Promise<RoutingSettings> => {
    const output = await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    return output.Item === undefined ? initial : toRouting(output.Item);
  };

  return {
    getRouting,

    async setPaused(isPaused, at) {
      // Only the pause: the routing itself changes by a switch alone.
      const output = await client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: key,
          UpdateExpression: isPaused
            ? 'SET version = if_not_exists(version, :zero), is_paused = :paused, paused_at = if_not_exists(paused_at, :at)'
            : 'SET version = if_not_exists(version, :zero), is_paused = :paused REMOVE paused_at',
          ExpressionAttributeValues: { ':zero': 0, ':paused': isPaused, ...(isPaused ? { ':at': at } : {}) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toRouting(output.Attributes);
    },

    async switchRouting({ expectedVersion, partitionCount, at }) {
      const fields = partitionFields(partitionCount);
      const output = await updateIfCondition(
        client,
        new UpdateCommand({
          TableName: tableName,
          Key: key,
          UpdateExpression: `SET version = :next, switched_at = :at${fields.set}${fields.remove}`,
          ConditionExpression: 'version = :expected AND is_paused = :true',
          ExpressionAttributeValues: { ':next': expectedVersion + 1, ':expected': expectedVersion, ':true': true, ':at': at, ...fields.values },
        }),
      );
      return output !== undefined;
    },
  };
}

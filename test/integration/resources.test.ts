/**
 * The local stack creates the resources the CDK stack declares, from the same configuration, and
 * brings them up to date when it starts again on the same DATA_DIR with other settings.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backstopMaxReceiveCount, queueVisibilityTimeoutSeconds } from '../../lambda/config.js';
import { FIFO_QUEUE_SETTINGS, QUEUES, TABLES, type TableDefinition } from '../../lambda/resources.js';
import { startTestStack, type TestStack } from './support/stack.js';

async function queueAttributes(stack: TestStack, url: string): Promise<Record<string, string>> {
  const { Attributes = {} } = await stack.clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
  return Attributes;
}

describe('local stack resources', { timeout: 60_000 }, () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ordered-webhooks-resources-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('creates the FIFO queues and the tables as declared, and updates them on a restart with other settings', async () => {
    for (const settings of [
      { MAX_DELIVERY_ATTEMPTS: '3', DELIVERY_TIMEOUT_MS: '1000' },
      { MAX_DELIVERY_ATTEMPTS: '7', DELIVERY_TIMEOUT_MS: '5000' },
    ]) {
      const stack = await startTestStack({ ...settings, DATA_DIR: dataDir }, { isConsumerEnabled: false });
      try {
        expect(stack.resources.deliveryQueueUrl.endsWith(`/${QUEUES.delivery.localName}`)).toBe(true);
        expect(stack.resources.deadLetterQueueUrl.endsWith(`/${QUEUES.deadLetter.localName}`)).toBe(true);
        const deadLetter = await queueAttributes(stack, stack.resources.deadLetterQueueUrl);
        const delivery = await queueAttributes(stack, stack.resources.deliveryQueueUrl);
        for (const attributes of [delivery, deadLetter]) {
          expect(attributes).toMatchObject({
            FifoQueue: 'true',
            ContentBasedDeduplication: 'false',
            DeduplicationScope: 'messageGroup',
            FifoThroughputLimit: 'perMessageGroupId',
            MessageRetentionPeriod: String(FIFO_QUEUE_SETTINGS.retentionSeconds),
          });
        }
        expect(delivery.VisibilityTimeout).toBe(String(queueVisibilityTimeoutSeconds(stack.config)));
        expect(JSON.parse(delivery.RedrivePolicy ?? '{}')).toEqual({
          deadLetterTargetArn: deadLetter.QueueArn,
          maxReceiveCount: backstopMaxReceiveCount(stack.config),
        });

        for (const table of Object.values<TableDefinition>(TABLES)) {
          const { Table } = await stack.clients.dynamo.send(new DescribeTableCommand({ TableName: table.localName }));
          expect(Table?.KeySchema).toEqual([
            { AttributeName: table.partitionKey, KeyType: 'HASH' },
            ...(table.sortKey === undefined ? [] : [{ AttributeName: table.sortKey, KeyType: 'RANGE' }]),
          ]);
          expect(Table?.AttributeDefinitions).toContainEqual({ AttributeName: table.partitionKey, AttributeType: 'S' });
          expect(Table?.TableStatus).toBe('ACTIVE');
          const indexes = (Table?.GlobalSecondaryIndexes ?? []).map((index) => ({
            name: index.IndexName,
            keys: index.KeySchema?.map((key) => `${key.KeyType}:${key.AttributeName}`),
            projection: index.Projection?.ProjectionType,
          }));
          expect(indexes).toEqual(
            (table.indexes ?? []).map((index) => ({
              name: index.name,
              keys: [`HASH:${index.partitionKey}`, ...(index.sortKey === undefined ? [] : [`RANGE:${index.sortKey}`])],
              projection: index.projection,
            })),
          );
        }
      } finally {
        await stack.stop();
      }
    }
  });
});

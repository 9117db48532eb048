/**
 * The local stack's DynamoDB client reaches dynalite in process (local/in-process-http.ts): no
 * HTTP request leaves it, and what it reads and writes, errors included, is what a client on
 * dynalite's port sees.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { TABLES } from '../../lambda/resources.js';
import { createLocalClients } from '../../local/clients.js';
import { startEmulators } from '../../local/emulators.js';
import { ensureTables } from '../../local/tables.js';
import { uniquePrefix } from './support/api.js';
import { useLocalClientPair } from './support/local-clients.js';

const settings = TABLES.settings;
const deadLetters = TABLES.deadLetters;

describe('local DynamoDB client', { timeout: 60_000 }, () => {
  const clients = useLocalClientPair();

  it('sends no HTTP request when given the emulators of its process', async () => {
    const hosts: string[] = [];
    // node:http publishes every client request it starts on this channel.
    const onRequest = (message: unknown): void => {
      const request: unknown = typeof message === 'object' && message !== null ? Reflect.get(message, 'request') : undefined;
      const host: unknown = typeof request === 'object' && request !== null ? Reflect.get(request, 'host') : undefined;
      hosts.push(String(host));
    };
    subscribe('http.client.request.start', onRequest);
    try {
      const key = uniquePrefix('setting');
      await clients.local().dynamo.send(new PutCommand({ TableName: settings.localName, Item: { [settings.partitionKey]: key, value: 1 } }));
      const { Item } = await clients.local().dynamo.send(new GetCommand({ TableName: settings.localName, Key: { [settings.partitionKey]: key } }));
      expect(Item).toEqual({ [settings.partitionKey]: key, value: 1 });
      expect(hosts).toEqual([]);

      // The check itself can see a request: the socket client's is seen.
      await clients.overSockets().dynamo.send(new GetCommand({ TableName: settings.localName, Key: { [settings.partitionKey]: key } }));
      expect(hosts).toEqual(['127.0.0.1']);
    } finally {
      unsubscribe('http.client.request.start', onRequest);
    }
  });

  it('creates the stack\'s tables without waiting a second for each when dynalite is in process', async () => {
    const fresh = await startEmulators(undefined);
    const freshClients = createLocalClients(fresh);
    try {
      const startedAt = Date.now();
      await ensureTables(freshClients.dynamo);
      // dynalite marks a table ACTIVE a tick after CreateTable; the SDK's waiter, asked at once,
      // then slept a second per table (six tables: six seconds on every start of the stack).
      expect(Date.now() - startedAt).toBeLessThan(3000);
    } finally {
      freshClients.destroy();
      await fresh.stop();
    }
  });

  it('reads and writes the same tables as a client on the port, large items and refused conditions alike', async () => {
    const owner = uniquePrefix('subscription');
    // Over 64 KB: more than one chunk on a socket.
    const large = 'x'.repeat(200_000);
    await clients.local().dynamo.send(new PutCommand({ TableName: deadLetters.localName, Item: { [deadLetters.partitionKey]: owner, [deadLetters.sortKey ?? 'position']: '1', large } }));
    await clients.overSockets().dynamo.send(new PutCommand({ TableName: deadLetters.localName, Item: { [deadLetters.partitionKey]: owner, [deadLetters.sortKey ?? 'position']: '2', large: 'y' } }));

    const query = new QueryCommand({
      TableName: deadLetters.localName,
      KeyConditionExpression: '#owner = :owner',
      ExpressionAttributeNames: { '#owner': deadLetters.partitionKey },
      ExpressionAttributeValues: { ':owner': owner },
    });
    const inProcess = await clients.local().dynamo.send(query);
    const onPort = await clients.overSockets().dynamo.send(query);
    expect(inProcess.Items).toEqual(onPort.Items);
    expect(inProcess.Items?.map((item) => String(item.large).length)).toEqual([200_000, 1]);

    const refused = clients.local().dynamo.send(
      new PutCommand({
        TableName: deadLetters.localName,
        Item: { [deadLetters.partitionKey]: owner, [deadLetters.sortKey ?? 'position']: '1' },
        ConditionExpression: 'attribute_not_exists(#owner)',
        ExpressionAttributeNames: { '#owner': deadLetters.partitionKey },
      }),
    );
    await expect(refused).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  });
});

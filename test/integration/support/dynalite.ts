/**
 * dynalite in memory with the stack's tables, as local/emulators.ts and local/tables.ts make them,
 * for adapter tests: one per test file, shared by its tests (which use unique keys).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { createLocalClients } from '../../../local/clients.js';
import { ensureTables } from '../../../local/tables.js';

export interface DynaliteTables {
  /** The project's own document client (removeUndefinedValues, as in Lambda), on dynalite. */
  readonly dynamo: DynamoDBDocumentClient;
  readonly stop: () => Promise<void>;
}

export async function startDynaliteTables(): Promise<DynaliteTables> {
  // As local/emulators.ts starts it: in memory, tables usable at once.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  // No SQS is used: the SQS client points at a closed port and is never called.
  const clients = createLocalClients({ sqsEndpoint: 'http://127.0.0.1:9', dynamoEndpoint: `http://127.0.0.1:${port}` });
  await ensureTables(clients.dynamo);
  return {
    dynamo: clients.dynamo,
    stop: async () => {
      clients.destroy();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
    },
  };
}

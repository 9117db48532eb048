/**
 * The emulators with two sets of the local stack's clients on them: `local`, as the stack has them
 * (DynamoDB in process), and `overSockets`, on the emulators' ports only, as another process has
 * them. Registers its hooks in the calling `describe`.
 */
import { afterAll, beforeAll } from 'vitest';
import { createLocalClients, type LocalClients } from '../../../local/clients.js';
import { startEmulators, type Emulators } from '../../../local/emulators.js';
import { ensureTables } from '../../../local/tables.js';

export interface LocalClientPair {
  readonly local: () => LocalClients;
  readonly overSockets: () => LocalClients;
}

export function useLocalClientPair(): LocalClientPair {
  let emulators: Emulators | undefined;
  let local: LocalClients | undefined;
  let overSockets: LocalClients | undefined;

  beforeAll(async () => {
    emulators = await startEmulators(undefined);
    local = createLocalClients(emulators);
    overSockets = createLocalClients({ sqsEndpoint: emulators.sqsEndpoint, dynamoEndpoint: emulators.dynamoEndpoint });
    await ensureTables(local.dynamo);
  });

  afterAll(async () => {
    local?.destroy();
    overSockets?.destroy();
    await emulators?.stop();
  });

  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useLocalClientPair(): the emulators are not started yet (call it inside a describe)');
    return value;
  };
  return { local: () => started(local), overSockets: () => started(overSockets) };
}

/**
 * The embedded emulators: fauxqs for SQS and dynalite for DynamoDB, on 127.0.0.1 only (fauxqs
 * through fauxqs-loopback.ts: its own start listens on every interface) with ports chosen by the
 * OS. With a data directory both keep their state on disk (fauxqs in SQLite, dynalite in
 * LevelDB), so a restart loses nothing; without one both run in memory. fauxqs runs with the FIFO
 * batch override (fauxqs-fifo-batches.ts), so its FIFO queues hand out several messages of a group
 * per receive, as SQS does.
 */
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import dynalite from 'dynalite';
import { lockDataDir } from './data-dir-lock.js';
import { inProcessHandler, type InProcessHandler } from './in-process-http.js';
import { installFauxqsFifoBatches } from './fauxqs-fifo-batches.js';
import { startLoopbackFauxqs } from './fauxqs-loopback.js';

/** The region the emulators and the SDK clients agree on; fauxqs takes it from the request signature. */
export const LOCAL_REGION = 'us-east-1';

/** Running emulators and where to reach them. */
export interface Emulators {
  readonly sqsEndpoint: string;
  readonly dynamoEndpoint: string;
  /**
   * dynalite's request listener as an SDK request handler, for clients in this process: the same
   * emulator as at `dynamoEndpoint`, without the loopback socket (see in-process-http.ts).
   */
  readonly dynamoHandler: InProcessHandler;
  /** Stops both; dynalite closes its LevelDB after in-flight operations, fauxqs writes through. */
  readonly stop: () => Promise<void>;
}

async function startDynalite(path: string | undefined): Promise<{ endpoint: string; handler: InProcessHandler; stop: () => Promise<void> }> {
  if (path !== undefined) await mkdir(path, { recursive: true });
  // Tables are created at start-up and used at once: no artificial CREATING delay.
  const server = dynalite({ ...(path === undefined ? {} : { path }), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    // Emitted as node:http emits a request, so that dynalite's listener gets it as from its socket.
    handler: inProcessHandler(
      (request, response) => {
        server.emit('request', request, response);
      },
      () => server.listening,
    ),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

/**
 * Starts both emulators; `dataDir` keeps their state in `<dataDir>/sqs` and `<dataDir>/dynamodb`.
 * @throws DataDirInUseError when another local stack runs on `dataDir`
 * @throws FauxqsPatchError when the installed fauxqs is not the release the FIFO batch override knows
 */
export async function startEmulators(dataDir: string | undefined): Promise<Emulators> {
  // Before fauxqs starts: it loads a data directory's messages while starting.
  await installFauxqsFifoBatches();
  const unlock = dataDir === undefined ? undefined : await lockDataDir(dataDir);
  const started = await Promise.allSettled([
    startLoopbackFauxqs({
      port: 0,
      defaultRegion: LOCAL_REGION,
      ...(dataDir === undefined ? {} : { dataDir: join(dataDir, 'sqs') }),
    }),
    startDynalite(dataDir === undefined ? undefined : join(dataDir, 'dynamodb')),
  ]);
  const [sqsStart, dynamoStart] = started;
  if (sqsStart.status === 'rejected' || dynamoStart.status === 'rejected') {
    // A failed start leaves nothing behind: the one that started stops, and DATA_DIR is free again.
    await Promise.allSettled(started.flatMap((result) => (result.status === 'fulfilled' ? [result.value.stop()] : [])));
    await unlock?.();
    throw started.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))[0];
  }
  const sqs = sqsStart.value;
  const dynamo = dynamoStart.value;
  return {
    sqsEndpoint: sqs.address,
    dynamoEndpoint: dynamo.endpoint,
    dynamoHandler: dynamo.handler,
    stop: async () => {
      await Promise.all([sqs.stop(), dynamo.stop()]);
      await unlock?.();
    },
  };
}

/**
 * fauxqs on 127.0.0.1 only. Its `startFauxqs` 2.4.1 listens on `0.0.0.0` whatever it is given
 * (its `host` option names the host in queue URLs, not the listen address), which would expose
 * the local stack's queued payloads to the network without authentication. fauxqs exports the
 * app builder `startFauxqs` uses, so this starts it the same way, stores and data directory
 * included, and listens on loopback.
 */
import { buildApp, type BuildAppOptions } from 'fauxqs';
import { FauxqsPatchError, FAUXQS_PATCHED_VERSION } from './fauxqs-fifo-batches.js';

/** The local stack has no authentication: nothing of it listens beyond this address. */
export const FAUXQS_HOST = '127.0.0.1';

type FauxqsStores = NonNullable<BuildAppOptions['stores']>;

/** What of fauxqs's `PersistenceManager` `startFauxqs` uses, and so does this. */
interface FauxqsPersistenceManager {
  load(sqsStore: FauxqsStores['sqsStore'], snsStore: FauxqsStores['snsStore'], s3Store: FauxqsStores['s3Store']): void;
  close(): void;
}

export interface LoopbackFauxqsOptions {
  /** 0 for one the OS chooses. */
  readonly port: number;
  readonly defaultRegion: string;
  /** fauxqs's SQLite directory for SQS and S3; in memory when absent. */
  readonly dataDir?: string;
}

export interface LoopbackFauxqs {
  /** `http://127.0.0.1:<port>` */
  readonly address: string;
  /** Closes the server and, with a data directory, its database. */
  readonly stop: () => Promise<void>;
}

/** A class exported by one of fauxqs's modules in dist/, or a {@link FauxqsPatchError}. */
async function importClass<T>(entryUrl: string, modulePath: string, className: string): Promise<new (...args: unknown[]) => T> {
  const module: unknown = await import(new URL(modulePath, entryUrl).href);
  const found: unknown = typeof module === 'object' && module !== null ? Reflect.get(module, className) : undefined;
  if (typeof found !== 'function') {
    throw new FauxqsPatchError(`fauxqs no longer exports ${className} from ${modulePath}; local/fauxqs-loopback.ts was written for ${FAUXQS_PATCHED_VERSION}`);
  }
  // Checked to be a class; its instances are what fauxqs's own typings say they are.
  return found as new (...args: unknown[]) => T;
}

/**
 * Starts fauxqs as its `startFauxqs` does (load the data directory before the stores write
 * through to it, then wire every store and loaded queue to it) but on {@link FAUXQS_HOST}.
 * Call `installFauxqsFifoBatches` first: loading goes through the patched loader.
 */
export async function startLoopbackFauxqs(options: LoopbackFauxqsOptions): Promise<LoopbackFauxqs> {
  // fauxqs exports only its entry point; its stores and persistence live beside it in dist/.
  const entryUrl = import.meta.resolve('fauxqs');
  const [SqsStore, SnsStore, S3Store, PersistenceManager] = await Promise.all([
    importClass<FauxqsStores['sqsStore']>(entryUrl, './sqs/sqsStore.js', 'SqsStore'),
    importClass<FauxqsStores['snsStore']>(entryUrl, './sns/snsStore.js', 'SnsStore'),
    importClass<FauxqsStores['s3Store']>(entryUrl, './s3/s3Store.js', 'S3Store'),
    importClass<FauxqsPersistenceManager>(entryUrl, './persistence.js', 'PersistenceManager'),
  ]);
  const stores: FauxqsStores = {
    sqsStore: new SqsStore(),
    snsStore: new SnsStore(),
    s3Store: new S3Store(),
  };
  const persistence: FauxqsPersistenceManager | undefined = options.dataDir === undefined ? undefined : new PersistenceManager(options.dataDir);
  if (persistence !== undefined) {
    // Before the stores have it: a write-through during the load would cascade deletes.
    persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
    Reflect.set(stores.sqsStore, 'persistence', persistence);
    Reflect.set(stores.snsStore, 'persistence', persistence);
    Reflect.set(stores.s3Store, 'persistence', persistence);
    for (const queue of stores.sqsStore.allQueues()) Reflect.set(queue, 'persistence', persistence);
  }
  const app = buildApp({ logger: false, defaultRegion: options.defaultRegion, stores });
  if (persistence !== undefined) {
    app.addHook('preClose', () => {
      persistence.close();
    });
  }
  try {
    const address = await app.listen({ port: options.port, host: FAUXQS_HOST });
    return { address, stop: () => app.close() };
  } catch (error) {
    await app.close();
    throw error;
  }
}

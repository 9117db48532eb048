/** Types for dynalite 4 (CommonJS, ships none): the parts the local stack uses. */
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** LevelDB directory; in memory when absent. */
    readonly path?: string;
    /** How long a new table stays CREATING (default 500 ms). */
    readonly createTableMs?: number;
    readonly deleteTableMs?: number;
    readonly updateTableMs?: number;
    readonly maxItemSizeKb?: number;
    readonly verbose?: boolean;
    readonly debug?: boolean;
  }

  /** A plain node:http server; its close() also closes the database. */
  function dynalite(options?: DynaliteOptions): Server;
  export default dynalite;
}

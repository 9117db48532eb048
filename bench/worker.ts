/**
 * A bench worker process: started by bench/workers.ts with the checkout's root as its argument,
 * it serves runs over IPC (bench/run.ts, `serveWorker`).
 */
import { serveWorker } from './run.js';

await serveWorker(process.argv[2]);

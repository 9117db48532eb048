/**
 * One local stack per DATA_DIR: LevelDB and SQLite each allow one process, and a second stack on
 * the same directory would fail deep inside an emulator. A lock file holding the owner's pid makes
 * that a clear refusal; a lock left by a process that no longer runs is taken over.
 */
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

const LOCK_FILE = 'local-stack.lock';

/** DATA_DIR is held by another running local stack. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(dataDir: string, pid: number) {
    super(`DATA_DIR ${dataDir} is in use by another local stack (pid ${pid}); stop it or choose another DATA_DIR`);
  }
}

/** Runs a file operation for which a missing file is an expected outcome, not a fault. */
async function unlessMissing<T>(operation: Promise<T>, whenMissing: T): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return whenMissing;
    throw error;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // EPERM: it runs, under another user. ESRCH: no such process.
    if (code === 'EPERM') return true;
    if (code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Takes the lock of `dataDir`, creating the directory if needed.
 * @returns a function that releases it
 * @throws DataDirInUseError when another running process holds it
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const file = await open(path, 'wx');
      await file.writeFile(String(process.pid));
      await file.close();
      return () => unlink(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await unlessMissing(readFile(path, 'utf8'), '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner)) throw new DataDirInUseError(dataDir, owner);
    // Left behind by a process that is gone (or released meanwhile): take it over.
    await unlessMissing(unlink(path), undefined);
  }
  throw new Error(`could not take the lock of DATA_DIR ${dataDir}`);
}

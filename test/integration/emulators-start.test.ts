/**
 * The embedded emulators' start on a data directory: a start that fails leaves nothing behind, so
 * the next `npm start` on the same DATA_DIR is not refused as "in use" by a stack that never ran.
 */
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulators } from '../../local/emulators.js';

describe('startEmulators on a data directory', () => {
  let dataDir = '';
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ow-emulators-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('rejects with the error of the emulator that cannot start, and releases DATA_DIR and the other emulator', async () => {
    // Where dynalite's LevelDB directory would be, a file.
    await writeFile(join(dataDir, 'dynamodb'), 'not a directory');
    await expect(startEmulators(dataDir)).rejects.toMatchObject({ code: expect.stringMatching(/^(EEXIST|ENOTDIR)$/) });
    await expect(access(join(dataDir, 'local-stack.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    // The directory is free: once the obstacle is gone, a start succeeds.
    await rm(join(dataDir, 'dynamodb'));
    const emulators = await startEmulators(dataDir);
    await emulators.stop();
  });
});

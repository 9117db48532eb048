/**
 * Builds the published library: `dist/index.js`, one ES module bundling lib/index.ts and what it
 * imports except its peer dependencies (aws-cdk-lib, constructs), and `dist/types/`, its
 * declarations, emitted by `tsc -p tsconfig.build.json`. The functions' bundles are
 * scripts/build-lambda.ts's.
 *
 * Why not tsc's JavaScript: lib/ reads each function's grants from its handler module
 * (`INGEST_ACCESS`, ...), and a handler module imports its adapters, which import the AWS SDK,
 * Powertools and the rest of the functions' dependencies. Compiled file by file, the library would
 * load all of them at synth time, and the package would have to depend on them; bundled, they
 * would still be loaded, as those modules have effects esbuild must keep. So the bundle takes
 * from each handler module only its `*_ACCESS` exports, as the data they are, evaluated here
 * from the real module: the grants are the handlers' own, and the library needs nothing at synth
 * time beyond its peers (zod and the other pure code of lambda/ it uses are bundled in).
 *
 * Run by `npm run build` (and so by `prepack`).
 */
import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(REPOSITORY_ROOT, 'dist');

/** The peer dependencies: the app's own copies, so its constructs and this library's are of one class. */
const PEERS = ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'];

/** The exports of a handler module the library reads: its grants. */
const ACCESS_EXPORT = /^[A-Z][A-Z_]*_ACCESS$/;

/**
 * Replaces each handler module by its `*_ACCESS` exports, as literals. An import of any other
 * export of a handler from lib/ then fails the build, rather than loading the handler.
 */
const handlerAccessesOnly: esbuild.Plugin = {
  name: 'handler-accesses-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]lambda[\\/]handlers[\\/][^\\/]+\.ts$/ }, async (args) => {
      const handlerModule: Record<string, unknown> = await import(pathToFileURL(args.path).href);
      const accesses = Object.entries(handlerModule).filter(([name]) => ACCESS_EXPORT.test(name));
      if (accesses.length === 0) return { errors: [{ text: `${path.relative(REPOSITORY_ROOT, args.path)} exports no *_ACCESS` }] };
      const contents = accesses.map(([name, value]) => `export const ${name} = ${JSON.stringify(value)};`).join('\n');
      return { contents, loader: 'js' };
    });
  },
};

/** Writes `dist/index.js` and `dist/types/`; returns the library bundle's path. */
export async function buildLibrary(): Promise<string> {
  const outfile = path.join(DIST, 'index.js');
  await rm(outfile, { force: true });
  await rm(path.join(DIST, 'types'), { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [path.join(REPOSITORY_ROOT, 'lib/index.ts')],
    absWorkingDir: REPOSITORY_ROOT,
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // The package's engines: an app may synthesize on any supported Node, not only the functions' 24.
    target: 'node20',
    external: PEERS,
    plugins: [handlerAccessesOnly],
    logLevel: 'warning',
  });
  const tsc = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPOSITORY_ROOT, stdio: 'inherit' });
  if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${tsc.status ?? tsc.signal})`);
  return outfile;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // To stderr, as esbuild reports: stdout stays the caller's (`npm pack --json`).
  console.error(`build-library: ${path.relative(process.cwd(), await buildLibrary())} and dist/types`);
}

/**
 * Bundles each function of HANDLER_ENTRIES into `dist/lambda/<handler>/index.mjs`, the code the
 * published package deploys (`Code.fromAsset`), so an app using the package needs neither esbuild
 * nor this repository's dependencies. esbuild's JS API with HANDLER_BUNDLING, the options
 * NodejsFunction bundles with at synth time in this repository: the same input gives the same
 * bundle either way (test/infra/bundling.test.ts compares them).
 *
 * Run by `npm run build` (and so by `prepack`); `tsx scripts/build-lambda.ts [outdir]`.
 */
import { rm } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { HANDLER_ENTRIES } from '../lambda/routes.js';
import { HANDLER_BUNDLE_FILE, HANDLER_BUNDLING, PREBUILT_BUNDLES_DIRECTORY } from '../lib/handler-bundling.js';
import type { HandlerName } from '../lib/handler-function.js';

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the library bundle goes (scripts/build-library.ts): the bundles sit in its `lambda/`. */
export const DIST_DIRECTORY = path.join(REPOSITORY_ROOT, 'dist');

/** Bundles every handler into `<outdir>/<handler>/index.mjs`, replacing what was there; returns the files. */
export async function buildHandlerBundles(outdir: string = path.join(DIST_DIRECTORY, PREBUILT_BUNDLES_DIRECTORY)): Promise<string[]> {
  await rm(outdir, { recursive: true, force: true });
  const handlers = Object.keys(HANDLER_ENTRIES) as HandlerName[];
  return Promise.all(
    handlers.map(async (handler) => {
      const outfile = path.join(outdir, handler, HANDLER_BUNDLE_FILE);
      await esbuild.build({
        entryPoints: [path.join(REPOSITORY_ROOT, HANDLER_ENTRIES[handler])],
        absWorkingDir: REPOSITORY_ROOT,
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: HANDLER_BUNDLING.target,
        mainFields: [...HANDLER_BUNDLING.mainFields],
        banner: { js: HANDLER_BUNDLING.banner },
        minify: HANDLER_BUNDLING.minify,
        sourcemap: HANDLER_BUNDLING.sourceMap,
        external: [...HANDLER_BUNDLING.externalModules],
        logLevel: 'warning',
      });
      return outfile;
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const outdir = process.argv[2];
  const files = await buildHandlerBundles(outdir === undefined ? undefined : path.resolve(outdir));
  // To stderr, as esbuild reports: stdout stays the caller's (`npm pack --json`).
  console.error(`build-lambda: ${files.length} bundles in ${path.relative(process.cwd(), path.dirname(path.dirname(files[0] ?? '')))}`);
}

/**
 * The bundle of each function, built as lib/handler-function.ts has CDK build it (esbuild, ESM,
 * node24, minified, the AWS SDK left to the runtime), in memory: its size, and its size
 * compressed (Lambda's deployment package is a zip).
 */
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** A bundle's size as built, and compressed (Lambda's deployment package is a zip). */
export interface BundleSize {
  readonly bytes: number;
  readonly gzipBytes: number;
}

/** Bundles every entry of the checkout's HANDLER_ENTRIES (lambda/routes.ts). */
export async function bundleSizes(root: string): Promise<Record<string, BundleSize>> {
  const routes = (await import(pathToFileURL(join(root, 'lambda/routes.ts')).href)) as { HANDLER_ENTRIES: Readonly<Record<string, string>> };
  const sizes: Record<string, BundleSize> = {};
  for (const [name, entry] of Object.entries(routes.HANDLER_ENTRIES)) {
    const result = await build({
      entryPoints: [join(root, entry)],
      absWorkingDir: root,
      bundle: true,
      write: false,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      mainFields: ['module', 'main'],
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      minify: true,
      sourcemap: false,
      external: ['@aws-sdk/*'],
      logLevel: 'silent',
    });
    const contents = result.outputFiles[0]?.contents ?? new Uint8Array();
    sizes[name] = { bytes: contents.byteLength, gzipBytes: gzipSync(contents).byteLength };
  }
  return sizes;
}

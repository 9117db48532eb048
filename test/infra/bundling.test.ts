import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { HANDLER_ENTRIES } from '../../lambda/routes.js';
import type { HandlerName } from '../../lib/handler-function.js';
import { buildHandlerBundles } from '../../scripts/build-lambda.js';
import { functionResource, synthesize, type SynthesizedStack } from './synthesize.js';

const HANDLERS = Object.keys(HANDLER_ENTRIES) as HandlerName[];

/**
 * Catches a dependency pulled into a bundle whole by accident: one of the AWS SDK's clients adds
 * several hundred KB, zod whole another 100. The handlers' own code grows by a few KB a feature:
 * the consumer, the largest, is about 302 KB minified since event ids were scoped, payloads
 * travel as text and give-ups are numbered (esbuild's metafile: zod 103 KB, Powertools 31 KB, the
 * service's own modules the rest, none above 13 KB), so the budget went from 300 to 320 KB.
 */
const BUNDLE_BUDGET_BYTES = 320 * 1024;

describe('HandlerFunction bundling', () => {
  let synthesized: SynthesizedStack;
  let prebuilt: string;
  // Ten esbuild bundles (the synth's and the prebuilt ones): about 10 s alone, past the default
  // 30 s of a hook on two cores shared with other test files (a clean-clone CI ran into it).
  beforeAll(async () => {
    synthesized = synthesize({}, { bundle: true });
    prebuilt = mkdtempSync(path.join(tmpdir(), 'ordered-webhooks-bundles-'));
    await buildHandlerBundles(prebuilt);
  }, 120_000);
  afterAll(() => {
    rmSync(prebuilt, { recursive: true, force: true });
  });

  const bundleOf = (handler: HandlerName): string => {
    const { S3Key } = z.object({ S3Key: z.string() }).parse(functionResource(synthesized, handler).Properties.Code);
    return path.join(synthesized.app.outdir, `asset.${S3Key.replace(/\.zip$/, '')}`, 'index.mjs');
  };

  it.each(HANDLERS)('bundles %s into one ES module with a require for CommonJS dependencies', (handler) => {
    expect(existsSync(bundleOf(handler))).toBe(true);
    const source = readFileSync(bundleOf(handler), 'utf8');
    expect(source.startsWith("import { createRequire } from 'node:module';")).toBe(true);
    expect(source).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
  });

  it.each(HANDLERS)('leaves the AWS SDK of %s to the runtime', (handler) => {
    const source = readFileSync(bundleOf(handler), 'utf8');
    // Every mention of the SDK is an import specifier: none of it was bundled.
    const mentions = source.match(/@aws-sdk\/[\w-]+/g) ?? [];
    const imports = (source.match(/from\s*"@aws-sdk\/[\w-]+"/g) ?? []).map((specifier) =>
      specifier.replace(/^from\s*"|"$/g, ''),
    );
    expect(mentions).toEqual(imports);
  });

  it.each(HANDLERS)('keeps %s within its size budget', (handler) => {
    expect(readFileSync(bundleOf(handler)).byteLength).toBeLessThan(BUNDLE_BUDGET_BYTES);
  });

  it.each(HANDLERS)('pre-builds %s for the published package byte for byte as it bundles it at synth time', (handler) => {
    // The package deploys scripts/build-lambda.ts's bundles, this repository NodejsFunction's: the same code.
    expect(readFileSync(path.join(prebuilt, handler, 'index.mjs')).equals(readFileSync(bundleOf(handler)))).toBe(true);
  });
});

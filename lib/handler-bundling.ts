/**
 * How every function is bundled, in the names of the CDK's NodejsFunction bundling options. Two
 * builds use it: NodejsFunction at synth time from this repository's sources, and
 * scripts/build-lambda.ts (esbuild's JS API) for the bundles the published package ships. One
 * definition, so the code a function runs does not depend on which of the two built it.
 */
export const HANDLER_BUNDLING = {
  /** The nodejs24.x runtime the functions run on. */
  target: 'node24',
  mainFields: ['module', 'main'],
  /** CommonJS dependencies bundled into an ES module still call `require` for Node built-ins. */
  banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
  minify: true,
  sourceMap: false,
  /**
   * The nodejs24.x runtime ships the AWS SDK for JavaScript v3: leaving it out of the bundle
   * shrinks each function by hundreds of KB and its cold start with it.
   */
  externalModules: ['@aws-sdk/*'],
} as const;

/** The file of a bundle, in its own directory: an ES module, so `.mjs`, as NodejsFunction names it. */
export const HANDLER_BUNDLE_FILE = 'index.mjs';

/**
 * Where the published package keeps the pre-built bundles, relative to the directory of its
 * library module (`dist/index.js`): `dist/lambda/<handler>/index.mjs`.
 */
export const PREBUILT_BUNDLES_DIRECTORY = 'lambda';

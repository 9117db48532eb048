/**
 * The published package, as someone else's CDK app gets it: `npm pack` of this repository (its
 * `prepack` builds), installed into a new app in the system's temporary directory, far from this
 * repository's node_modules, lock file and esbuild.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';

export const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs a command to completion; throws with its output if it fails. Returns its stdout. */
export function run(command: string, args: readonly string[], cwd: string, timeoutMs = 120_000): string {
  const result = spawnSync(command, [...args], { cwd, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${result.error?.message ?? `exit ${result.status ?? result.signal}`}\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

const packOutputSchema = z.array(z.object({ filename: z.string(), files: z.array(z.object({ path: z.string() })) })).length(1);

export interface PackedPackage {
  readonly tarball: string;
  /** The files of the tarball, relative to the package's root. */
  readonly files: readonly string[];
}

/** `npm pack` of this repository into `destination`, which runs `prepack` (the build) first. */
export function pack(destination: string): PackedPackage {
  const [packed] = packOutputSchema.parse(JSON.parse(run('npm', ['pack', '--json', '--pack-destination', destination], REPOSITORY_ROOT)));
  if (packed === undefined) throw new Error('npm pack named no tarball');
  return { tarball: path.join(destination, packed.filename), files: packed.files.map((file) => file.path).sort() };
}

const lockEntrySchema = z.looseObject({
  version: z.string().optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  optionalDependencies: z.record(z.string(), z.string()).optional(),
  inBundle: z.boolean().optional(),
});
const lockSchema = z.object({ packages: z.record(z.string(), lockEntrySchema) });
const manifestSchema = z.object({
  name: z.string(),
  version: z.string(),
  license: z.string(),
  peerDependencies: z.record(z.string(), z.string()),
  devDependencies: z.record(z.string(), z.string()),
});

/**
 * The lock file entries of `roots` and everything they depend on, as this repository's lock file
 * has them, marked as the new app's own dependencies. With them `npm ci --offline` installs from
 * the npm cache alone: `npm ci` of this repository put exactly these tarballs there, while the
 * registry's package documents a plain `npm install` needs to resolve versions may be missing.
 */
function lockEntriesOf(roots: readonly string[]): Record<string, Record<string, unknown>> {
  const { packages } = lockSchema.parse(JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'package-lock.json'), 'utf8')));
  // Node's resolution: the nearest node_modules/<name> upward from the dependent.
  const locate = (from: string, name: string): string => {
    for (let base = from; ; ) {
      const candidate = `${base}${base === '' ? '' : '/'}node_modules/${name}`;
      if (packages[candidate] !== undefined) return candidate;
      if (base === '') throw new Error(`package-lock.json has no ${name} for ${from}`);
      const parent = base.lastIndexOf('/node_modules/');
      base = parent < 0 ? '' : base.slice(0, parent);
    }
  };
  const entries: Record<string, Record<string, unknown>> = {};
  const add = (key: string): void => {
    const entry = packages[key];
    if (entry === undefined || key in entries) return;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...own } = entry;
    entries[key] = own;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) add(locate(key, name));
  };
  for (const root of roots) add(`node_modules/${root}`);
  // Bundled dependencies travel inside their package's tarball, but the lock file lists them.
  for (const [key, entry] of Object.entries(packages)) {
    if (entry.inBundle === true && roots.some((root) => key.startsWith(`node_modules/${root}/`))) add(key);
  }
  return entries;
}

/**
 * Installs a packed tarball into `directory` with `npm ci --offline`: a package.json depending on
 * it and on `beside` (names and versions, as this repository's lock file has them), and a lock
 * file of exactly those, so that nothing is resolved from the registry.
 */
export function installTarball(
  directory: string,
  packed: { readonly tarball: string; readonly name: string; readonly version: string; readonly license: string; readonly dependencies?: Record<string, string>; readonly peerDependencies?: Record<string, string> },
  beside: Readonly<Record<string, string>>,
): void {
  const { tarball, name, ...entry } = packed;
  const dependencies = { ...beside, [name]: `file:${tarball}` };
  const lock = {
    name: 'throwaway',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'throwaway', dependencies },
      ...lockEntriesOf([...Object.keys(beside), ...Object.keys(packed.dependencies ?? {})]),
      [`node_modules/${name}`]: { ...entry, resolved: `file:${tarball}`, integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}` },
    },
  };
  writeFileSync(path.join(directory, 'package.json'), JSON.stringify({ name: 'throwaway', private: true, type: 'module', dependencies }, null, 2));
  writeFileSync(path.join(directory, 'package-lock.json'), JSON.stringify(lock, null, 2));
  run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], directory);
}

export interface ThrowawayApp {
  readonly directory: string;
  /** The installed package's directory. */
  readonly installed: string;
}

/**
 * A new app in the system's temporary directory depending on the tarball and on the peers, at
 * the versions this repository tests with, installed with `npm ci --offline`.
 */
export function installThrowawayApp(tarball: string): ThrowawayApp {
  const directory = mkdtempSync(path.join(tmpdir(), 'ordered-webhooks-app-'));
  const manifest = manifestSchema.parse(JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'package.json'), 'utf8')));
  const peers = Object.keys(manifest.peerDependencies);
  const peerVersions = Object.fromEntries(
    peers.map((peer) => {
      const version = manifest.devDependencies[peer];
      if (version === undefined) throw new Error(`The peer ${peer} is no devDependency: its tested version is unknown`);
      return [peer, version];
    }),
  );
  installTarball(directory, { tarball, name: manifest.name, version: manifest.version, license: manifest.license, peerDependencies: manifest.peerDependencies }, peerVersions);
  return { directory, installed: path.join(directory, 'node_modules', manifest.name) };
}

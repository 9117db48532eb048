/**
 * The receiver kit as its users get it: `npm pack` of `receiver/` (its `prepack` compiles it),
 * installed with `npm ci --offline` into a new app outside the repository, imported there by plain
 * `node` (this project's, and any other Node on the PATH: the machine's Node 20), verifying and
 * judging a webhook the service's own code signed.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { QueuedEvent } from '../../lambda/core/event.js';
import { signWebhook } from '../../lambda/core/webhook.js';
import { installTarball, REPOSITORY_ROOT, run } from './support/throwaway-app.js';

const KIT = path.join(REPOSITORY_ROOT, 'receiver');
const manifestSchema = z.object({ name: z.string(), version: z.string(), license: z.string(), dependencies: z.record(z.string(), z.string()) });
const packOutputSchema = z.array(z.object({ filename: z.string(), files: z.array(z.object({ path: z.string() })) })).length(1);

/** Every `node` on the PATH outside a node_modules, and this process's own. */
function nodes(): string[] {
  const found = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((directory) => directory !== '' && !directory.split(path.sep).includes('node_modules'))
    .map((directory) => path.join(directory, 'node'))
    .filter((candidate) => {
      try {
        accessSync(candidate, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return [...new Set([process.execPath, ...found].map((node) => realpathSync(node)))];
}

describe('the receiver kit’s package', { timeout: 120_000 }, () => {
  let destination: string;
  let app: string;
  let files: string[];
  const manifest = manifestSchema.parse(JSON.parse(readFileSync(path.join(KIT, 'package.json'), 'utf8')));

  beforeAll(() => {
    destination = mkdtempSync(path.join(tmpdir(), 'ordered-webhooks-receiver-'));
    const [packed] = packOutputSchema.parse(JSON.parse(run('npm', ['pack', '--json', '--pack-destination', destination], KIT)));
    if (packed === undefined) throw new Error('npm pack named no tarball');
    files = packed.files.map((file) => file.path).sort();
    const tarball = path.join(destination, packed.filename);
    app = path.join(destination, 'app');
    mkdirSync(app);
    installTarball(app, { tarball, name: manifest.name, version: manifest.version, license: manifest.license, dependencies: manifest.dependencies }, {});
  });

  afterAll(() => {
    rmSync(destination, { recursive: true, force: true });
  });

  it('holds its compiled modules, their declarations, its README and manifest, and nothing else', () => {
    expect(files).toEqual(['README.md', 'dist/body.d.ts', 'dist/body.js', 'dist/index.d.ts', 'dist/index.js', 'dist/order.d.ts', 'dist/order.js', 'dist/receiver.d.ts', 'dist/receiver.js', 'dist/store.d.ts', 'dist/store.js', 'package.json']);
  });

  it('depends on standardwebhooks and zod alone, pinned: no AWS SDK', () => {
    expect(manifest.dependencies).toEqual({ standardwebhooks: expect.stringMatching(/^\d+\.\d+\.\d+$/), zod: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    const installed = run('npm', ['ls', '--all', '--parseable'], app);
    expect(installed).not.toMatch(/@aws-sdk|@smithy/);
  });

  it('verifies and judges a webhook the service signed, on every Node at hand', () => {
    const secret = 'whsec_' + Buffer.alloc(32, 5).toString('base64');
    const queued: QueuedEvent = {
      version: 1,
      event: { event_id: 'evt_3', tenant_id: 't', subscription_id: 'sub_1', type: 'order.paid', payload_json: '{"n":3}' },
      ordering_key: 'sub_1',
      message_group_id: 'g',
      accepted_at: '2026-12-04T12:00:00.000Z',
    };
    const request = signWebhook({ queued, sequence: 3, previousSequence: 1, secrets: [secret], attemptedAt: new Date() });
    const script = [
      `import { createReceiver } from '${manifest.name}';`,
      'const seen = [];',
      `const receiver = createReceiver({ secret: ${JSON.stringify(secret)}, onEvent: (event, report) => void seen.push([event.subscriptionId, event.sequence, report.verdict, report.missing]) });`,
      `const answer = await receiver.fetch(new Request('http://receiver/hooks', { method: 'POST', headers: ${JSON.stringify(request.headers)}, body: ${JSON.stringify(request.body)} }));`,
      'console.log(JSON.stringify({ status: answer.status, seen, node: process.versions.node }));',
    ].join('\n');
    writeFileSync(path.join(app, 'check.mjs'), script);
    const ran = nodes().map((node) => {
      const result = spawnSync(node, ['check.mjs'], { cwd: app, encoding: 'utf8', timeout: 30_000 });
      expect(result.status, `${node}: ${result.stderr}`).toBe(0);
      return z.object({ status: z.number(), seen: z.array(z.unknown()), node: z.string() }).parse(JSON.parse(result.stdout));
    });
    for (const answer of ran) expect(answer, answer.node).toMatchObject({ status: 204, seen: [['sub_1', 3, 'gap', [2]]] });
    expect(ran.map((answer) => answer.node)).toContain(process.versions.node);
  });
});

/**
 * The operator console's files, as the local stack (`/console` beside its API) and the CLI's
 * `console` command (a loopback proxy to a deployed API) serve them: the page, its stylesheet (uPlot's
 * included) and its script, bundled once from `console/src` by esbuild on first request. Everything
 * comes from the repository and node_modules: the console needs no network at run time.
 *
 * Every answer forbids what the page never does (inline scripts, other origins, framing), so a
 * payload that slipped past the console's text-only rendering still could not run.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { CONSOLE_PATH } from './path.js';

const CONSOLE_DIR = fileURLToPath(new URL('.', import.meta.url));
const require = createRequire(import.meta.url);

/** What every console answer carries: no inline script or style, nothing from another origin, no framing. */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** One answer of the console's files. */
export interface ConsoleAsset {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

interface AssetSource {
  readonly contentType: string;
  readonly load: () => Promise<string>;
}

async function bundleScript(): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(new URL('src/main.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: false,
    write: false,
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no console bundle');
  return output.text;
}

async function stylesheet(): Promise<string> {
  const [uplot, own] = await Promise.all([readFile(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'), readFile(`${CONSOLE_DIR}console.css`, 'utf8')]);
  return `${uplot}\n${own}`;
}

const SOURCES: Readonly<Record<string, AssetSource>> = {
  [`${CONSOLE_PATH}/`]: { contentType: 'text/html; charset=utf-8', load: () => readFile(`${CONSOLE_DIR}index.html`, 'utf8') },
  [`${CONSOLE_PATH}/console.js`]: { contentType: 'text/javascript; charset=utf-8', load: bundleScript },
  [`${CONSOLE_PATH}/console.css`]: { contentType: 'text/css; charset=utf-8', load: stylesheet },
};

export interface ConsoleAssets {
  /** The answer for a console path (see {@link isConsolePath}) asked with `method`. */
  readonly serve: (method: string, pathname: string) => Promise<ConsoleAsset>;
}

/** The console's files, each loaded (and the script bundled) once, on its first request. */
export function createConsoleAssets(): ConsoleAssets {
  const loaded = new Map<string, Promise<string>>();
  const load = (path: string, source: AssetSource): Promise<string> => {
    let body = loaded.get(path);
    if (body === undefined) {
      body = source.load();
      loaded.set(path, body);
      // A failed load is tried again on the next request rather than kept.
      body.catch(() => loaded.delete(path));
    }
    return body;
  };
  return {
    serve: async (method, pathname) => {
      const text = (statusCode: number, body: string, extra: Record<string, string> = {}): ConsoleAsset => ({
        statusCode,
        headers: { ...CONSOLE_SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...extra },
        body,
      });
      if (method !== 'GET' && method !== 'HEAD') return text(405, `${pathname} takes GET.\n`, { allow: 'GET, HEAD' });
      if (pathname === CONSOLE_PATH) return text(308, `The console is at ${CONSOLE_PATH}/\n`, { location: `${CONSOLE_PATH}/` });
      const source = SOURCES[pathname];
      if (source === undefined) return text(404, `No console file ${pathname}.\n`);
      const body = await load(pathname, source);
      return { statusCode: 200, headers: { ...CONSOLE_SECURITY_HEADERS, 'content-type': source.contentType }, body: method === 'HEAD' ? '' : body };
    },
  };
}

/**
 * Which requests a loopback server of this repository answers: the local stack's HTTP API (and its
 * console) and the CLI's console proxy. Both listen on 127.0.0.1 with no authentication of their
 * own, so every web page the developer's browser opens can reach them:
 * - DNS rebinding: a page on `evil.example` can make its name resolve to 127.0.0.1 and then read
 *   answers as same-origin. Its requests still carry `Host: evil.example:<port>`, so a request whose
 *   `Host` is not the server's own loopback name and port is refused, whatever its path.
 * - Cross-site writes: any page may send a "simple" POST (a form, or `fetch` with `no-cors` and
 *   `content-type: text/plain`) with the right `Host`; it cannot read the answer, but the write
 *   would be done. Browsers name the page's origin in `Origin` and say where a request comes from
 *   in `Sec-Fetch-Site`, so a write whose `Origin` is not the server's own, or that comes from
 *   another site (`cross-site`, or `same-site`: a sibling page is not the server), is refused.
 *   Reads need no such check: the browser keeps a cross-origin answer from the page that asked
 *   (these servers send no CORS headers).
 * Requests with neither `Origin` nor `Sec-Fetch-Site` (curl, the CLI, the SDK) are not a browser's
 * cross-site requests, and pass with the right `Host`.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The error code of a refusal, in the contract's error shape (a code of these servers, not of the API). */
export const LOOPBACK_REFUSAL_CODE = 'forbidden';

/** Methods that change nothing: the only ones a page of another origin may send. */
const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `Sec-Fetch-Site` values of a request another site's page made. */
const OTHER_SITES: ReadonlySet<string> = new Set(['cross-site', 'same-site']);

/** A refused request: `reason` for the server's log line, `message` for the answer. */
export interface LoopbackRefusal {
  readonly statusCode: 403;
  readonly code: typeof LOOPBACK_REFUSAL_CODE;
  readonly message: string;
  readonly reason: string;
}

/** Decides, per request, whether a loopback server answers it (see the module comment). */
export interface LoopbackGuard {
  /** `Host` values the server answers, e.g. `127.0.0.1:3000`, `localhost:3000`. */
  readonly hosts: ReadonlySet<string>;
  /** Its own origins, e.g. `http://127.0.0.1:3000`: the only `Origin` a write may carry. */
  readonly origins: ReadonlySet<string>;
  /** The refusal of a request, or undefined when it is answered. */
  readonly check: (method: string, headers: IncomingHttpHeaders) => LoopbackRefusal | undefined;
}

/** `::1` → `[::1]`: a host as it is written in a URL or a `Host` header. */
export function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * The guard of a server listening on `port` under `names` (its listening address, and `localhost`).
 * `describe` names the server in refusals ("This console", "The local stack").
 */
export function createLoopbackGuard(names: readonly string[], port: number, describe: string): LoopbackGuard {
  const hosts = new Set<string>();
  const origins = new Set<string>();
  for (const name of new Set(names.map((value) => value.toLowerCase()))) {
    hosts.add(`${hostInUrl(name)}:${port}`);
    origins.add(`http://${hostInUrl(name)}:${port}`);
  }
  const refusal = (message: string, reason: string): LoopbackRefusal => ({ statusCode: 403, code: LOOPBACK_REFUSAL_CODE, message, reason });
  return {
    hosts,
    origins,
    check: (method, headers) => {
      const host = (headers.host ?? '').toLowerCase();
      if (!hosts.has(host)) return refusal(`${describe} answers only requests to ${[...hosts].join(' or ')}.`, `Host ${JSON.stringify(host)} is not its own`);
      if (READ_METHODS.has(method)) return undefined;
      const fetchSite = headers['sec-fetch-site'];
      if (fetchSite !== undefined && OTHER_SITES.has(fetchSite)) {
        return refusal(`A ${method} from another site is refused: only ${describe.toLowerCase()}'s own page, or a client that is no browser, may change anything.`, `Sec-Fetch-Site ${fetchSite}`);
      }
      const origin = headers.origin;
      if (origin !== undefined && !origins.has(origin.toLowerCase())) {
        return refusal(`A ${method} from another origin (${origin}) is refused: only ${describe.toLowerCase()}'s own page, or a client that is no browser, may change anything.`, `Origin ${JSON.stringify(origin)} is not its own`);
      }
      return undefined;
    },
  };
}

/** A refusal in the contract's error shape, as a JSON body. */
export function refusalBody(refusal: LoopbackRefusal): string {
  return JSON.stringify({ error: { code: refusal.code, message: refusal.message } });
}

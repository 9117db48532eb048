/**
 * The endpoint policy applied to a subscription's URL: deployed, its host must resolve to public
 * addresses only (`core/endpoint-policy.ts`). The same lookup judges the address each delivery
 * connects to (`webhook-sender.ts`).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from '../core/endpoint-policy.js';

/** The address a name resolved to is not allowed. */
export class EndpointNotAllowedError extends Error {
  override readonly name = 'EndpointNotAllowedError';
  constructor(readonly address: string) {
    super(`address ${address} is not a public address`);
  }
}

/** A name resolved to no address at all (an empty answer, not a DNS error). */
export class HostNotResolvedError extends Error {
  override readonly name = 'HostNotResolvedError';
  constructor(readonly hostname: string) {
    super(`${hostname} did not resolve`);
  }
}

/** A DNS lookup that refuses names resolving to any non-public address. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused !== undefined) return callback(new EndpointNotAllowedError(refused.address), '', 0);
    const first = addresses[0];
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    if (first === undefined) return callback(new HostNotResolvedError(hostname), '', 0);
    return callback(null, first.address, first.family);
  });
};

/** The outcome of checking an endpoint URL when a subscription is made. */
export type EndpointCheck = { readonly isAllowed: true } | { readonly isAllowed: false; readonly reason: string };

/** A URL's hostname without the brackets of an IPv6 literal. */
export function unbracketed(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** Resolves a URL's host and refuses it when any of its addresses is not public. */
export async function checkEndpoint(url: string, allowPrivateEndpoints: boolean): Promise<EndpointCheck> {
  if (allowPrivateEndpoints) return { isAllowed: true };
  const host = unbracketed(new URL(url).hostname);
  if (isIP(host) !== 0) {
    return isPublicAddress(host) ? { isAllowed: true } : { isAllowed: false, reason: `${host} is not a public address` };
  }
  return new Promise((resolve) => {
    publicOnlyLookup(host, { all: true }, (error) => {
      if (error === null) return resolve({ isAllowed: true });
      if (error instanceof EndpointNotAllowedError) return resolve({ isAllowed: false, reason: `${host} resolves to ${error.address}, which is not a public address` });
      return resolve({ isAllowed: false, reason: `${host} could not be resolved (${error.code ?? error.message})` });
    });
  });
}

/**
 * Nothing of the local stack listens beyond loopback: it has no authentication, and its queues
 * and tables hold the events' payloads. Each port the stack opens (the HTTP API, fauxqs, dynalite)
 * answers on 127.0.0.1 and refuses a connection to any other address of this machine.
 */
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { useTestStack } from './support/stack-and-receiver.js';

/** A connection to one of this machine's own addresses is answered at once; this only bounds a hang. */
const CONNECT_TIMEOUT_MS = 2_000;

const Outcome = { connected: 'connected', refused: 'refused', timedOut: 'timed out' } as const;
type Outcome = (typeof Outcome)[keyof typeof Outcome] | `failed: ${string}`;

function tryConnect(host: string, port: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: CONNECT_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(Outcome.connected);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(Outcome.timedOut);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? Outcome.refused : `failed: ${error.code ?? error.message}`));
  });
}

/**
 * This machine's addresses other than 127.0.0.1: every non-internal IPv4 address of its
 * interfaces, and on Linux 127.0.0.2, which reaches `lo` there without any configuration. A
 * socket listening on every interface accepts on each; one on 127.0.0.1 refuses. 127.0.0.2 keeps
 * the test able to fail on a machine with only `lo`.
 */
function otherAddresses(): string[] {
  const external = Object.values(networkInterfaces())
    .flatMap((addresses) => addresses ?? [])
    .filter((address) => address.family === 'IPv4' && !address.internal)
    .map((address) => address.address);
  return [...(process.platform === 'linux' ? ['127.0.0.2'] : []), ...external];
}

describe('local stack listening addresses', { timeout: 60_000 }, () => {
  const stack = useTestStack();

  it('answers on 127.0.0.1 and refuses every other address of the machine, on every port it opens', async () => {
    const endpoints = { api: stack().url, sqs: stack().emulatorEndpoints.sqs, dynamo: stack().emulatorEndpoints.dynamo };
    const others = otherAddresses();
    expect(others.length, 'an address other than 127.0.0.1 to probe').toBeGreaterThan(0);

    const probes = Object.entries(endpoints).map(([name, endpoint]) => {
      const url = new URL(endpoint);
      return { name, host: url.hostname, port: Number(url.port) };
    });
    const outcomes: Record<string, Outcome> = {};
    const expected: Record<string, Outcome> = {};
    await Promise.all(
      probes.flatMap(({ name, host, port }) => [
        (async () => {
          expected[`${name} on ${host}`] = Outcome.connected;
          outcomes[`${name} on ${host}`] = await tryConnect(host, port);
        })(),
        ...others.map(async (other) => {
          expected[`${name} on ${other}`] = Outcome.refused;
          outcomes[`${name} on ${other}`] = await tryConnect(other, port);
        }),
      ]),
    );
    expect(probes.map((probe) => probe.host)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    expect(outcomes).toEqual(expected);
  });
});

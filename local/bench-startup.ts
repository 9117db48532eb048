/**
 * Time from `npm start` to the first 200 on GET /health, as a user runs it. Run:
 * `npx tsx local/bench-startup.ts [runs, default 3]`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

const runs = Number(process.argv[2] ?? 3);

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}

async function isHealthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`)).status === 200;
  } catch {
    return false;
  }
}

async function measureOnce(): Promise<number> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const startedAt = performance.now();
  const child = spawn('npm', ['start'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  const exited = once(child, 'exit');
  while (!(await isHealthy(url))) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const healthyMs = performance.now() - startedAt;
  child.kill('SIGTERM');
  const [code] = await exited;
  if (code !== 0) throw new Error(`npm start exited with ${String(code)} after SIGTERM`);
  return healthyMs;
}

const timings: number[] = [];
for (let run = 0; run < runs; run += 1) timings.push(await measureOnce());
timings.sort((a, b) => a - b);
process.stdout.write(`npm start → GET /health 200: ${timings.map((ms) => `${Math.round(ms)} ms`).join(', ')} (median ${Math.round(timings[Math.floor(timings.length / 2)] ?? 0)} ms)\n`);

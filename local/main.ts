/**
 * `npm start`: the local stack in the foreground. Reads the configuration once (a bad value stops
 * start-up with a message naming the variable; a busy PORT with one saying to set another),
 * prints the banner once the HTTP API listens, and
 * stops cleanly on SIGINT or SIGTERM, finishing in-flight requests and consumer batches first.
 */
import { ConfigError, Deployment, loadProcessConfig, type Config } from '../lambda/config.js';
import { describeStartFailure, formatBanner } from './banner.js';
import { stopOnSignals } from './shutdown.js';
import { startLocalStack, type LocalStack } from './stack.js';
import { createTerminalLogger } from './terminal-logger.js';

/** Exit code for a refused configuration (sysexits' EX_CONFIG). */
const EXIT_CONFIG = 78;

function readConfig(): Config {
  try {
    return loadProcessConfig(Deployment.local);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(EXIT_CONFIG);
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createTerminalLogger('local', config.logLevel);
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ config });
  } catch (error) {
    const fixable = describeStartFailure(error, config);
    if (fixable === undefined) logger.error('the local stack could not start', { error });
    else process.stderr.write(`The local stack could not start: ${fixable}\n`);
    process.exit(1);
  }
  process.stdout.write(formatBanner(stack.url, stack.emulatorEndpoints, config));
  stopOnSignals(stack.stop, {
    stopping: (signal) => logger.info('stopping: finishing in-flight requests and consumer batches', { signal }),
    stopped: () => logger.info('stopped'),
    failed: (error) => logger.error('stopping failed', { error }),
    forced: (signal) => logger.warn('second signal: exiting without waiting', { signal }),
  });
}

await main();

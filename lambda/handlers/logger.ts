/** Structured logs (Powertools Logger): ids and reasons only, never payloads or secrets. */
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogLevel } from '../config.js';

export function createLogger(serviceName: string, logLevel: LogLevel): Logger {
  return new Logger({ serviceName, logLevel });
}

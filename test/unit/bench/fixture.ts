/**
 * A usage as a bench scenario would count it, with round numbers, for the cost and model tests.
 */
import { EMPTY_RECEIVE, type CallCount, type Usage } from '../../../bench/usage.js';

const call = (caller: CallCount['caller'], service: string, operation: string, table: string, figures: Partial<CallCount>): CallCount => ({
  caller,
  service,
  operation,
  table,
  calls: 0,
  billedRequests: 0,
  readUnits: 0,
  writeUnits: 0,
  indexWriteUnits: 0,
  ...figures,
});

/** 100 events of 10 keys in 10 requests, one event per consumer invocation. */
export const SPARSE_USAGE: Usage = {
  keys: 10,
  events: 100,
  httpRequests: 10,
  consumerInvocations: 10,
  meanLongestGroupRun: 1,
  calls: [
    call('ingest', 'SQS', 'SendMessageBatch', '', { calls: 10, billedRequests: 10 }),
    call('ingest', 'DynamoDB', 'UpdateItem', 'Events', { calls: 100, writeUnits: 200 }),
    call('consumer', 'DynamoDB', 'GetItem', 'Events', { calls: 100, readUnits: 100 }),
    call('consumer', 'DynamoDB', 'UpdateItem', 'Groups', { calls: 100, writeUnits: 100, indexWriteUnits: 100 }),
    call('poller', 'SQS', 'ReceiveMessage', '', { calls: 10, billedRequests: 10 }),
    call('poller', 'SQS', EMPTY_RECEIVE, '', { calls: 50, billedRequests: 50 }),
    call('poller', 'SQS', 'DeleteMessageBatch', '', { calls: 10, billedRequests: 10 }),
  ],
  hotItems: [
    { table: 'Settings', distinctItems: 1, readUnitsPerEvent: 0.1, writeUnitsPerEvent: 0 },
    { table: 'Events', distinctItems: 100, readUnitsPerEvent: 0.01, writeUnitsPerEvent: 0.02 },
  ],
  logBytes: { ingest: 1000, consumer: 4000, poller: 500 },
  logLines: { ingest: 10, consumer: 20, poller: 5 },
  lagJob: { calls: [call('lagJob', 'DynamoDB', 'Query', 'Groups', { calls: 16, readUnits: 8 })], activeGroups: 10 },
};

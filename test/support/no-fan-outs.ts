/**
 * Ingest ports for a tenant with no subscription to fan out to and no fan-out recorded: for the
 * tests of ingest that send events naming their subscription only.
 */
import type { IngestPorts } from '../../lambda/core/ingest.js';

export const NO_FAN_OUTS: Pick<IngestPorts, 'findTenantSubscriptions' | 'findFanOuts' | 'recordFanOut'> = {
  findTenantSubscriptions: async (tenantIds) => new Map(tenantIds.map((tenantId) => [tenantId, new Map()])),
  findFanOuts: async () => new Map(),
  recordFanOut: async (record) => record,
};

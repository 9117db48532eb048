/**
 * What each deployed function's role allows, read from the synthesized CDK template: the
 * simulation refuses (AccessDenied, as AWS would) and reports every call a handler makes that its
 * role does not allow. The check is on the template itself, so a grant missing from the stack is
 * found whatever the code says about its own calls.
 */
import type { Stack } from 'aws-cdk-lib';
import { QUEUES, TABLES } from '../../lambda/resources.js';
import { permissionsOf, synthesize } from '../infra/synthesize.js';

/** A resource a call reaches, by its name in the project's definitions. */
export type ResourceRef =
  | { readonly kind: 'table'; readonly table: string; readonly index?: string }
  | { readonly kind: 'queue'; readonly queue: string }
  | { readonly kind: 'bucket'; readonly key: string }
  | { readonly kind: 'topic' };

/** The functions whose calls the simulation checks, by their HANDLER_ENTRIES names. */
export type FunctionName = 'ingest' | 'subscriptions' | 'consumer' | 'operations' | 'lagMetrics';

export interface DeployedGrants {
  /** Whether the function's role allows `action` on the resource. */
  readonly allows: (fn: FunctionName, action: string, resource: ResourceRef) => boolean;
}

interface StackShape extends Stack {
  readonly functions: Readonly<Record<string, { readonly role: { readonly roleName: string } }>>;
  readonly tables: { table(name: string): { readonly tableArn: string }; indexArn(name: string, index: string): string };
  readonly queues: { readonly deliveryQueue: { readonly queueArn: string }; readonly deadLetterQueue: { readonly queueArn: string } };
  readonly payloads?: { readonly bucket: { arnForObjects(pattern: string): string } };
  readonly webhooks: { readonly noticeTopic?: { readonly topicArn: string } };
}

/** Synthesizes the stack with the default configuration (no bundling, about a second) and reads its grants. */
export function readDeployedGrants(): DeployedGrants {
  const synthesized = synthesize();
  const stack = synthesized.stack as unknown as StackShape;
  const json = (token: string): string => JSON.stringify(stack.resolve(token));
  const tableKeyByName = new Map<string, string>(Object.entries(TABLES).map(([key, definition]) => [definition.localName, key]));
  const queueArns: Record<string, string> = {
    [QUEUES.delivery.localName]: json(stack.queues.deliveryQueue.queueArn),
    [QUEUES.deadLetter.localName]: json(stack.queues.deadLetterQueue.queueArn),
  };
  const granted = new Map<FunctionName, Set<string>>();
  for (const fn of ['ingest', 'subscriptions', 'consumer', 'operations', 'lagMetrics'] as const) {
    const role = stack.functions[fn]?.role;
    if (role === undefined) throw new Error(`the stack has no function ${fn}`);
    const permissions = permissionsOf(synthesized.template, stack.resolve(role.roleName));
    granted.set(fn, new Set(permissions.map((permission) => `${permission.action} ${JSON.stringify(permission.resource)}`)));
  }
  const objectPatterns = (): string[] => {
    const bucket = stack.payloads?.bucket;
    return bucket === undefined ? [] : [json(bucket.arnForObjects('dead-letters/*')), json(bucket.arnForObjects('*'))];
  };
  const arnsOf = (resource: ResourceRef): string[] => {
    switch (resource.kind) {
      case 'table': {
        const key = tableKeyByName.get(resource.table);
        if (key === undefined) return [];
        return [resource.index === undefined ? json(stack.tables.table(key).tableArn) : json(stack.tables.indexArn(key, resource.index))];
      }
      case 'queue':
        return queueArns[resource.queue] === undefined ? [] : [queueArns[resource.queue] as string];
      case 'bucket':
        // Only keys under the prefix the grant names are allowed.
        return resource.key.startsWith('dead-letters/') ? objectPatterns() : objectPatterns().slice(1);
      case 'topic': {
        const topic = stack.webhooks.noticeTopic;
        return topic === undefined ? [] : [json(topic.topicArn)];
      }
    }
  };
  // Resolving a CDK token walks the construct tree: once per resource, not on every call checked.
  const resolved = new Map<string, readonly string[]>();
  const resolvedArnsOf = (resource: ResourceRef): readonly string[] => {
    const key = JSON.stringify(resource);
    const arns = resolved.get(key) ?? arnsOf(resource);
    resolved.set(key, arns);
    return arns;
  };
  return {
    allows: (fn, action, resource) => resolvedArnsOf(resource).some((arn) => granted.get(fn)?.has(`${action} ${arn}`) === true),
  };
}

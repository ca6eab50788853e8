import { OncelyError } from '@oncely/core';
import type { Cluster, Redis } from 'ioredis';

/** The keys of one journal. */
export interface JournalKeys {
  /** The hash holding one operation's entry. */
  entry(operationId: string): string;
  /** Sorted sets of operation ids by `updatedAt`, one per open state, and one of settled ids. */
  readonly pending: string;
  readonly unknown: string;
  readonly settled: string;
}

/**
 * Keys under `{<prefix>}`: the prefix is the hash tag, so a journal's entries and indexes share one
 * Cluster slot and every script declares all its keys. Operation ids go into keys verbatim: Redis keys
 * are binary-safe, and the fixed `:e:` part keeps entry keys apart from the three index keys.
 */
export function journalKeys(prefix: unknown, client: Redis | Cluster): JournalKeys {
  const clientPrefix = (client.options as { keyPrefix?: unknown } | undefined)?.keyPrefix ?? '';
  if (typeof prefix !== 'string' || prefix.length === 0 || typeof clientPrefix !== 'string' || /[{}]/.test(prefix + clientPrefix)) {
    throw new OncelyError(
      'invalid_option',
      'oncely/redis: the journal prefix (and the client keyPrefix) must be non-empty strings without braces',
    );
  }
  const tag = `{${prefix}}`;
  return {
    entry: (operationId) => `${tag}:e:${operationId}`,
    pending: `${tag}:pending`,
    unknown: `${tag}:unknown`,
    settled: `${tag}:settled`,
  };
}

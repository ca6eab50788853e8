import type { Scope } from '@oncely/core';

/**
 * The `_id` of a scope's record: the JSON array `[tenant, principal, operation, key]`. JSON quotes and
 * escapes every string, so no choice of characters makes two scopes share an `_id` (injective), and
 * {@link decodeScopeId} recovers the scope exactly.
 */
export function encodeScopeId(scope: Scope): string {
  return JSON.stringify([scope.tenant, scope.principal, scope.operation, scope.key]);
}

/** Inverse of {@link encodeScopeId}; throws on an `_id` this adapter did not write. */
export function decodeScopeId(id: unknown): Scope {
  const parts: unknown = typeof id === 'string' ? JSON.parse(id) : undefined;
  if (!Array.isArray(parts) || parts.length !== 4 || !parts.every((part) => typeof part === 'string')) {
    throw new Error(`the _id ${JSON.stringify(id)} is not an oncely scope id`);
  }
  const [tenant, principal, operation, key] = parts as [string, string, string, string];
  return { tenant, principal, operation, key };
}

/** The authenticated caller: the idempotency scope's tenant and principal come from here, never from the key. */
export interface Caller {
  readonly tenant: string;
  readonly principal: string;
}

/** The result of reading `Authorization`: a caller, or why there is none. */
export type Authentication =
  | { readonly kind: 'authenticated'; readonly caller: Caller }
  | { readonly kind: 'unauthenticated'; readonly detail: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Reads `Authorization: Bearer <tenant>:<principal>` (e.g. `Bearer acme:alice`). The demo trusts the
 * token as written: it stands in for whatever your gateway verifies.
 */
export function authenticate(header: string | undefined): Authentication {
  if (!header) return { kind: 'unauthenticated', detail: 'Send Authorization: Bearer <tenant>:<principal>, e.g. Bearer acme:alice.' };
  const match = /^Bearer\s+([^:\s]+):([^:\s]+)$/i.exec(header.trim());
  if (!match || !NAME.test(match[1]!) || !NAME.test(match[2]!)) {
    return {
      kind: 'unauthenticated',
      detail: 'The bearer token must be <tenant>:<principal>: letters, digits, dot, dash or underscore, at most 64 each.',
    };
  }
  return { kind: 'authenticated', caller: { tenant: match[1]!, principal: match[2]! } };
}

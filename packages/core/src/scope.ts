import { OncelyError } from './errors.js';

/** The identity of one idempotency record. Different scopes never share a record. */
export interface Scope {
  /** Tenant from the authenticated identity; required. */
  readonly tenant: string;
  /** Principal (user, API client) within the tenant; `''` when the tenant is the caller. */
  readonly principal: string;
  /** Stable semantic name with a version, such as `payments.create.v1`; never a raw URL. */
  readonly operation: string;
  /** The client's opaque idempotency key. */
  readonly key: string;
}

/** Longest key accepted (the IETF draft and Stripe both use 255). */
export const MAX_KEY_LENGTH = 255;
const MAX_IDENTITY_LENGTH = 255;
const MAX_OPERATION_LENGTH = 128;
/** Visible ASCII only: no spaces, no control characters, nothing a log line could be forged with. */
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** Tenants and principals come from authentication; control characters there are a bug, not an id. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]|[\uD800-\uDFFF]/u;
/** True when `text` holds a control character or a lone surrogate: no identifier from a real system does. */
export const hasControlCharacter = (text: string): boolean => CONTROL_CHARACTER.test(text);

/** A semantic name (`payments.create.v1`); a slash means someone passed a URL. */
const OPERATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/** Checks an idempotency key: 1–255 visible ASCII characters. Throws a coded {@link OncelyError}. */
export function assertValidKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new OncelyError('missing_key', 'oncely: the idempotency key is missing or empty');
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new OncelyError(
      'key_too_long',
      `oncely: the idempotency key has ${key.length} characters; at most ${MAX_KEY_LENGTH} are allowed`,
    );
  }
  if (!VISIBLE_ASCII.test(key)) {
    throw new OncelyError(
      'invalid_key_characters',
      'oncely: the idempotency key may contain only visible ASCII characters (0x21-0x7E)',
    );
  }
}

/** Validates and normalizes a scope before any store is touched. */
export function toScope(input: {
  tenant?: unknown;
  principal?: unknown;
  operation?: unknown;
  key?: unknown;
}): Scope {
  const { tenant, principal = '', operation, key } = input;
  if (typeof tenant !== 'string' || tenant.length === 0) {
    throw new OncelyError('missing_tenant', 'oncely: a tenant is required to scope the record');
  }
  if (tenant.length > MAX_IDENTITY_LENGTH || hasControlCharacter(tenant)) {
    throw new OncelyError(
      'invalid_tenant',
      `oncely: the tenant must be at most ${MAX_IDENTITY_LENGTH} characters with no control characters or lone surrogates`,
    );
  }
  if (typeof principal !== 'string' || principal.length > MAX_IDENTITY_LENGTH || hasControlCharacter(principal)) {
    throw new OncelyError(
      'invalid_principal',
      `oncely: the principal must be a string of at most ${MAX_IDENTITY_LENGTH} characters with no control characters or lone surrogates`,
    );
  }
  if (typeof operation !== 'string' || operation.length === 0) {
    throw new OncelyError('missing_operation', 'oncely: an operation name such as "payments.create.v1" is required');
  }
  if (operation.length > MAX_OPERATION_LENGTH || !OPERATION_NAME.test(operation)) {
    throw new OncelyError(
      'invalid_operation',
      `oncely: the operation "${operation.slice(0, 40)}" is not a semantic name (letters, digits and . _ : -, at most ${MAX_OPERATION_LENGTH}); use a name such as "payments.create.v1", not a URL`,
    );
  }
  assertValidKey(key);
  return { tenant, principal, operation, key };
}

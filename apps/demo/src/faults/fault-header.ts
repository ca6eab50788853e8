/** Header that asks the service to fail at a named point (only with `--faults`). */
export const FAULT_HEADER = 'oncely-fault';

/** Longest delay a request may ask for. */
const MAX_DELAY_MS = 60_000;

/** A fault one request asked for. */
export type RequestFault =
  | { readonly kind: 'none' }
  /** SIGKILL the process inside the open transaction, after every write and before COMMIT. */
  | { readonly kind: 'crash-before-commit' }
  /** Commit, then destroy the socket without writing a response. */
  | { readonly kind: 'drop-response' }
  /** Sleep inside the open transaction, holding its locks. */
  | { readonly kind: 'delay'; readonly ms: number };

/** The header's value, read: a fault, or why it is not one. */
export type FaultHeaderCheck = { readonly kind: 'valid'; readonly fault: RequestFault } | { readonly kind: 'invalid'; readonly detail: string };

/** Parses `Oncely-Fault: crash-before-commit | drop-response | delay=<ms>`. */
export function parseFaultHeader(value: string | string[] | undefined): FaultHeaderCheck {
  if (value === undefined) return { kind: 'valid', fault: { kind: 'none' } };
  const text = (Array.isArray(value) ? value.join(',') : value).trim();
  if (text === 'crash-before-commit' || text === 'drop-response') return { kind: 'valid', fault: { kind: text } };
  const delay = /^delay=([0-9]{1,5})$/.exec(text);
  if (delay && Number(delay[1]) <= MAX_DELAY_MS) return { kind: 'valid', fault: { kind: 'delay', ms: Number(delay[1]) } };
  return {
    kind: 'invalid',
    detail: `Oncely-Fault must be crash-before-commit, drop-response or delay=<ms> (at most ${MAX_DELAY_MS}).`,
  };
}

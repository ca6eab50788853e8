import type { PGlite } from '@electric-sql/pglite';

/** A statement as one driver object sent it, and whether a transaction of that object was open. */
export interface Sent {
  readonly text: string;
  readonly inTransaction: boolean;
}

/** A second object over the same PGlite instance, as the bench's counting proxy is, recording what it sends. */
export function recordingPglite(db: PGlite, sent: Sent[]): PGlite {
  const recording = <T extends object>(target: T, inTransaction: boolean): T =>
    new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object) as unknown;
        if (typeof value !== 'function') return value;
        if (property === 'query' || property === 'exec') {
          return (text: string, ...rest: unknown[]) => {
            sent.push({ text, inTransaction });
            return (value as (...args: unknown[]) => unknown).call(object, text, ...rest);
          };
        }
        if (property === 'transaction') {
          return (callback: (tx: object) => Promise<unknown>) =>
            (value as (cb: (tx: object) => Promise<unknown>) => unknown).call(object, (tx: object) => callback(recording(tx, true)));
        }
        return (value as (...args: unknown[]) => unknown).bind(object);
      },
    });
  return recording(db, false);
}


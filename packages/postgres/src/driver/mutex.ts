/** Runs tasks one at a time, in call order. */
export interface Mutex {
  run<T>(task: () => Promise<T>): Promise<T>;
}

/** A promise-chain mutex: a single `pg.Client` cannot interleave two transactions. */
export function mutex(): Mutex {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run(task) {
      const result = tail.then(task);
      // The next task waits for this one to settle, whether it succeeded or not.
      tail = result.catch(() => undefined);
      return result;
    },
  };
}

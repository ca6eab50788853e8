/** What every transport's consumers share: a start and a stop. */
export interface StartStop {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts every consumer of `list` and resolves the stop of them all, as `Transport.startConsumers` does. */
export async function consumersOf(list: readonly StartStop[]): Promise<() => Promise<void>> {
  await Promise.all(list.map((consumer) => consumer.start()));
  return async () => {
    await Promise.all(list.map((consumer) => consumer.stop()));
  };
}

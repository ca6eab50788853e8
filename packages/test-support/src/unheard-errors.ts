/**
 * Records every error that would have crashed the process (`uncaughtException`,
 * `unhandledRejection`) until `stop()`; with `logged`, also the `console.error` lines it matches (a
 * client that logs an `'error'` event nobody heard instead of throwing it, as ioredis does).
 */
export function unheardErrors(options: { readonly logged?: RegExp } = {}): { readonly errors: unknown[]; stop(): void } {
  const errors: unknown[] = [];
  const onUnheard = (error: unknown) => errors.push(error);
  process.on('uncaughtException', onUnheard);
  process.on('unhandledRejection', onUnheard);
  const consoleError = console.error;
  const { logged } = options;
  if (logged) {
    console.error = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && logged.test(args[0])) errors.push(args.join(' '));
      else consoleError(...args);
    };
  }
  return {
    errors,
    stop() {
      process.off('uncaughtException', onUnheard);
      process.off('unhandledRejection', onUnheard);
      console.error = consoleError;
    },
  };
}

/** What ioredis logs for an `'error'` event without a listener. */
export const IOREDIS_UNHEARD = /^\[ioredis\] Unhandled error event/;

/** Named points where the service can be killed. */
export type CrashPoint = 'before-commit' | 'relay-after-publish' | 'consumer-before-ack' | 'flow-after-charge';

/**
 * Kills this process with SIGKILL: no exit handlers, no flush, no rollback from our side; the
 * database aborts the open transaction when the connection dies, exactly as after a real crash.
 */
export function crashNow(point: CrashPoint): never {
  process.stderr.write(`oncely demo: fault injected, SIGKILL at ${point} (pid ${process.pid})\n`);
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is not catchable, but the signal is delivered asynchronously: stop this path here.
  throw new Error('unreachable: the process was killed');
}

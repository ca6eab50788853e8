import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ProducerJob, ProducerMessage, ProducerStamp } from './producer-process.js';

const entry = fileURLToPath(new URL('./producer-process.ts', import.meta.url));

/** A started producer process: runs one job, handing each event's stamps to `onStamp` as they arrive. */
export interface ProducerChild {
  run(job: ProducerJob, onStamp: (stamp: ProducerStamp) => void): Promise<void>;
  kill(): void;
}

/** Forks `producer-process.ts` and waits until it is ready, so its start-up is not counted in the run. */
export async function startProducerChild(): Promise<ProducerChild> {
  const child = fork(entry, { execArgv: ['--import', 'tsx'], env: { ...process.env, ONCELY_BENCH_PRODUCER: '1' }, stdio: 'inherit' });
  const [first] = (await once(child, 'message')) as [ProducerMessage];
  if (!('ready' in first)) throw new Error('bench: the producer process did not start');
  return {
    run: (job, onStamp) =>
      new Promise<void>((resolve, reject) => {
        let finished = false;
        child.on('message', (message: ProducerMessage) => {
          if ('stamps' in message) for (const stamp of message.stamps) onStamp(stamp);
          else if ('done' in message) {
            finished = true;
            resolve();
          } else if ('error' in message) {
            finished = true;
            reject(new Error(`bench: the producer process failed: ${message.error}`));
          }
        });
        child.once('exit', (code) => {
          if (!finished) reject(new Error(`bench: the producer process exited (${code}) before it was done`));
        });
        child.send(job);
      }),
    kill: () => {
      if (child.exitCode === null) child.kill();
    },
  };
}

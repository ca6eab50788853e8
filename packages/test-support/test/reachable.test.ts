import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { reachableAs } from '../src/index.js';

/** A port nothing listens on: bound once by a server that is closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('reachableAs', () => {
  it('waits for a server that starts listening, and gives up on one that never does', async () => {
    const port = await closedPort();
    const server = createServer();
    setTimeout(() => server.listen(port, '127.0.0.1'), 150);
    await reachableAs(`tcp://127.0.0.1:${port}`, true, 5_000);
    await new Promise((resolve) => server.close(resolve));
    await expect(reachableAs(`tcp://127.0.0.1:${port}`, true, 200)).rejects.toThrow('still down after 200 ms');
  });

  it('stops at once when failFast throws, instead of waiting out the timeout', async () => {
    const port = await closedPort();
    const started = Date.now();
    let asked = 0;
    const failFast = async () => {
      if (++asked === 2) throw new Error('the server died at boot');
    };
    await expect(reachableAs(`tcp://127.0.0.1:${port}`, true, 60_000, { failFast })).rejects.toThrow('the server died at boot');
    expect(asked).toBe(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

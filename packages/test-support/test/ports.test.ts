import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canListen, listenablePort, PRIVATE_PORTS } from '../src/index.js';

const listening = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));

describe('listenablePort', () => {
  const target = createServer((socket) => socket.on('error', () => undefined));
  let held: Socket;
  let heldPort: number;

  beforeAll(async () => {
    const targetPort = await listening(target);
    // An outgoing connection, as every client makes: the kernel gives it a port of the ephemeral range.
    held = connect({ host: '127.0.0.1', port: targetPort });
    await new Promise((resolve) => held.once('connect', resolve));
    heldPort = held.localPort!;
  });
  afterAll(async () => {
    held.destroy();
    await new Promise((resolve) => target.close(resolve));
  });

  it('skips a port a client socket holds, which a connect probe would call free', async () => {
    const refused = await new Promise<boolean>((resolve) => connect({ host: '127.0.0.1', port: heldPort }).once('error', () => resolve(true)).once('connect', () => resolve(false)));
    expect(refused).toBe(true);
    expect(await canListen(heldPort)).toBe(false);
    expect(await listenablePort(heldPort, 20)).toBeGreaterThan(heldPort);
  });

  it('wants every port of a run free', async () => {
    await expect(listenablePort(heldPort, 1)).rejects.toThrow(`no 1 listenable port(s) in ${heldPort}-${heldPort}`);
    // Both runs of two in heldPort-1…heldPort+1 take the held port.
    await expect(listenablePort(heldPort - 1, 3, 2)).rejects.toThrow(`no 2 listenable port(s) in ${heldPort - 1}-${heldPort + 1}`);
  });

  it('passes over a free port that accept refuses', async () => {
    const seen: number[] = [];
    const port = await listenablePort(PRIVATE_PORTS.httpStorms, 50, 1, (candidate) => {
      seen.push(candidate);
      return seen.length > 2;
    });
    expect(seen).toHaveLength(3);
    expect(port).toBe(seen[2]);
    await expect(listenablePort(PRIVATE_PORTS.httpStorms, 3, 1, () => false)).rejects.toThrow('no 1 listenable port(s)');
  });

  it('keeps every private range below the kernel ephemeral range', () => {
    const [floor] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    for (const first of Object.values(PRIVATE_PORTS)) expect(first + 100).toBeLessThanOrEqual(floor!);
  });
});

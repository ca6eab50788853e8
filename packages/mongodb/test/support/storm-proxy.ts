import { socketProxy } from '@oncely/test-support';

// A TCP proxy between the driver and a server (a real MongoDB, or a scripted one) that cuts every
// connection it carries on a timer: a connection storm made of real socket resets. It listens on the
// private port range this package's storm tests use (25000-25999).

/** A running proxy. */
export interface StormProxy {
  /** The port the driver connects to. */
  readonly port: number;
  /** Cuts every carried connection now and then every `everyMs`, until {@link StormProxy.calm}. */
  storm(everyMs: number): void;
  /** Stops cutting connections. */
  calm(): void;
  /** Connections cut so far. */
  readonly destroyed: number;
  close(): Promise<void>;
}

const FIRST_PORT = 25_000;
const PORTS = 1_000;

/** Starts a proxy to `host:port` on a free port of the private range. */
export async function stormProxy(target: { host: string; port: number }): Promise<StormProxy> {
  const start = Math.floor(Math.random() * PORTS);
  for (let i = 0; i < PORTS; i++) {
    const port = FIRST_PORT + ((start + i) % PORTS);
    const proxy = await socketProxy(port, target).catch(() => undefined);
    if (!proxy) continue;
    let destroyed = 0;
    let timer: NodeJS.Timeout | undefined;
    const cutAll = () => {
      destroyed += proxy.cut();
    };
    return {
      port,
      storm(everyMs) {
        cutAll();
        clearInterval(timer);
        timer = setInterval(cutAll, everyMs);
      },
      calm: () => clearInterval(timer),
      get destroyed() {
        return destroyed;
      },
      close: async () => {
        clearInterval(timer);
        cutAll();
        await proxy.close();
      },
    };
  }
  throw new Error('storm proxy: no free port in 25000-25999');
}

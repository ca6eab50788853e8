import type { Idempotency, IdempotencyStore } from '@oncely/core';
import type { FloorName, StoreName } from '../bench-engines.js';
import type { StoreFloor } from '../store-floor.js';

/** A running bench server. */
export interface RunningServer {
  close(): Promise<void>;
}

/** One request sent without a socket, as the framework's own injection sends it. */
export interface InjectedRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What an injected request got back. */
export interface InjectedResponse {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: string;
}

/** One binding's app with the bare route and the same route behind oncely on each store ({@link ROUTES}). */
export interface BenchApp {
  /** Serves the app on `port` over real HTTP. */
  listen(port: number): Promise<RunningServer>;
  /** Sends one POST in-process (fastify.inject, light-my-request, `app.request`, a direct call). */
  inject(request: InjectedRequest): Promise<InjectedResponse>;
}

/** Builds one binding's {@link BenchApp}; both sides of every comparison run in the same framework and process. */
export type BuildBinding = (
  engines: Record<StoreName, Idempotency<IdempotencyStore>>,
  floors: Record<FloorName, StoreFloor>,
) => Promise<BenchApp>;

/** Closes a `node:http` server with its keep-alive connections. */
export function closeServer(server: { closeAllConnections(): void; close(callback: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** An injected response read from a fetch Response. */
export async function fromResponse(response: Response): Promise<InjectedResponse> {
  return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', body: await response.text() };
}

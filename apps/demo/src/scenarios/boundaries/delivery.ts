import { type InvoiceLine, readBroker, readInvoiceLines, readStats, type StatsView, waitFor } from '../probes.js';

/** The outbox and the broker queue, as far as billing is concerned. */
export interface DeliveryState {
  readonly stats: StatsView;
  readonly unacked: number;
  readonly lines: readonly InvoiceLine[];
}

/** Reads the delivery state of one tenant. */
async function readDelivery(baseUrl: string, caller: string): Promise<DeliveryState> {
  const [stats, broker, lines] = await Promise.all([readStats(baseUrl), readBroker(baseUrl), readInvoiceLines(baseUrl, caller)]);
  return { stats, unacked: broker.unacked, lines };
}

/** Waits until every event is published and every delivery acknowledged (and `also` holds). */
export function waitForSettled(baseUrl: string, caller: string, also: (state: DeliveryState) => boolean = () => true) {
  return waitFor(
    () => readDelivery(baseUrl, caller),
    (state) => state.stats.outbox_unpublished === 0 && state.unacked === 0 && also(state),
    { timeoutMs: 30_000, intervalMs: 150 },
  );
}

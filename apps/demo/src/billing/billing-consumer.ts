import type { Inbox } from '@oncely/core/outbox';
import type { Database, Queryable } from '../database/database.js';
import { ACK_MESSAGE, INSERT_INVOICE_LINE, PENDING_MESSAGES } from '../database/sql.js';
import type { ArmedFaults } from '../faults/armed-faults.js';
import { crashNow } from '../faults/crash.js';
import type { PaymentSucceeded } from '../payments/charge.js';

/** Billing's name in the inbox: its deduplication is its own. */
const BILLING_CONSUMER = 'billing';

/** A running consumer loop. */
export interface BillingConsumer {
  /** Ends the loop after the delivery in hand. */
  stop(): Promise<void>;
}

/** Options of {@link startBillingConsumer}. */
export interface BillingConsumerOptions {
  readonly database: Database;
  readonly inbox: Inbox<Queryable>;
  readonly faults: ArmedFaults;
  readonly onOutcome: (outcome: 'processed' | 'duplicate') => void;
  /** Awaited just before a crash fault fires. */
  readonly beforeCrash: () => Promise<void>;
  readonly pollIntervalMs?: number;
}

interface Delivery {
  readonly id: string;
  readonly event_id: string;
  readonly payload: PaymentSucceeded | string;
}

/**
 * Billing reads the broker queue and records one invoice line per payment. Each delivery runs through
 * the inbox in billing's own transaction (the invoice line commits with the inbox row), then is
 * acknowledged separately, as with a real broker. A crash between the two (the `consumer-before-ack`
 * fault) leaves the message to be delivered again, and the inbox skips it.
 */
export function startBillingConsumer(options: BillingConsumerOptions): BillingConsumer {
  const { database, inbox, faults, onOutcome } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<number> = Promise.resolve(0);

  async function handle(delivery: Delivery): Promise<void> {
    const event = typeof delivery.payload === 'string' ? (JSON.parse(delivery.payload) as PaymentSucceeded) : delivery.payload;
    const outcome = await database.transaction((tx) =>
      inbox.process(tx, { consumer: BILLING_CONSUMER, eventId: delivery.event_id }, (inTx) =>
        inTx.query(INSERT_INVOICE_LINE, [event.tenant, event.account_id, event.payment_id, event.amount, event.currency, delivery.event_id]),
      ),
    );
    onOutcome(outcome);
    if (faults.take('consumer-before-ack')) {
      await options.beforeCrash();
      crashNow('consumer-before-ack');
    }
    await database.query(ACK_MESSAGE, [delivery.id]);
  }

  async function drain(): Promise<number> {
    const { rows } = await database.query<Delivery>(PENDING_MESSAGES, [100]);
    for (const delivery of rows) await handle(delivery);
    return rows.length;
  }

  const tick = () => {
    current = drain()
      .catch((error: Error) => {
        process.stderr.write(`oncely demo: billing consumer failed, retrying: ${error.message}\n`);
        return 0;
      })
      .finally(() => {
        if (running) timer = setTimeout(tick, pollIntervalMs);
      });
  };
  timer = setTimeout(tick, pollIntervalMs);

  return {
    async stop() {
      running = false;
      clearTimeout(timer);
      await current;
    },
  };
}

// The /checkout page, bundled for the browser (dist/checkout.js). Its operation id comes from the
// cart, so a reload, a second click or a second tab resumes one payment under one key.
import {
  idempotentFetch,
  indexedDbJournal,
  localStorageJournal,
  type OperationView,
  trackOperation,
} from '@oncely/http/browser';
import { CART_ID, CART_LINES, CART_TOTAL, CHECKOUT_ACCOUNT, checkoutOperationId } from './cart.js';

/** A created payment, as the API answers it. */
interface Payment {
  readonly id: string;
  readonly amount: string;
}

const params = new URLSearchParams(location.search);
const tenant = params.get('tenant') ?? 'acme';
const authorization = `Bearer ${tenant}:shopper`;
// IndexedDB where the browser has it; localStorage (weaker across tabs) where it does not.
const journal = 'indexedDB' in globalThis ? indexedDbJournal({ database: 'oncely-demo-checkout' }) : localStorageJournal();
// A checkout waits at most 8 s for a definitive answer, then says it is checking.
const policy = { maxAttempts: 5, deadlineMs: 8_000, attemptTimeoutMs: 3_000, baseMs: 250, capMs: 2_000 };

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** The cart this page pays: from the URL, else a new one, written back so a reload keeps it. */
function cartId(): string {
  const given = params.get('cart');
  if (given !== null && CART_ID.test(given)) return given;
  const created = `c${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
  params.set('cart', created);
  history.replaceState(null, '', `${location.pathname}?${params}`);
  return created;
}

async function showBalance(): Promise<void> {
  const response = await fetch(`/v1/accounts/${CHECKOUT_ACCOUNT}`, { headers: { authorization }, cache: 'no-store' }).catch(() => undefined);
  const account = response?.ok ? ((await response.json()) as { balance: string; payments: number }) : undefined;
  byId('balance').textContent = account
    ? `${CHECKOUT_ACCOUNT} balance ${account.balance} USD · ${account.payments} charge${account.payments === 1 ? '' : 's'}`
    : `${CHECKOUT_ACCOUNT} balance unavailable`;
}

function render(view: OperationView<Payment, { detail?: string }>): void {
  const status = byId('status');
  status.dataset.state = view.status;
  byId('message').textContent = view.message;
  const key = 'key' in view ? view.key : undefined;
  byId('key').textContent = key ?? '—';
  const detail = byId('detail');
  const action = byId<HTMLButtonElement>('action');
  action.hidden = !('action' in view);
  if ('action' in view) {
    action.dataset.action = view.action;
    action.textContent = view.action === 'start' ? `Pay ${CART_TOTAL} USD` : 'Check again';
  }
  byId('new-cart').hidden = view.status !== 'succeeded' && view.status !== 'failed';
  if (view.status === 'succeeded') detail.textContent = `Payment ${view.value.id} · ${view.value.amount} USD`;
  else if (view.status === 'failed') detail.textContent = view.error.detail ?? 'The payment service refused it.';
  else if (view.status === 'unknown') detail.textContent = 'Checking again asks with the same payment key: you are never charged twice.';
  else if (view.status === 'unreadable') detail.textContent = `${view.error.code}: ${view.error.message}`;
  else if (view.status === 'ready' && view.lastError !== undefined) detail.textContent = 'Nothing was charged; paying again reuses the same key.';
  else detail.textContent = '';
  if (view.status !== 'working') void showBalance();
}

async function main(): Promise<void> {
  const cart = cartId();
  byId('cart-id').textContent = cart;
  byId('journal').textContent = journal.name;
  byId('lines').replaceChildren(
    ...CART_LINES.map((line) => {
      const row = document.createElement('li');
      row.textContent = `${line.name} — ${line.price} USD`;
      return row;
    }),
  );
  byId('total').textContent = `${CART_TOTAL} USD`;
  const newCart = new URLSearchParams(params);
  newCart.delete('cart');
  byId<HTMLAnchorElement>('new-cart').href = `${location.pathname}?${newCart}`;

  const operationId = checkoutOperationId(cart);
  const checkout = await trackOperation<Response, Payment, { detail?: string }>({
    journal,
    operationId,
    run: () =>
      idempotentFetch(
        '/v1/payments',
        {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ account_id: CHECKOUT_ACCOUNT, amount: CART_TOTAL, currency: 'USD' }),
        },
        { operationId, journal, policy },
      ),
    read: (response) => response.json() as Promise<Payment>,
    readError: async (error) => (error instanceof Response ? ((await error.json().catch(() => ({}))) as { detail?: string }) : {}),
    onChange: render,
  });
  byId<HTMLButtonElement>('action').addEventListener('click', () => {
    void (checkout.view.status === 'unknown' ? checkout.reconcile() : checkout.start());
  });
  document.body.dataset.ready = 'true';
}

void main();

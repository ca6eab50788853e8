/** One line of the demo cart. */
export interface CartLine {
  readonly name: string;
  /** Price in USD, a decimal string as the payments API takes it. */
  readonly price: string;
}

/** What every demo cart holds: the amount the checkout charges is their sum. */
export const CART_LINES: readonly CartLine[] = [
  { name: 'Espresso beans, 1 kg', price: '24.00' },
  { name: 'Grinder brush', price: '6.50' },
];

/** The cart's total, in cents-exact decimal text. */
export const CART_TOTAL = (CART_LINES.reduce((cents, line) => cents + Math.round(Number(line.price) * 100), 0) / 100).toFixed(2);

/** The account the shopper pays from. */
export const CHECKOUT_ACCOUNT = 'acc_3';

/** A cart id: letters, digits, `_` and `-`, 1 to 64 of them (it becomes part of the operation id). */
export const CART_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The operation the "Pay" button of a cart stands for: one per cart, whatever the tab, click or reload. */
export const checkoutOperationId = (cartId: string) => `cart-${cartId}:checkout`;

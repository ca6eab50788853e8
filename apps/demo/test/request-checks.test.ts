import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { authenticate } from '../src/auth/bearer.js';
import { parseFaultHeader } from '../src/faults/fault-header.js';
import { checkAmount } from '../src/payments/money.js';
import { checkPaymentRequest } from '../src/payments/payment-request.js';

const cents = fc.bigInt({ min: 1n, max: 10n ** 12n - 1n });
const asAmount = (value: bigint) => `${value / 100n}.${String(value % 100n).padStart(2, '0')}`;

describe('amounts are exact decimal strings', () => {
  it('accepts every positive amount with two places that fits numeric(14,2), unchanged', () => {
    fc.assert(
      fc.property(cents, (value) => {
        const text = asAmount(value);
        expect(checkAmount(text)).toEqual({ kind: 'valid', amount: text });
      }),
    );
  });

  it('refuses numbers, even when they look like money', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true }), (value) => {
        expect(checkAmount(value).kind).toBe('invalid');
      }),
    );
  });

  it('refuses other spellings: missing places, signs, exponents, spaces, leading zeros, zero', () => {
    for (const text of ['10', '10.0', '10.000', '-1.00', '+1.00', '1e2', ' 1.00', '01.00', '0.00', '12345678901.00', '1,00']) {
      expect(checkAmount(text).kind, text).toBe('invalid');
    }
  });
});

describe('payment requests are validated before any claim', () => {
  const valid = { account_id: 'acc_3', amount: '10.00', currency: 'USD' };

  it('accepts the documented body', () => {
    expect(checkPaymentRequest(valid)).toEqual({ kind: 'valid', request: valid });
  });

  it('answers 404 for an account other than acc_1 to acc_5, 400 for everything else wrong', () => {
    expect(checkPaymentRequest({ ...valid, account_id: 'acc_6' })).toMatchObject({ kind: 'invalid', status: 404 });
    expect(checkPaymentRequest({ ...valid, currency: 'EUR' })).toMatchObject({ kind: 'invalid', status: 400 });
    expect(checkPaymentRequest({ ...valid, amount: 10 })).toMatchObject({ kind: 'invalid', status: 400 });
    expect(checkPaymentRequest({ ...valid, note: 'x' })).toMatchObject({ kind: 'invalid', status: 400 });
    expect(checkPaymentRequest([valid])).toMatchObject({ kind: 'invalid', status: 400 });
    expect(checkPaymentRequest(null)).toMatchObject({ kind: 'invalid', status: 400 });
  });
});

describe('bearer authentication', () => {
  it('reads tenant and principal from Bearer <tenant>:<principal>', () => {
    expect(authenticate('Bearer acme:alice')).toEqual({ kind: 'authenticated', caller: { tenant: 'acme', principal: 'alice' } });
  });

  it('refuses a missing header, another scheme, or a token without both parts', () => {
    for (const header of [undefined, '', 'Basic YWNtZTphbGljZQ==', 'Bearer acme', 'Bearer :alice', 'Bearer acme:', 'Bearer a:b:c']) {
      expect(authenticate(header).kind, String(header)).toBe('unauthenticated');
    }
  });
});

describe('Oncely-Fault header', () => {
  it('parses the three documented faults', () => {
    expect(parseFaultHeader('crash-before-commit')).toEqual({ kind: 'valid', fault: { kind: 'crash-before-commit' } });
    expect(parseFaultHeader('drop-response')).toEqual({ kind: 'valid', fault: { kind: 'drop-response' } });
    expect(parseFaultHeader('delay=250')).toEqual({ kind: 'valid', fault: { kind: 'delay', ms: 250 } });
    expect(parseFaultHeader(undefined)).toEqual({ kind: 'valid', fault: { kind: 'none' } });
  });

  it('refuses anything else, including delays over a minute', () => {
    for (const value of ['crash', 'delay=', 'delay=-1', 'delay=60001', 'delay=1.5', 'DROP-RESPONSE']) {
      expect(parseFaultHeader(value).kind, value).toBe('invalid');
    }
  });
});

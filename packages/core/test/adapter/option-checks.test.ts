import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { integerOption, invalidOption, numberOption } from '../../src/adapter.js';
import { isOncelyError } from '../../src/index.js';

const refused = (run: () => unknown) => {
  try {
    run();
    return undefined;
  } catch (error) {
    return isOncelyError(error, 'invalid_option') ? error.message : `not invalid_option: ${String(error)}`;
  }
};

describe('option checks', () => {
  it('integerOption accepts safe integers from the minimum up and names the option when it refuses', () => {
    expect(integerOption('oncely/redis: batchSize', 50)).toBe(50);
    expect(integerOption('oncely: limit', 0, 0)).toBe(0);
    expect(refused(() => integerOption('oncely/redis: batchSize', 0))).toBe('oncely/redis: batchSize must be a positive integer, got 0');
    expect(refused(() => integerOption('oncely: retainMs', -1, 0))).toBe('oncely: retainMs must be a non-negative integer, got -1');
    expect(refused(() => integerOption('oncely: n', 2, 3))).toBe('oncely: n must be an integer >= 3, got 2');
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '5', undefined, null]) {
      expect(refused(() => integerOption('oncely: n', bad))).toMatch(/^oncely: n must be a positive integer/);
    }
  });

  it('numberOption accepts finite numbers from the minimum up', () => {
    expect(numberOption('oncely: staleAfterMs', 0.5)).toBe(0.5);
    for (const bad of [-0.1, Number.NaN, Number.POSITIVE_INFINITY, '1']) {
      expect(refused(() => numberOption('oncely: staleAfterMs', bad))).toMatch(/^oncely: staleAfterMs must be a finite number >= 0/);
    }
  });

  it('invalidOption is the coded error every adapter throws for an option', () => {
    const error = invalidOption('oncely/mysql', 'pool must be a mysql2 Pool');
    expect([error.code, error.message]).toEqual(['invalid_option', 'oncely/mysql: pool must be a mysql2 Pool']);
  });

  it('property: integerOption accepts exactly the safe integers >= minimum', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 60)), fc.integer({ min: -5, max: 5 }), (value, minimum) => {
        const accepted = refused(() => integerOption('x', value, minimum)) === undefined;
        expect(accepted).toBe(Number.isSafeInteger(value) && value >= minimum);
      }),
    );
  });
});

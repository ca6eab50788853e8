import { isOncelyError, type OncelyErrorCode } from '@oncely/core';

/** Resolves when `promise` rejects with an oncely error of `code`; rejects (failing the test) otherwise. */
export async function expectCode(promise: Promise<unknown>, code: OncelyErrorCode, clause?: string): Promise<void> {
  const where = clause ? `${clause}: ` : '';
  try {
    await promise;
  } catch (error) {
    if (isOncelyError(error) && error.code === code) return;
    throw new Error(`${where}expected oncely error ${code}, got ${String(error)}`, { cause: error });
  }
  throw new Error(`${where}expected oncely error ${code}, but the call succeeded`);
}

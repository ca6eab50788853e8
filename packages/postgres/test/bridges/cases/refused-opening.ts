import type { IdempotencyRequest } from '@oncely/core';

/**
 * Runs `request` on an ORM whose transaction opens differently than its held route expects: what
 * was thrown (its message and its cause's, together) and whether the handler ran.
 */
export async function refusedOpening(
  idempotency: { runInTransaction(request: IdempotencyRequest, handler: () => Promise<{ status: number }>): Promise<unknown> },
  request: IdempotencyRequest,
): Promise<{ readonly message: string; readonly ran: boolean }> {
  let ran = false;
  const thrown = await idempotency
    .runInTransaction(request, async () => {
      ran = true;
      return { status: 201 };
    })
    .catch((error: unknown) => error);
  return { message: String((thrown as Error).message) + String((thrown as { cause?: Error }).cause?.message), ran };
}

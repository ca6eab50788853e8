import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';

/** What the payments controllers record: one entry per execution (a stand-in for the payment provider). */
export const ledger: { id: string; amount: number }[] = [];

function charge(amount: number): { id: string; amount: number } {
  const created = { id: `pay_${ledger.length + 1}`, amount };
  ledger.push(created);
  return created;
}

/** The controller of the Express recipe: the idempotency middleware runs before it (see express-app.ts). */
@Controller('payments')
export class ExpressPaymentsController {
  @Post()
  @HttpCode(201)
  create(@Body() body: { amount: number }) {
    return charge(body.amount);
  }
}

/** The controller of the Fastify recipe: `@RouteConfig` gives the route its `config.idempotency`. */
@Controller('payments')
export class FastifyPaymentsController {
  @Post()
  @HttpCode(201)
  @RouteConfig({ idempotency: { operation: 'payments.create.v1' } })
  create(@Body() body: { amount: number }) {
    return charge(body.amount);
  }
}

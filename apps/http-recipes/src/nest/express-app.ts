import 'reflect-metadata';
import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Idempotency, IdempotencyStore } from '@oncely/core';
import { expressIdempotency } from '@oncely/http/express';
import { ExpressPaymentsController } from './payments.controller.js';

/**
 * NestJS 11 on the Express adapter: `expressIdempotency` is Nest middleware for the idempotent
 * routes, so everything the controller answers (through Nest's own `res.json`) is held until the
 * outcome is recorded, and retries replay it.
 */
export async function createExpressApp(engine: Idempotency<IdempotencyStore>): Promise<NestExpressApplication> {
  @Module({ controllers: [ExpressPaymentsController] })
  class PaymentsModule implements NestModule {
    configure(consumer: MiddlewareConsumer) {
      consumer
        .apply(expressIdempotency({ engine, operation: 'payments.create.v1', scope: (req) => ({ tenant: req.get('x-tenant') ?? 'demo' }) }))
        .forRoutes({ path: 'payments', method: RequestMethod.POST });
    }
  }
  return NestFactory.create<NestExpressApplication>(PaymentsModule, { logger: false });
}

import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Idempotency, IdempotencyStore } from '@oncely/core';
import { fastifyIdempotency } from '@oncely/http/fastify';
import { FastifyPaymentsController } from './payments.controller.js';

/**
 * NestJS 11 on the Fastify adapter: the `fastifyIdempotency` plugin is registered on Nest's Fastify
 * instance before Nest adds its routes, and each idempotent route names its operation with
 * `@RouteConfig({ idempotency: { operation } })`.
 */
export async function createFastifyApp(engine: Idempotency<IdempotencyStore>): Promise<NestFastifyApplication> {
  @Module({ controllers: [FastifyPaymentsController] })
  class PaymentsModule {}
  const app = await NestFactory.create<NestFastifyApplication>(PaymentsModule, new FastifyAdapter(), { logger: false });
  // Nest's adapter brings its own Fastify copy: the plugin only needs its hooks API.
  await app.register(fastifyIdempotency as never, {
    engine,
    scope: (request: { headers: Record<string, string | string[] | undefined> }) => ({ tenant: String(request.headers['x-tenant'] ?? 'demo') }),
  });
  return app;
}

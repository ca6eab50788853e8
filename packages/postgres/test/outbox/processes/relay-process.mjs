// An outbox relay in its own OS process, importing the built packages as users do: the Postgres
// outbox → Redis streams (the body is @oncely/test-support's). SIGKILLed, it cleans nothing up:
// its leases simply lapse.
import { postgresOutbox } from '@oncely/postgres';
import { partitionOf, redisStreamPublisher } from '@oncely/redis';
import { relayProcess } from '@oncely/test-support/processes';
import { Redis } from 'ioredis';

await relayProcess({
  outbox: (pool, config) => postgresOutbox({ db: pool, schema: config.schema, table: config.table }),
  async transport(config) {
    const redis = new Redis(config.redisUrl);
    return {
      publisher: redisStreamPublisher({
        client: redis,
        stream: (event) => `${config.streamPrefix}${partitionOf(event.aggregateId, config.partitions)}`,
      }),
      close: async () => redis.disconnect(),
    };
  },
});

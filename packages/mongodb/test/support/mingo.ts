import { Aggregator, Query } from 'mingo';
import { afterAll, beforeAll, vi } from 'vitest';

// mingo is a JavaScript implementation of MongoDB's query and aggregation language, not MongoDB:
// tests that use it prove the logic of our pipelines and filters, not the server's behaviour.

/** The instant `$$NOW` stands for while {@link freezeNow} is active. */
export const NOW = new Date('2026-03-01T12:00:00.000Z');
/** `NOW` moved by `offsetMs`. */
export const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

/** Freezes the clock mingo reads for `$$NOW` during the calling test file. */
export function freezeNow(): void {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
  });
  afterAll(() => vi.useRealTimers());
}

/** Runs a pipeline over documents. */
export const runPipeline = (pipeline: object[], documents: object[]) =>
  new Aggregator(pipeline as never).run(documents as never) as unknown as Record<string, unknown>[];
/** Applies an update pipeline to one document. */
export const applyUpdate = <T>(pipeline: object[], document: object) => runPipeline(pipeline, [document])[0] as unknown as T;
/** Whether a query filter matches a document. */
export const matches = (filter: object, document: object) => new Query(filter as never).test(document as never);

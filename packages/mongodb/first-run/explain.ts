import type { Document } from 'mongodb';

// Reading `explain` output of every shape the supported servers produce: classic plans (a tree of
// `inputStage`s), SBE plans (`winningPlan.queryPlan`), MongoDB 8.0's express stages, and a router's
// plans (`shards[].winningPlan`, `executionStages.shards[]`).

/** One plan stage as explain prints it. */
export interface PlanStage {
  readonly stage: string;
  readonly indexName?: string;
  readonly indexBounds?: Record<string, readonly string[]>;
}

/** Every plan stage in an explain document, rejected plans left out, depth first. */
export function planStages(explain: unknown): PlanStage[] {
  const found: PlanStage[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Document;
    if (typeof record.stage === 'string') found.push(record as PlanStage);
    for (const [key, value] of Object.entries(record)) if (key !== 'rejectedPlans') visit(value);
  };
  visit(explain);
  return found;
}

/** Stages that read one document by `_id`: the id fast path before 8.0, the express path from 8.0. */
export function readsById(stages: readonly PlanStage[]): boolean {
  return stages.some(
    (stage) => stage.stage === 'IDHACK' || stage.stage.startsWith('EXPRESS_') || (stage.stage === 'IXSCAN' && stage.indexName === '_id_'),
  );
}

/** Whether every interval on `field` ends below `MaxKey`, so the scan stops where the bound says. */
export function boundedAbove(stage: PlanStage, field: string): boolean {
  const intervals = stage.indexBounds?.[field];
  if (!intervals || intervals.length === 0) return false;
  return intervals.every((interval) => !/MaxKey\s*[\])]$/.test(interval.trim()));
}

/**
 * Index keys the winning plan examined, summed over shards when a router answered. An aggregation's
 * explain holds them in its first stage's `$cursor` (unless the whole pipeline was pushed down), and a
 * router's aggregation explain per shard under `shards`.
 */
export function keysExamined(explain: Document): number | undefined {
  const stats = explain.executionStats as Document | undefined;
  if (typeof stats?.totalKeysExamined === 'number') return stats.totalKeysExamined;
  const shards = (stats?.executionStages as Document | undefined)?.shards as Document[] | undefined;
  if (Array.isArray(shards)) return shards.reduce((sum, shard) => sum + (typeof shard.totalKeysExamined === 'number' ? shard.totalKeysExamined : 0), 0);
  const cursor = (explain.stages as Document[] | undefined)?.[0]?.$cursor as Document | undefined;
  if (cursor) return keysExamined(cursor);
  const perShard = explain.shards as Record<string, Document> | undefined;
  if (typeof perShard !== 'object' || perShard === null || Array.isArray(perShard)) return undefined;
  const counts = Object.values(perShard).map(keysExamined);
  return counts.every((count) => count !== undefined) ? counts.reduce((sum: number, count) => sum + count!, 0) : undefined;
}

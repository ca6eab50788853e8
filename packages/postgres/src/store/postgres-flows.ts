import type { Scope } from '@oncely/core';
import {
  type AbandonedFlow,
  type AdvanceResult,
  type FlowPhase,
  type FlowState,
  type FlowStore,
  type StorageGuard,
  storageTransaction,
  toStorageError,
} from '@oncely/core/adapter';
import type { TxDriver } from '../driver/tx-driver.js';
import { qualifiedName } from '../identifiers/identifier.js';
import { prepared } from '../sql/prepared.js';
import { flowStatements } from './flow-statements.js';

const NAME = 'postgres';

type FlowMethods<Tx> = Pick<FlowStore<Tx>, 'openFlow' | 'advance' | 'listAbandonedFlows'>;

interface PhaseRow {
  readonly position: number;
  readonly name: string;
  readonly kind: FlowPhase['kind'];
  readonly result_json: string | null;
}

interface ScopeRow {
  readonly tenant: string;
  readonly principal: string;
  readonly operation: string;
  readonly idempotency_key: string;
  readonly fingerprint: string;
}

const scopeParams = (scope: Scope) => [scope.tenant, scope.principal, scope.operation, scope.key];

/**
 * The flow methods of the PostgreSQL store, over `<table>_flow` and `<table>_flow_phase`
 * (`sql/0007_flows.sql`). Each method is one transaction that first locks the record its token holds:
 * a takeover claim waits for it, and a lapsed owner finds no row and changes nothing.
 */
export function postgresFlows<Tx>(driver: TxDriver<Tx>, schema: string, table: string, storage: StorageGuard): FlowMethods<Tx> {
  const sql = prepared(
    flowStatements(qualifiedName(schema, table), qualifiedName(schema, `${table}_flow`), qualifiedName(schema, `${table}_flow_phase`)),
  );
  /** Our own statement inside a caller's phase: its failure is the store's, never the caller's. */
  const own = async <R extends object>(tx: Tx, text: string, params: unknown[]) => {
    try {
      return (await driver.on(tx).query<R>(text, params)).rows;
    } catch (error) {
      throw toStorageError(NAME, 'advance', error);
    }
  };

  return {
    openFlow: (input) =>
      storage('openFlow', () =>
        driver.transaction<FlowState | 'fence_lost'>(async (handle) => {
          const tx = driver.on(handle);
          const params = scopeParams(input.scope);
          if ((await tx.query(sql.lockHeld, [...params, input.token])).rows.length === 0) return { action: 'rollback', value: 'fence_lost' as const };
          await tx.query(sql.dropStale, params);
          await tx.query(sql.open, [...params, input.request]);
          const [flow] = (await tx.query<{ request_json: string }>(sql.request, params)).rows;
          const phases = (await tx.query<PhaseRow>(sql.phases, params)).rows.map(toPhase);
          return { action: 'commit', value: { request: flow!.request_json, phases } };
        }),
      ),

    advance: <T>(input: Parameters<FlowMethods<Tx>['advance']>[0], work: (tx: Tx) => Promise<{ result: string | undefined; value: T }>) =>
      storageTransaction<Tx, AdvanceResult<T>>(NAME, 'advance', (body) => driver.transaction(async (tx) => {
        // The end decided inside `body`; a rollback answer carries no writes.
        const value = await body(tx);
        return { action: value.kind === 'advanced' ? 'commit' : 'rollback', value };
      }), async (tx) => {
        const params = scopeParams(input.scope);
        if ((await own(tx, sql.lockHeld, [...params, input.token])).length === 0) return { kind: 'fence_lost' };
        const [at] = await own<{ current: boolean; phases: number }>(tx, sql.position, params);
        if (!at?.current || at.phases !== input.position) return { kind: 'out_of_order' };
        const outcome = await work(tx);
        await own(tx, sql.insertPhase, [...params, input.position, input.name, input.kind, outcome.result ?? null]);
        await own(tx, sql.renew, [...params, input.leaseMs]);
        return { kind: 'advanced', value: outcome.value };
      }),

    listAbandonedFlows: (limit) =>
      storage('listAbandonedFlows', async () =>
        (await driver.query<ScopeRow>(sql.abandoned, [limit])).rows.map(
          (row): AbandonedFlow => ({
            scope: { tenant: row.tenant, principal: row.principal, operation: row.operation, key: row.idempotency_key },
            fingerprint: row.fingerprint,
          }),
        ),
      ),
  };
}

const toPhase = (row: PhaseRow): FlowPhase => ({
  name: row.name,
  kind: row.kind,
  ...(row.result_json === null ? {} : { result: row.result_json }),
});

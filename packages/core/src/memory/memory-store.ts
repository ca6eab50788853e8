import { type Clock, systemClock } from '../clock.js';
import type { AdvanceInput, AdvanceResult, FlowPhase, FlowState, FlowStore, OpenFlowInput, PhaseOutcome } from '../flow/flow-store.js';
import type { Scope } from '../scope.js';
import type {
  ClaimInput,
  ClaimResult,
  CompleteInput,
  FenceResult,
  IdempotencyRecord,
  LeaseInput,
  RecordState,
  StoredResponse,
} from '../store.js';
import { bodyJson, markTextOnly, responseJson } from './stored-json.js';

/**
 * One record. The scope's fields are held flat, not as a copy of the caller's object, and a
 * terminal record drops its lease token: with every record kept for its retention (24 h by
 * default), each object and string a record holds is paid for in every garbage collection.
 */
interface Entry {
  readonly tenant: string;
  readonly principal: string;
  readonly operation: string;
  readonly key: string;
  fingerprint: string;
  state: RecordState;
  fence: number;
  /** The lease holder's token while in progress; `''` once terminal, when no lease is left to prove. */
  token: string;
  leaseExpiresAt: number;
  /** The stored response as JSON text: serialized once when saved, parsed for each reader. */
  response?: string;
  /** Its body's JSON text when the engine handed it apart from `response` (see `stored-json.ts`). */
  body?: string;
  createdAt: number;
  expiresAt: number;
  /** The flow of this record's life, if one was opened; a takeover keeps it, a fresh claim has none. */
  flow?: { readonly request: string; readonly phases: FlowPhase[] };
}

/**
 * The memory store's phase transaction: writes registered with `onCommit` run when the recovery
 * point commits, in order, and never when the phase rolls back or its owner lost the lease.
 */
export interface MemoryFlowTx {
  onCommit(write: () => void): void;
}

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  /** Judges lease and retention expiry; inject a manual clock in tests. */
  readonly clock?: Pick<Clock, 'now'>;
}

/** The reference in-memory store, with a way to count records in tests. */
export interface MemoryStore extends FlowStore<MemoryFlowTx> {
  /** Number of records held, expired ones included until purged. */
  readonly size: number;
}

/** Injective: each field is prefixed with its length, so no field can run into the next. */
const callerIdOf = (scope: Scope) => `${scope.tenant.length}:${scope.tenant}${scope.principal.length}:${scope.principal}${scope.operation}`;

/** A stored response read back from its JSON, with the body held apart put back in. */
function parseResponse(response: string, body: string | undefined): StoredResponse {
  const parsed = JSON.parse(response) as { -readonly [K in keyof StoredResponse]: StoredResponse[K] };
  if (body !== undefined) parsed.body = JSON.parse(body);
  return parsed;
}

/** The records of one caller and operation, by key. */
type Table = Map<string, Entry>;

/**
 * The reference store: every operation is one synchronous step on a Map, so it is atomic within one
 * process. It does not survive restarts and is not shared between processes: use it for tests,
 * single-process tools and as the model adapters are checked against.
 */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const clock = options.clock ?? systemClock;
  // Records by caller and operation, then by key: the client's key string is the index, so no id
  // string is built per record (kept for the retention) or per lookup.
  const tables = new Map<string, Table>();
  let count = 0;
  // The last table found: a server's requests mostly share a caller and an operation.
  let last: { readonly tenant: string; readonly principal: string; readonly operation: string; readonly table: Table } | undefined;

  function tableOf(scope: Scope, create: true): Table;
  function tableOf(scope: Scope, create: false): Table | undefined;
  function tableOf(scope: Scope, create: boolean): Table | undefined {
    if (last && last.tenant === scope.tenant && last.principal === scope.principal && last.operation === scope.operation) return last.table;
    const id = callerIdOf(scope);
    let table = tables.get(id);
    if (!table) {
      if (!create) return undefined;
      table = new Map();
      tables.set(id, table);
    }
    last = { tenant: scope.tenant, principal: scope.principal, operation: scope.operation, table };
    return table;
  }
  const remove = (id: string, table: Table, key: string) => {
    if (!table.delete(key)) return;
    count--;
    if (table.size > 0) return;
    tables.delete(id);
    if (last?.table === table) last = undefined;
  };

  const live = (scope: Scope, now: number) => {
    const entry = tableOf(scope, false)?.get(scope.key);
    return entry && entry.expiresAt > now ? entry : undefined;
  };
  const owned = (input: LeaseInput, now: number) => {
    const entry = live(input.scope, now);
    return entry && entry.state === 'in_progress' && entry.token === input.token && entry.leaseExpiresAt > now
      ? entry
      : undefined;
  };
  const scopeOf = (entry: Entry): Scope => ({
    tenant: entry.tenant,
    principal: entry.principal,
    operation: entry.operation,
    key: entry.key,
  });
  const toRecord = (entry: Entry, now: number): IdempotencyRecord => ({
    scope: scopeOf(entry),
    fingerprint: entry.fingerprint,
    state: entry.state,
    fence: entry.fence,
    ...(entry.state === 'in_progress'
      ? { leaseRemainingMs: Math.max(0, entry.leaseExpiresAt - now) }
      : { response: entry.response === undefined ? undefined : parseResponse(entry.response, entry.body) }),
    createdAt: new Date(entry.createdAt),
    expiresAt: new Date(entry.expiresAt),
  });

  const store: MemoryStore = {
    name: 'memory',
    capabilities: { transactions: false, nativeTtl: false, flows: true },
    get size() {
      return count;
    },
    async claim(input: ClaimInput): Promise<ClaimResult> {
      const now = clock.now();
      const current = live(input.scope, now);
      // A lapsed lease is taken over only by the same request: a key stays bound to its first fingerprint.
      const lapsed =
        current?.state === 'in_progress' && current.leaseExpiresAt <= now && current.fingerprint === input.fingerprint;
      if (current && !lapsed) return { kind: 'existing', record: toRecord(current, now) };
      const fence = lapsed ? current.fence + 1 : 1;
      const { scope } = input;
      const table = tableOf(scope, true);
      if (!table.has(scope.key)) count++;
      table.set(scope.key, {
        tenant: scope.tenant,
        principal: scope.principal,
        operation: scope.operation,
        key: scope.key,
        fingerprint: input.fingerprint,
        state: 'in_progress',
        fence,
        token: input.token,
        leaseExpiresAt: now + input.leaseMs,
        createdAt: lapsed ? current.createdAt : now,
        expiresAt: now + input.retentionMs,
        ...(lapsed && current.flow ? { flow: current.flow } : {}),
      });
      return { kind: 'claimed', fence, takeover: lapsed };
    },
    async complete(input: CompleteInput): Promise<FenceResult> {
      const now = clock.now();
      const entry = owned(input, now);
      if (!entry) return 'fence_lost';
      entry.state = input.state;
      entry.token = '';
      // Stores hold JSON, as every real store does: callers cannot alias a record.
      entry.response = responseJson(input.response);
      entry.body = bodyJson(input.response);
      entry.expiresAt = now + input.retentionMs;
      return 'ok';
    },
    async release(input: LeaseInput): Promise<FenceResult> {
      if (!owned(input, clock.now())) return 'fence_lost';
      remove(callerIdOf(input.scope), tableOf(input.scope, true), input.scope.key);
      return 'ok';
    },
    async extend(input: LeaseInput & { readonly leaseMs: number }): Promise<FenceResult> {
      const now = clock.now();
      const entry = owned(input, now);
      if (!entry) return 'fence_lost';
      entry.leaseExpiresAt = now + input.leaseMs;
      entry.expiresAt = Math.max(entry.expiresAt, entry.leaseExpiresAt);
      return 'ok';
    },
    async get(scope: Scope) {
      const now = clock.now();
      const entry = live(scope, now);
      return entry ? toRecord(entry, now) : undefined;
    },
    async purgeExpired(limit: number) {
      const now = clock.now();
      let purged = 0;
      for (const [id, table] of tables) {
        for (const [key, entry] of table) {
          if (purged >= limit) return purged;
          if (entry.expiresAt <= now) {
            remove(id, table, key);
            purged++;
          }
        }
      }
      return purged;
    },
    async openFlow(input: OpenFlowInput): Promise<FlowState | 'fence_lost'> {
      const entry = owned(input, clock.now());
      if (!entry) return 'fence_lost';
      entry.flow ??= { request: input.request, phases: [] };
      return { request: entry.flow.request, phases: entry.flow.phases.map((phase) => ({ ...phase })) };
    },
    async advance<T>(input: AdvanceInput, work: (tx: MemoryFlowTx) => Promise<PhaseOutcome<T>>): Promise<AdvanceResult<T>> {
      const check = (): AdvanceResult<T> | Entry => {
        const entry = owned(input, clock.now());
        if (!entry) return { kind: 'fence_lost' };
        return entry.flow?.phases.length === input.position ? entry : { kind: 'out_of_order' };
      };
      const before = check();
      if (!('fingerprint' in before)) return before;
      const writes: (() => void)[] = [];
      const outcome = await work({ onCommit: (write) => void writes.push(write) });
      // The commit: the lease and the position are judged again, and writes, phase and lease land in one step.
      const entry = check();
      if (!('fingerprint' in entry)) return entry;
      for (const write of writes) write();
      const now = clock.now();
      entry.flow!.phases.push({ name: input.name, kind: input.kind, ...(outcome.result === undefined ? {} : { result: outcome.result }) });
      entry.leaseExpiresAt = now + input.leaseMs;
      entry.expiresAt = Math.max(entry.expiresAt, entry.leaseExpiresAt);
      return { kind: 'advanced', value: outcome.value };
    },
    async listAbandonedFlows(limit: number) {
      const now = clock.now();
      return [...tables.values()]
        .flatMap((table) => [...table.values()])
        .filter((entry) => entry.flow && entry.state === 'in_progress' && entry.leaseExpiresAt <= now && entry.expiresAt > now)
        .sort((a, b) => a.leaseExpiresAt - b.leaseExpiresAt)
        .slice(0, limit)
        .map((entry) => ({ scope: scopeOf(entry), fingerprint: entry.fingerprint }));
    },
    async close() {
      tables.clear();
      count = 0;
      last = undefined;
    },
  };
  markTextOnly(store);
  return store;
}

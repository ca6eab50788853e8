import type { IdempotencyStore, RecordState, Scope, StoredResponse, TerminalState } from '@oncely/core';
import fc from 'fast-check';
import type { TestRunner } from './runner.js';

interface ModelRecord {
  state: RecordState;
  fingerprint: string;
  owner: string | undefined;
  fence: number;
  response: StoredResponse | undefined;
}

/** The reference semantics the real store is compared with, one record per run. */
export interface Model {
  record: ModelRecord | undefined;
  tokens: string[];
}

/** The store under test, the scope this run uses, and the runner's `expect`. */
export interface ModelReal {
  readonly store: IdempotencyStore;
  readonly scope: Scope;
  readonly expect: TestRunner['expect'];
}

type Command = fc.AsyncCommand<Model, ModelReal>;
const LONG = 60_000;
const DAY = 86_400_000;

/** A token the model has issued, or one nobody ever held. */
const pickToken = (model: Model, pick: number) =>
  model.tokens.length === 0 || pick >= model.tokens.length ? 'never-issued' : model.tokens[pick]!;
const holds = (model: Model, token: string) => model.record?.state === 'in_progress' && model.record.owner === token;

class Claim implements Command {
  constructor(readonly fingerprint: string) {}
  check = () => true;
  async run(model: Model, real: ModelReal) {
    const token = `token-${model.tokens.length}`;
    model.tokens.push(token);
    const result = await real.store.claim({ scope: real.scope, fingerprint: this.fingerprint, token, leaseMs: LONG, retentionMs: DAY });
    if (!model.record) {
      real.expect(result).toEqual({ kind: 'claimed', fence: 1, takeover: false });
      model.record = { state: 'in_progress', fingerprint: this.fingerprint, owner: token, fence: 1, response: undefined };
      return;
    }
    real.expect(result.kind).toBe('existing');
    if (result.kind !== 'existing') return;
    real.expect(result.record.state).toBe(model.record.state);
    real.expect(result.record.fingerprint).toBe(model.record.fingerprint);
    real.expect(result.record.fence).toBe(model.record.fence);
    real.expect(result.record.response).toEqual(model.record.response);
  }
  toString = () => `claim(${this.fingerprint.slice(0, 1)})`;
}

class Complete implements Command {
  constructor(
    readonly pick: number,
    readonly state: TerminalState,
    readonly status: number,
  ) {}
  check = () => true;
  async run(model: Model, real: ModelReal) {
    const token = pickToken(model, this.pick);
    const response: StoredResponse = { status: this.status, headers: { 'x-n': String(this.status) }, body: { status: this.status } };
    const result = await real.store.complete({ scope: real.scope, token, state: this.state, response, retentionMs: DAY });
    const expected = holds(model, token) ? 'ok' : 'fence_lost';
    real.expect(result).toBe(expected);
    if (expected === 'ok' && model.record) {
      model.record = { ...model.record, state: this.state, owner: undefined, response };
    }
  }
  toString = () => `complete(#${this.pick}, ${this.state}, ${this.status})`;
}

class Release implements Command {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(model: Model, real: ModelReal) {
    const token = pickToken(model, this.pick);
    const expected = holds(model, token) ? 'ok' : 'fence_lost';
    real.expect(await real.store.release({ scope: real.scope, token })).toBe(expected);
    if (expected === 'ok') model.record = undefined;
  }
  toString = () => `release(#${this.pick})`;
}

class Extend implements Command {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(model: Model, real: ModelReal) {
    const token = pickToken(model, this.pick);
    const expected = holds(model, token) ? 'ok' : 'fence_lost';
    real.expect(await real.store.extend({ scope: real.scope, token, leaseMs: LONG })).toBe(expected);
  }
  toString = () => `extend(#${this.pick})`;
}

class Get implements Command {
  check = () => true;
  async run(model: Model, real: ModelReal) {
    const record = await real.store.get(real.scope);
    if (!model.record) {
      real.expect(record).toBeUndefined();
      return;
    }
    real.expect(record?.state).toBe(model.record.state);
    real.expect(record?.fingerprint).toBe(model.record.fingerprint);
    real.expect(record?.fence).toBe(model.record.fence);
    real.expect(record?.response).toEqual(model.record.response);
  }
  toString = () => 'get()';
}

/** Arbitraries of every command of the store's state machine. */
export function modelCommands(): fc.Arbitrary<Command>[] {
  const pick = fc.nat({ max: 4 });
  return [
    fc.constantFrom('a'.repeat(64), 'b'.repeat(64)).map((print) => new Claim(print)),
    fc.tuple(pick, fc.constantFrom<TerminalState>('succeeded', 'failed_final'), fc.constantFrom(200, 201, 402, 422)).map(
      ([p, state, status]) => new Complete(p, state, status),
    ),
    pick.map((p) => new Release(p)),
    pick.map((p) => new Extend(p)),
    fc.constant(new Get()),
  ];
}

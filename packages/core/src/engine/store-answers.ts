/**
 * Checks of what a store may answer the engine. An answer that is not exactly one of the contract's
 * shapes was not written by the contract's rules, so the engine refuses it (`corrupt_record`) before
 * acting on it: no handler runs on a malformed claim. Each check returns what is wrong, or undefined.
 */
import { corruptRecord, type OncelyError, toStorageError } from '../errors.js';
import { describeAnswer, isObject, isPositiveInteger } from '../storage/answer-shapes.js';
import type { StoreOperation } from '../storage/storage-operation.js';
import type { IdempotencyStore } from '../store.js';
import type { EngineParts } from './engine-events.js';
import type { PreparedRequest } from './prepared-request.js';

const RECORD_STATES: ReadonlySet<unknown> = new Set(['in_progress', 'succeeded', 'failed_final']);

const isFence = isPositiveInteger;
const isOptional = (value: unknown, type: 'string' | 'boolean' | 'object') =>
  value === undefined || (type === 'object' ? isObject(value) : typeof value === type);

/** A stored response as `complete` stores it: status 100..599, headers, body, resourceId, bodyOmitted. */
function responseProblem(response: unknown): string | undefined {
  if (response === undefined) return undefined;
  if (!isObject(response)) return 'a response that is not an object';
  const { status } = response;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) return 'a response without a status 100..599';
  if (!isOptional(response.headers, 'object') || !isOptional(response.resourceId, 'string') || !isOptional(response.bodyOmitted, 'boolean')) {
    return 'a response with malformed headers, resourceId or bodyOmitted';
  }
  return undefined;
}

/** What is wrong with a record a claim reports as `existing`, if anything. */
export function recordProblem(record: unknown): string | undefined {
  if (!isObject(record)) return 'an existing record that is missing';
  if (typeof record.fingerprint !== 'string') return 'a record without a fingerprint';
  if (!RECORD_STATES.has(record.state)) return `a record in an unknown state (${describeAnswer(record.state)})`;
  if (!isFence(record.fence)) return 'a record without a valid fence';
  if (record.state === 'in_progress') {
    const remaining = record.leaseRemainingMs;
    if (remaining !== undefined && !(typeof remaining === 'number' && remaining >= 0 && remaining < Number.POSITIVE_INFINITY)) {
      return 'an in-progress record with a malformed leaseRemainingMs';
    }
    return undefined;
  }
  return responseProblem(record.response);
}

/** What is wrong with a claim's answer, if anything: `claimed` with a fence and a takeover flag, or `existing` with a record. */
export function claimProblem(answer: unknown): string | undefined {
  if (!isObject(answer)) return `a claim answer that is not an object (${describeAnswer(answer)})`;
  if (answer.kind === 'claimed') {
    return isFence(answer.fence) && typeof answer.takeover === 'boolean'
      ? undefined
      : `a claimed answer without a valid fence and takeover flag (${describeAnswer(answer)})`;
  }
  if (answer.kind === 'existing') return recordProblem(answer.record);
  return `a claim answer of no kind the contract has (${describeAnswer(answer)})`;
}

/** A claim made inside a transaction may also be `busy` (the lock wait timed out). */
export function transactionClaimProblem(answer: unknown): string | undefined {
  return isObject(answer) && answer.kind === 'busy' ? undefined : claimProblem(answer);
}

/** What is wrong with the answer of a compare-and-set (complete, release, extend): only `ok` or `fence_lost`. */
export function fenceResultProblem(answer: unknown): string | undefined {
  return answer === 'ok' || answer === 'fence_lost' ? undefined : `a compare-and-set answer that is neither ok nor fence_lost (${describeAnswer(answer)})`;
}

/** The refusal of a store's answer, to throw: a `StorageError` with code `corrupt_record` naming the store and the call, reported like any storage failure. */
export function refusal(engine: EngineParts<IdempotencyStore>, prepared: PreparedRequest, stage: StoreOperation, problem: string): OncelyError {
  const error = toStorageError(engine.store.name, stage, corruptRecord(`the store answered ${problem}`));
  engine.report(prepared, { type: 'storage_error', stage, error });
  return error;
}

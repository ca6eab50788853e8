import { describe, expect, it } from 'vitest';
import { OncelyError } from '../../src/index.js';
import { classifyError, classifyStatus, defaultClassify } from '../../src/retry.js';

const now = 0;

describe('classifyStatus', () => {
  it.each([
    [408, 'request_timeout', 'not_applied'],
    [409, 'in_progress', 'maybe_applied'],
    [425, 'too_early', 'not_applied'],
    [429, 'throttled', 'not_applied'],
    [502, 'bad_gateway', 'maybe_applied'],
    [503, 'unavailable', 'maybe_applied'],
    [504, 'gateway_timeout', 'maybe_applied'],
  ])('retries %i (%s, %s)', (status, reason, effect) => {
    expect(classifyStatus(status, null, now)).toEqual({ verdict: 'retry', reason, effect });
  });

  it.each([400, 401, 403, 404, 410, 422])('fails %i for good, blaming the request', (status) => {
    expect(classifyStatus(status, '1', now)).toEqual({ verdict: 'failure', blame: 'request' });
  });

  it.each([500, 501, 505])('fails %i for good, blaming the dependency', (status) => {
    expect(classifyStatus(status, null, now)).toEqual({ verdict: 'failure', blame: 'dependency' });
  });

  it.each([200, 201, 204, 303])('accepts %i', (status) => {
    expect(classifyStatus(status, null, now)).toEqual({ verdict: 'success' });
  });

  it('carries Retry-After on retryable statuses', () => {
    expect(classifyStatus(429, '3', now)).toEqual({ verdict: 'retry', reason: 'throttled', effect: 'not_applied', retryAfterMs: 3_000 });
  });
});

function fetchFailure(code: string): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
}

describe('classifyError', () => {
  it('a reset after sending may have been applied; a refused connection was not', () => {
    expect(classifyError(fetchFailure('ECONNRESET'), now)).toEqual({ verdict: 'retry', reason: 'connection_reset', effect: 'maybe_applied' });
    expect(classifyError(fetchFailure('UND_ERR_SOCKET'), now)).toMatchObject({ effect: 'maybe_applied' });
    expect(classifyError(fetchFailure('ECONNREFUSED'), now)).toEqual({ verdict: 'retry', reason: 'connection_refused', effect: 'not_applied' });
    expect(classifyError(fetchFailure('ENOTFOUND'), now)).toMatchObject({ effect: 'not_applied' });
  });

  it('timeouts are ambiguous: oncely attempt timeouts, TimeoutError and socket timeouts', () => {
    const ambiguous = { verdict: 'retry', reason: 'timeout', effect: 'maybe_applied' };
    expect(classifyError(new OncelyError('attempt_timeout', 'slow'), now)).toEqual(ambiguous);
    expect(classifyError(new DOMException('timed out', 'TimeoutError'), now)).toEqual(ambiguous);
    expect(classifyError(fetchFailure('UND_ERR_HEADERS_TIMEOUT'), now)).toEqual(ambiguous);
  });

  it('errors carrying an HTTP status are classified by it, with Retry-After from their headers', () => {
    const axiosLike = Object.assign(new Error('Request failed'), { response: { status: 503, headers: { 'retry-after': '2' } } });
    expect(classifyError(axiosLike, now)).toEqual({ verdict: 'retry', reason: 'unavailable', effect: 'maybe_applied', retryAfterMs: 2_000 });
    expect(classifyError(Object.assign(new Error('bad'), { statusCode: 422 }), now)).toEqual({ verdict: 'failure', blame: 'request' });
  });

  it('anything unrecognised is a definitive failure, never a guess', () => {
    expect(classifyError(new Error('boom'), now)).toEqual({ verdict: 'failure', blame: 'dependency' });
    expect(classifyError('string thrown', now)).toEqual({ verdict: 'failure', blame: 'dependency' });
    expect(classifyError(new DOMException('aborted', 'AbortError'), now)).toEqual({ verdict: 'failure', blame: 'dependency' });
  });
});

describe('defaultClassify', () => {
  it('classifies a returned Response by status and anything else as success', () => {
    const throttled = new Response(null, { status: 429, headers: { 'retry-after': '1' } });
    expect(defaultClassify({ kind: 'returned', value: throttled }, { now })).toMatchObject({ verdict: 'retry', retryAfterMs: 1_000 });
    expect(defaultClassify({ kind: 'returned', value: new Response('{}', { status: 422 }) }, { now })).toEqual({ verdict: 'failure', blame: 'request' });
    expect(defaultClassify({ kind: 'returned', value: { status: 'ok' } }, { now })).toEqual({ verdict: 'success' });
    expect(defaultClassify({ kind: 'threw', error: fetchFailure('ECONNRESET') }, { now })).toMatchObject({ verdict: 'retry' });
  });
});

import { describe, expect, it } from 'vitest';
import { createTimeline, outcomeOf } from '../src/observability/timeline.js';

describe('the request timeline', () => {
  it('names each answer as the dashboard colours it', () => {
    expect(outcomeOf(201, false)).toBe('executed');
    expect(outcomeOf(402, false)).toBe('executed');
    expect(outcomeOf(201, true)).toBe('replayed');
    expect(outcomeOf(402, true)).toBe('replayed');
    for (const status of [400, 401, 404, 409, 422]) expect(outcomeOf(status, false)).toBe('rejected');
    expect(outcomeOf(503, false)).toBe('failed');
  });

  it('keeps the newest entries, newest first, within its capacity', () => {
    const timeline = createTimeline(3);
    for (let at = 1; at <= 5; at++) {
      timeline.add({ at, method: 'POST', path: '/v1/payments', tenant: 't', key_hash: null, status: 201, outcome: 'executed' });
    }
    expect(timeline.recent(10).map((entry) => entry.at)).toEqual([5, 4, 3]);
    expect(timeline.recent(2).map((entry) => entry.at)).toEqual([5, 4]);
  });
});

import { describe, expect, it } from 'vitest';
import { manualClock, systemClock } from '../src/index.js';

describe('systemClock.sleep', () => {
  it('does not fire at once for delays beyond the 32-bit timer limit', async () => {
    const controller = new AbortController();
    let settled = 'pending';
    const sleeping = systemClock.sleep(2 ** 31 + 10, controller.signal).then(
      () => (settled = 'resolved'),
      () => (settled = 'aborted'),
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(settled).toBe('pending');
    controller.abort();
    await sleeping;
    expect(settled).toBe('aborted');
  });

  it('rejects at once with the reason when the signal is already aborted', async () => {
    const reason = new Error('cancelled');
    await expect(systemClock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});

describe('manualClock', () => {
  it('wakes sleepers in deadline order as time passes them', async () => {
    const clock = manualClock(0);
    const woke: string[] = [];
    void clock.sleep(30).then(() => woke.push(`b@${clock.now()}`));
    void clock.sleep(10).then(() => woke.push(`a@${clock.now()}`));
    await clock.advance(20);
    expect(woke).toEqual(['a@10']);
    await clock.advance(20);
    expect(woke).toEqual(['a@10', 'b@30']);
    expect(clock.now()).toBe(40);
    expect(clock.pending).toBe(0);
  });
});

describe('schedule', () => {
  it('systemClock runs the callback once after the delay, and never once cancelled', async () => {
    const fired: string[] = [];
    systemClock.schedule!(5, () => fired.push('kept'));
    const cancel = systemClock.schedule!(5, () => fired.push('cancelled'));
    cancel();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fired).toEqual(['kept']);
  });

  it('manualClock runs scheduled callbacks as time passes them, in deadline order', async () => {
    const clock = manualClock(0);
    const fired: string[] = [];
    clock.schedule(20, () => fired.push('late'));
    clock.schedule(10, () => fired.push('early'));
    const cancel = clock.schedule(15, () => fired.push('cancelled'));
    cancel();
    await clock.advance(25);
    expect(fired).toEqual(['early', 'late']);
  });
});

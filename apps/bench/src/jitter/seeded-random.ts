/** A deterministic source of randomness: the same seed gives the same sequence. */
export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [low, high). */
  uniform(low: number, high: number): number;
  /** Normally distributed (Box-Muller), mean and standard deviation as given. */
  normal(mean: number, sd: number): number;
}

/** mulberry32: 32 bits of state, fast, and good enough for a simulation (not for cryptography). */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    uniform: (low, high) => low + (high - low) * next(),
    normal(mean, sd) {
      // 1 - next() lies in (0, 1], so the logarithm is finite.
      const radius = Math.sqrt(-2 * Math.log(1 - next()));
      return mean + sd * radius * Math.cos(2 * Math.PI * next());
    },
  };
}

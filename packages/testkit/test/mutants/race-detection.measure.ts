import { expect, it } from 'vitest';
import { corpus, run } from './corpus.js';

/** The clauses whose tests race: a non-atomic store fails them in some fraction of rounds. */
const RACES = ['store.claim.atomic', 'store.claim.takeover-atomic', 'store.complete.race', 'store.release.race', 'store.extend.race', 'store.cas.atomic', 'store.engine.once'];
const RUNS = Number(process.env.ONCELY_RACE_RUNS ?? 100);

// Not a test: `npm run measure:races` prints, for each race mutant, how often one round of each race catches it.
it('measures the per-round detection rate of every race mutant on the memory store', async () => {
  const rows: Record<string, string>[] = [];
  for (const [bug, clause] of corpus.filter(([, clause]) => RACES.includes(clause))) {
    const caught = new Map<string, number>();
    for (let n = 0; n < RUNS; n++) {
      for (const test of await run(expect, bug, { clauses: RACES, raceRounds: 1, raceSize: 50 })) {
        const race = test.clauses.find((c) => RACES.includes(c))!;
        if (test.error && test.broken.includes(race)) caught.set(race, (caught.get(race) ?? 0) + 1);
      }
    }
    rows.push({ bug, clause, ...Object.fromEntries(RACES.map((race) => [race, `${caught.get(race) ?? 0}/${RUNS}`])) });
  }
  console.table(rows);
}, 3_600_000);

import { scriptSet } from '../lua/script-set.js';
import attempt from './scripts/attempt.lua';
import begin from './scripts/begin.lua';
import complete from './scripts/complete.lua';
import forget from './scripts/forget.lua';
import settled from './scripts/settled.lua';
import unknown from './scripts/unknown.lua';
import unresolved from './scripts/unresolved.lua';

/** The journal's scripts, each with the number of keys it declares. */
export const journalScripts = scriptSet('oncely_journal_', {
  begin: { lua: begin, keys: 2 },
  attempt: { lua: attempt, keys: 3 },
  complete: { lua: complete, keys: 4 },
  unknown: { lua: unknown, keys: 3 },
  unresolved: { lua: unresolved, keys: 2 },
  settled: { lua: settled, keys: 1 },
  forget: { lua: forget, keys: 2 },
});

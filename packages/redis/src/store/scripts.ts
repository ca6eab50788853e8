import { scriptSet } from '../lua/script-set.js';
import claim from './scripts/claim.lua';
import complete from './scripts/complete.lua';
import extend from './scripts/extend.lua';
import get from './scripts/get.lua';
import release from './scripts/release.lua';

/** The store's scripts: each names its one record key. */
export const storeScripts = scriptSet('oncely_', {
  claim: { lua: claim, keys: 1 },
  complete: { lua: complete, keys: 1 },
  extend: { lua: extend, keys: 1 },
  get: { lua: get, keys: 1 },
  release: { lua: release, keys: 1 },
});

/** The store's script names. */
export type ScriptName = Parameters<typeof storeScripts.call>[1];

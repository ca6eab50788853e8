import { scriptSet } from '../lua/script-set.js';
import claim from './scripts/claim.lua';
import complete from './scripts/complete.lua';
import extend from './scripts/extend.lua';
import get from './scripts/get.lua';
import record from './scripts/record.lua';
import release from './scripts/release.lua';

/** Every script starts with the shared record helpers (`record.lua`). */
const withRecord = (lua: string) => ({ lua: `${record}\n${lua}`, keys: 1 });

/** The store's scripts: each names its one record key. */
export const storeScripts = scriptSet('oncely_', {
  claim: withRecord(claim),
  complete: withRecord(complete),
  extend: withRecord(extend),
  get: withRecord(get),
  release: withRecord(release),
});

/** The store's script names. */
export type ScriptName = Parameters<typeof storeScripts.call>[1];

import { scriptSet } from '../lua/script-set.js';
import append from './scripts/append.lua';

/** The Streams publisher's script: a batch's entries for one stream, its one key. */
export const streamScripts = scriptSet('oncely_streams_', {
  append: { lua: append, keys: 1 },
});

// A process of its own that claims keys on a shared database file: run as
// `node --import tsx claimer.ts <filename> <key prefix> <keys>`. It says `ready` once its store is
// open, claims every key when it reads `go` on stdin, and prints the keys it won as JSON.
import { createInterface } from 'node:readline';
import { sqliteStore } from '../../src/index.js';

const [filename = '', prefix = '', count = '0'] = process.argv.slice(2);
const store = sqliteStore({ filename });
const keys = Array.from({ length: Number(count) }, (_, index) => `${prefix}-${index}`);
const input = createInterface({ input: process.stdin });

console.log('ready');
for await (const line of input) {
  if (line !== 'go') continue;
  const won: string[] = [];
  for (const key of keys) {
    const scope = { tenant: 'acme', principal: 'alice', operation: 'payments.create.v1', key };
    const claim = await store.claim({ scope, token: `${process.pid}-${key}`, fingerprint: 'f'.repeat(64), leaseMs: 60_000, retentionMs: 60_000 });
    if (claim.kind === 'claimed') won.push(key);
  }
  console.log(JSON.stringify(won));
  break;
}
input.close();
await store.close();

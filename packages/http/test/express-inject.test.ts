import { createIdempotency, memoryStore } from '@oncely/core';
import express from 'express';
import inject from 'light-my-request';
import { describe, expect, it } from 'vitest';
import { expressIdempotency } from '../src/express.js';

// A file of its own: light-my-request re-parents Express's shared response prototype for good, which real sockets then trip over.
describe('express capture under light-my-request', () => {
  it('holds and replays through light-my-request, which re-parents the response prototype of the app on every inject', async () => {
    let runs = 0;
    const app = express();
    app.post('/report', express.json(), expressIdempotency({ engine: createIdempotency({ store: memoryStore() }), operation: 'report.v1', scope: () => ({ tenant: 't' }) }), (_req, res) => {
      runs++;
      res.status(201).json({ id: `r_${runs}` });
    });
    const post = (key: string) => inject(app, { method: 'POST', url: '/report', headers: { 'content-type': 'application/json', 'idempotency-key': `"${key}"` }, payload: '{}' });
    const answers = [await post('a'), await post('a'), await post('b'), await post('b')];
    expect(answers.map((answer) => [answer.statusCode, answer.headers['idempotent-replayed'], answer.payload])).toEqual([
      [201, undefined, '{"id":"r_1"}'],
      [201, 'true', '{"id":"r_1"}'],
      [201, undefined, '{"id":"r_2"}'],
      [201, 'true', '{"id":"r_2"}'],
    ]);
  });

});

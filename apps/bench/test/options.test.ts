import { describe, expect, it } from 'vitest';
import { HTTP_ROUTES, parseOptions } from '../src/cli/options.js';

describe('bench options', () => {
  it('measures every HTTP route unless --routes picks some, kept in the tables’ order', () => {
    expect(parseOptions([]).httpRoutes).toEqual(HTTP_ROUTES);
    expect(parseOptions(['--only=http-fastify', '--routes=memory,floor-memory']).httpRoutes).toEqual(['floor-memory', 'memory']);
    expect(parseOptions(['--routes=redis']).suites).toHaveLength(parseOptions([]).suites.length);
  });

  it('refuses a route or an argument it does not know', () => {
    expect(() => parseOptions(['--routes=memory,mongo'])).toThrow('bench: unknown route "mongo"');
    expect(() => parseOptions(['--route=memory'])).toThrow('bench: unknown arguments --route=memory');
  });
});

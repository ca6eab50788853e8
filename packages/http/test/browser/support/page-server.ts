import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, type TestServer } from '../../support/listen.js';

/** Files a test page is made of, by path. */
export type PageAssets = Readonly<Record<string, { readonly type: string; readonly body: string }>>;

/** The test page: an empty document that loads the bundle as a module. */
export function pageAssets(script: string): PageAssets {
  return {
    '/': {
      type: 'text/html; charset=utf-8',
      body: '<!doctype html><meta charset="utf-8"><title>oncely</title><script type="module" src="/page.js"></script>',
    },
    '/page.js': { type: 'text/javascript; charset=utf-8', body: script },
  };
}

/** Answers a GET for one of `assets`; false when the request is for something else. */
export function serveAsset(assets: PageAssets, request: IncomingMessage, response: ServerResponse): boolean {
  const asset = request.method === 'GET' ? assets[new URL(request.url ?? '/', 'http://page').pathname] : undefined;
  if (!asset) return false;
  response.writeHead(200, { 'content-type': asset.type, 'cache-control': 'no-store' });
  response.end(asset.body);
  return true;
}

/** Serves only the page, on a loopback port: an origin of its own for IndexedDB and localStorage. */
export function servePage(assets: PageAssets): Promise<TestServer> {
  return listen(
    createServer((request, response) => {
      if (serveAsset(assets, request, response)) return;
      response.writeHead(404).end();
    }),
  );
}

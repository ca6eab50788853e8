/**
 * Response headers stored and replayed by default. Everything else (set-cookie, trace ids, dates) is
 * never stored; content-length is recomputed. content-encoding travels with the bytes it describes.
 */
export const DEFAULT_REPLAYED_HEADERS: readonly string[] = [
  'content-type',
  'content-encoding',
  'content-language',
  'content-location',
  'location',
  'link',
  'etag',
  'last-modified',
  'cache-control',
];

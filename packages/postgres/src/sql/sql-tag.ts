import type { QuotedIdentifier } from '../identifiers/identifier.js';

declare const fragment: unique symbol;

/** SQL text assembled only from literals, quoted identifiers and other fragments. */
export type Fragment = string & { readonly [fragment]: true };

/** A template tag that admits validated identifiers and fragments, never values: values are `$n` parameters. */
export const sql = (strings: TemplateStringsArray, ...parts: (QuotedIdentifier | Fragment)[]): Fragment =>
  strings.reduce((text, literal, index) => text + literal + (parts[index] ?? ''), '') as Fragment;

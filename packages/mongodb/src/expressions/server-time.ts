// The aggregation expressions every query module builds on: time is `$$NOW` (the server's clock,
// never the client's), and caller values go through `$literal` so none is read as an operator.

/** The server's clock at the command. */
export const NOW = '$$NOW';

/** `value` as a literal: a caller's string starting with `$` stays a string. */
export const literal = (value: unknown) => ({ $literal: value });

/** `ms` after the server's now. */
export const fromNow = (ms: number) => ({ $add: [NOW, literal(ms)] });

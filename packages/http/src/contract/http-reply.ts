/** Response headers as the bindings report them; a multi-valued header (set-cookie) is an array. */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[]>>;

/** A complete response the binding writes as it is: a problem, a replay or a lookup answer. */
export interface HttpReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
}

const encoder = new TextEncoder();

/** A JSON reply; `headers` may override the content type (problem+json). */
export function jsonReply(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): HttpReply {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: encoder.encode(JSON.stringify(value)),
  };
}

/**
 * A conservative test that JSON text is exactly what `JSON.stringify(JSON.parse(text))` writes, without
 * parsing it. `true` is a promise; `false` only means "not known", and the caller parses and compares.
 * Accepted: no whitespace; strings of characters `JSON.stringify` writes as they are (no escapes, no
 * control characters, no surrogates); integers of at most 15 digits (exact in a double, written back
 * digit for digit), never `-0`; `true`, `false`, `null`; objects whose member names are distinct and
 * do not start with a digit (V8 puts integer-like names first); nesting up to {@link MAX_DEPTH}.
 */
export function isStringifyForm(text: string): boolean {
  const scan = new Scan(text);
  return scan.value(0) && scan.at === text.length;
}

const MAX_DEPTH = 32;
const MAX_INTEGER_DIGITS = 15;
/** Past this many members, telling duplicate names apart by a list scan costs more than parsing. */
const MAX_MEMBERS = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** One left-to-right pass; every method returns false as soon as the text leaves the accepted form. */
class Scan {
  at = 0;
  constructor(readonly text: string) {}

  value(depth: number): boolean {
    const code = this.text.charCodeAt(this.at);
    switch (code) {
      case 0x7b:
        return depth < MAX_DEPTH && this.object(depth + 1);
      case 0x5b:
        return depth < MAX_DEPTH && this.array(depth + 1);
      case QUOTE:
        return this.string() !== undefined;
      case 0x74:
        return this.word('true');
      case 0x66:
        return this.word('false');
      case 0x6e:
        return this.word('null');
      default:
        return this.integer();
    }
  }

  word(word: string): boolean {
    if (!this.text.startsWith(word, this.at)) return false;
    this.at += word.length;
    return true;
  }

  integer(): boolean {
    const { text } = this;
    let at = this.at;
    if (text.charCodeAt(at) === MINUS) at++;
    const first = at;
    while (at < text.length) {
      const code = text.charCodeAt(at);
      if (code < ZERO || code > NINE) break;
      at++;
    }
    const digits = at - first;
    if (digits === 0 || digits > MAX_INTEGER_DIGITS) return false;
    // A leading zero is only `0` itself; `-0` parses to -0, which stringify writes as `0`.
    if (text.charCodeAt(first) === ZERO && (digits > 1 || first > this.at)) return false;
    // A fraction or exponent: stringify may write the number differently.
    const next = text.charCodeAt(at);
    if (next === 0x2e || next === 0x65 || next === 0x45) return false;
    this.at = at;
    return true;
  }

  /** The string's contents, or undefined when it has anything stringify would write otherwise. */
  string(): string | undefined {
    const { text } = this;
    const start = ++this.at;
    for (let at = start; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code === QUOTE) {
        this.at = at + 1;
        return text.slice(start, at);
      }
      if (code < 0x20 || code === BACKSLASH || (code >= 0xd800 && code <= 0xdfff)) return undefined;
    }
    return undefined;
  }

  array(depth: number): boolean {
    const { text } = this;
    this.at++;
    if (text.charCodeAt(this.at) === 0x5d) {
      this.at++;
      return true;
    }
    for (;;) {
      if (!this.value(depth)) return false;
      const code = text.charCodeAt(this.at++);
      if (code === 0x5d) return true;
      if (code !== COMMA) return false;
    }
  }

  object(depth: number): boolean {
    const { text } = this;
    this.at++;
    if (text.charCodeAt(this.at) === 0x7d) {
      this.at++;
      return true;
    }
    const names: string[] = [];
    for (;;) {
      if (text.charCodeAt(this.at) !== QUOTE) return false;
      const name = this.string();
      if (name === undefined || names.length === MAX_MEMBERS || names.includes(name)) return false;
      const first = name.charCodeAt(0);
      if (first >= ZERO && first <= NINE) return false;
      names.push(name);
      if (text.charCodeAt(this.at++) !== COLON || !this.value(depth)) return false;
      const code = text.charCodeAt(this.at++);
      if (code === 0x7d) return true;
      if (code !== COMMA) return false;
    }
  }
}

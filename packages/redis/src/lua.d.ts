/** A `.lua` file imported as its source text (tsup and Vitest load it as text). */
declare module '*.lua' {
  const source: string;
  export default source;
}

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Collects Markdown sections, prints each as it is added, and writes them to one file. */
export interface Report {
  /** Adds a section (a `##` heading, then `body`) and prints it. */
  section(title: string, body: string): void;
  /** Writes everything to `<dir>/<name>` and returns the path. */
  write(dir: string, name: string): Promise<string>;
}

/** Creates a {@link Report} whose file starts with `header`. */
export function createReport(header: string, print: (text: string) => void = console.log): Report {
  const parts = [header];
  print(header);
  return {
    section(title, body) {
      const text = `## ${title}\n\n${body.trim()}\n`;
      parts.push(text);
      print(text);
    },
    async write(dir, name) {
      await mkdir(dir, { recursive: true });
      const path = join(dir, name);
      await writeFile(path, `${parts.join('\n')}`);
      return path;
    },
  };
}

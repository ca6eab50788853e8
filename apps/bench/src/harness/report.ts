import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Collects Markdown sections, prints each as it is added, and writes them to one file. */
export interface Report {
  /** Adds a section (a `##` heading, then `body`) and prints it. */
  section(title: string, body: string): void;
  /** Adds a file written next to the report (a plot), linked from it by `name`. */
  attach(name: string, content: string): void;
  /** Writes the report to `<dir>/<name>` and every attachment next to it; returns the report's path. */
  write(dir: string, name: string): Promise<string>;
}

/** Creates a {@link Report} whose file starts with `header`. */
export function createReport(header: string, print: (text: string) => void = console.log): Report {
  const parts = [header];
  const attachments = new Map<string, string>();
  print(header);
  return {
    section(title, body) {
      const text = `## ${title}\n\n${body.trim()}\n`;
      parts.push(text);
      print(text);
    },
    attach(name, content) {
      attachments.set(name, content);
    },
    async write(dir, name) {
      await mkdir(dir, { recursive: true });
      for (const [file, content] of attachments) await writeFile(join(dir, file), content);
      const path = join(dir, name);
      await writeFile(path, `${parts.join('\n')}`);
      return path;
    },
  };
}

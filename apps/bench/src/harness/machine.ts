import { cpus, release, totalmem } from 'node:os';

/** Versions of the servers and runtimes a run used. */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly redis?: string;
  readonly postgres?: string;
  readonly pglite?: string;
}

/** What this process can tell about the machine without asking any server. */
export function localMachine(): Pick<MachineInfo, 'cpu' | 'cores' | 'memoryGiB' | 'os' | 'node'> {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${process.platform} ${release()}`,
    node: process.version,
  };
}

/** Renders the machine as a Markdown list. */
export function describeMachine(info: MachineInfo): string {
  return [
    `- CPU: ${info.cpu}, ${info.cores} cores`,
    `- RAM: ${info.memoryGiB} GiB`,
    `- OS: ${info.os}`,
    `- Node.js: ${info.node}`,
    `- Redis: ${info.redis ?? 'not used'}`,
    `- PostgreSQL: ${info.postgres ?? 'not used'}`,
    `- PGlite: ${info.pglite ?? 'not used'}`,
  ].join('\n');
}

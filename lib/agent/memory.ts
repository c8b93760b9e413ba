/**
 * Run-local memory per domain: short lines of what worked and what failed there, offered to later
 * steps (and, through the state handed to the next sample, to later samples of the same run).
 */
import type { DomainMemory } from './state.ts';

export const MEMORY_PER_KIND = 8;

export function domainOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** Adds a line (newest kept, no duplicates, at most MEMORY_PER_KIND per kind). Pure. */
export function remember(memory: DomainMemory, url: string, line: string, ok: boolean): DomainMemory {
  const domain = domainOf(url);
  if (!domain) return memory;
  const entry = memory[domain] ?? { worked: [], failed: [] };
  const kind = ok ? 'worked' : 'failed';
  const list = [...entry[kind].filter((l) => l !== line), line].slice(-MEMORY_PER_KIND);
  return { ...memory, [domain]: { ...entry, [kind]: list } };
}

export function hintsFor(memory: DomainMemory, url: string): string[] {
  const entry = memory[domainOf(url)];
  if (!entry) return [];
  return [...entry.worked.map((l) => `worked: ${l}`), ...entry.failed.map((l) => `failed: ${l}`)];
}

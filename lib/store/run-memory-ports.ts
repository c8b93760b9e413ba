/**
 * The run memory port: what samples of one run learned about a site (a domain), kept for the later
 * samples of the same run. Scoped by tenant and run: no run reads another's lines. Append-only: each
 * sample writes its own item once (keyed by sample id), so samples ending at the same moment never
 * overwrite each other, and a retried sample end writes nothing twice.
 */

import type { Json } from './ports.ts';

export type MemoryKind = 'worked' | 'failed';

export interface RunMemoryLine {
  /** Host the line is about (`shop.example.com`, `127.0.0.1:4100`). */
  domain: string;
  kind: MemoryKind;
  /** One short line, no element ids, no secret values. */
  text: string;
}

export interface RunMemoryEntry {
  sampleId: string;
  lines: RunMemoryLine[];
  /**
   * A scenario sample's learning per domain (lib/scenarios/domain-memory.ts): app facts and the
   * blocker clearings it found, replayed by later samples with zero tokens. Opaque to the stores;
   * bounded by its writer (a few short lines and locators per domain).
   */
  scenario?: Record<string, { experiences: string[]; clearings: Json[] }>;
  /** How the lines were made: from the action log alone (zero tokens) or by one small model call. */
  source: 'log' | 'model';
  writtenAt: string;
}

export interface RunMemoryStore {
  /** Stores a sample's lines; false (nothing written) when that sample's entry exists already. */
  append(tenant: string, runId: string, entry: RunMemoryEntry): Promise<boolean>;
  /** Every entry of the run, oldest first. */
  list(tenant: string, runId: string): Promise<RunMemoryEntry[]>;
}

/** Lines an entry keeps, and characters per line: memory is hints, not a log. */
export const MEMORY_LINES_PER_SAMPLE = 6;
export const MEMORY_LINE_CHARS = 200;

/** The entry cut to the limits above (pure). */
export function boundedEntry(entry: RunMemoryEntry): RunMemoryEntry {
  return {
    ...entry,
    lines: entry.lines
      .filter((l) => l.domain && l.text.trim())
      .slice(0, MEMORY_LINES_PER_SAMPLE)
      .map((l) => ({ ...l, text: l.text.trim().slice(0, MEMORY_LINE_CHARS) })),
  };
}

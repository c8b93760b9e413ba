/**
 * Scenario memory across the samples of a run: what one sample learned per domain (experiences,
 * blocker clearings) travels in the run's memory store (lib/store/run-memory-ports.ts) as its
 * entry's `scenario` part, and a later sample starts from everything earlier samples wrote. Pure
 * functions; the store calls are in lib/runs/scenario-slice-binding.ts. Entries are read back
 * through a schema: a store is data, and a malformed part is dropped, never replayed.
 */
import { z } from 'zod';
import type { RunMemoryEntry } from '../store/run-memory-ports.ts';
import type { ClearingRecipe } from './blockers.ts';
import { addClearing, addExperiences, type ScenarioMemory } from './memory.ts';

const Locator = z.object({ xpath: z.string().min(1).max(2000), role: z.string(), name: z.string() });
const Recipe = z.object({
  description: z.string().max(200),
  commands: z
    .array(
      z.object({
        action: z.enum(['click', 'press']),
        locator: Locator,
        value: z.string().max(100).optional(),
      }),
    )
    .min(1)
    .max(5),
});

/** A domain stands for its pages: `addExperiences` / `addClearing` take a URL, so make one of it. */
const urlOf = (domain: string) => `http://${domain}/`;

/** Everything the run's earlier samples learned, oldest first (later entries win the bounds). Pure. */
export function scenarioMemoryOf(entries: readonly RunMemoryEntry[]): ScenarioMemory {
  let memory: ScenarioMemory = {};
  for (const entry of entries)
    for (const [domain, part] of Object.entries(entry.scenario ?? {})) {
      const url = urlOf(domain);
      const lines = Array.isArray(part?.experiences)
        ? part.experiences.filter((e): e is string => typeof e === 'string')
        : [];
      memory = addExperiences(memory, url, lines);
      for (const raw of Array.isArray(part?.clearings) ? part.clearings : []) {
        const recipe = Recipe.safeParse(raw);
        if (recipe.success) memory = addClearing(memory, url, recipe.data as ClearingRecipe);
      }
    }
  return memory;
}

/** What `after` holds that `before` did not: the part a sample writes for the samples after it. Pure. */
export function learnedSince(before: ScenarioMemory, after: ScenarioMemory): ScenarioMemory {
  const out: ScenarioMemory = {};
  for (const [domain, entry] of Object.entries(after)) {
    const had = before[domain];
    const key = (r: ClearingRecipe) => JSON.stringify(r.commands.map((c) => c.locator.xpath));
    const known = new Set((had?.clearings ?? []).map(key));
    const experiences = entry.experiences.filter((e) => !had?.experiences.includes(e));
    const clearings = entry.clearings.filter((c) => !known.has(key(c)));
    if (experiences.length || clearings.length) out[domain] = { experiences, clearings };
  }
  return out;
}

/** The run-memory entry that carries a sample's learning; undefined when it learned nothing. Pure. */
export function scenarioEntry(
  sampleId: string,
  learned: ScenarioMemory,
  writtenAt: string,
): RunMemoryEntry | undefined {
  if (Object.keys(learned).length === 0) return undefined;
  return {
    sampleId,
    lines: [],
    source: 'log',
    writtenAt,
    scenario: learned as unknown as NonNullable<RunMemoryEntry['scenario']>,
  };
}

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** DESIGN.md: inside lib/, an import only points to a stage above it in this list, never back up. */
const STAGES = [
  'browser',
  'perception',
  'actions',
  'llm',
  'store',
  'ops',
  'agent',
  'judge',
  'workflows',
  'scenarios',
  'runs',
  'api',
  'cli',
];
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function files(dir: string): string[] {
  // A stage that has no code yet (judge/) has no imports to check.
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('lib/ layout', () => {
  it('has one folder per stage and imports that only point to earlier stages', () => {
    const wrong: string[] = [];
    for (const stage of STAGES) {
      for (const file of files(join(root, 'lib', stage))) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/(?:from |import\()'(\.{1,2}\/[^']+)'/g)) {
          const target = relative(join(root, 'lib'), normalize(join(dirname(file), m[1]!))).split('/')[0]!;
          if (STAGES.indexOf(target) > STAGES.indexOf(stage)) wrong.push(`${relative(root, file)} → ${m[1]}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

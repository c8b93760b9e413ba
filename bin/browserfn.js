#!/usr/bin/env node
// Runs the built CLI (dist/, which `npm install` builds through the `prepare` script) when it is at
// least as new as every source file under lib/; otherwise the TypeScript sources through tsx, so an
// edited or pulled source is never run stale. tsx compiles at start: about as much CPU again as the
// CLI itself, which every invocation (and every CLI-driven test) would pay.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = `${root}dist/lib/cli/main.js`;

/** Is dist/ built from the sources as they are now? (~3 ms: one stat per source file.) */
function builtIsCurrent() {
  let builtAt;
  try {
    builtAt = statSync(built).mtimeMs;
  } catch {
    return false;
  }
  // lib/ and infra/ (the state machine's definition): what the build compiles.
  for (const dir of ['lib', 'infra'])
    for (const entry of readdirSync(`${root}${dir}`, { recursive: true, withFileTypes: true })) {
      const path = `${entry.parentPath ?? entry.path}/${entry.name}`;
      if (entry.isFile() && entry.name.endsWith('.ts') && statSync(path).mtimeMs > builtAt) return false;
    }
  return true;
}

if (process.env.BROWSERFN_FROM_SOURCE !== '1' && builtIsCurrent()) {
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../lib/cli/main.ts');
}

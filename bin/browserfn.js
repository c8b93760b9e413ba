#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step): tsx registers its loader, then the CLI loads.
import { register } from 'tsx/esm/api';

register();
await import('../lib/cli/main.ts');

#!/usr/bin/env node
// The CLI is TypeScript run as-is: tsx's ESM loader is registered for this process only, on the
// Node that started it (through npx or npm run: the pinned Node 24 of the project).
import { register } from 'tsx/esm/api';

register();
await import('../main.ts');

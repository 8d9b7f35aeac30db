#!/usr/bin/env node
// The bin entry stays plain JavaScript so `npx herald` runs the TypeScript sources without a build step.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');

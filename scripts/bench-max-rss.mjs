// Preloaded (`node --import`) into the processes scripts/bench-startup.ts measures: writes the
// process's peak resident set size, in KiB, to the file HERALD_BENCH_RSS_FILE names when it exits.
import { writeFileSync } from 'node:fs';

const file = process.env.HERALD_BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));

// Preloaded (`node --import`) into the processes scripts/bench-startup.ts measures: when the process
// exits, writes its peak resident set size (KiB) and the CPU time it used (microseconds, user +
// system) to the file HERALD_BENCH_USAGE_FILE names.
import { writeFileSync } from 'node:fs';

const file = process.env.HERALD_BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ maxRssKiB: usage.maxRSS, cpuMicros: usage.userCPUTime + usage.systemCPUTime }));
  });
}

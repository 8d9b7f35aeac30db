import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/cli/wiring/configuration.js';
import { WEBHOOK_LIMITS, retryDelayMs } from '../../src/domain/webhooks/settings.js';

const DEFAULT_WEBHOOK_SETTINGS = { ...WEBHOOK_LIMITS, ...readEnvironment({}).webhooks };

describe('the webhook retry schedule', () => {
  const waits = (random: () => number) =>
    Array.from({ length: DEFAULT_WEBHOOK_SETTINGS.maxAttempts - 1 }, (_, i) => retryDelayMs(DEFAULT_WEBHOOK_SETTINGS, i + 1, random));

  it('waits 10 s, 50 s, 4 min, 21 min, 1.7 h, 8.7 h and 12 h between the 8 attempts: about 23 hours in all', () => {
    const seconds = waits(() => 0.5).map((ms) => ms / 1000);
    expect(seconds).toEqual([10, 50, 250, 1250, 6250, 31250, 43200]);
    expect(seconds.reduce((a, b) => a + b, 0) / 3600).toBeCloseTo(22.85, 2);
  });

  it('spreads each wait within ±10 %', () => {
    const low = waits(() => 0);
    const high = waits(() => 1);
    const middle = waits(() => 0.5);
    middle.forEach((ms, i) => {
      expect(low[i]).toBe(Math.round(ms * 0.9));
      expect(high[i]).toBe(Math.round(ms * 1.1));
    });
  });
});

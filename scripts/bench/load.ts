/** One measured run of autocannon against a server on 127.0.0.1, reduced to what the table shows. */
import autocannon from 'autocannon';

export interface LoadRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** The path of each request in turn (it cycles); one path for all when there is one. */
  paths: readonly string[];
  body?: string;
}

export interface RunResult {
  requestsPerSecond: number;
  /** Latency percentiles in milliseconds, to the fraction. */
  p50: number;
  p99: number;
  requests: number;
}

/** Drives `request` at `connections` for `seconds`. Any answer other than 2xx fails the run: a fast error is not a result. */
export async function runLoad(url: string, key: string, request: LoadRequest, connections: number, limit: { seconds: number }): Promise<RunResult> {
  let next = 0;
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  // Timed here: autocannon reports whole seconds.
  const start = performance.now();
  // Latencies kept as measured: autocannon's own percentiles are whole milliseconds, and at 2 to 6 ms
  // one millisecond moves a p99 ratio by a fifth or more.
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: limit.seconds,
        timeout: 10,
        requests: [
          {
            method: request.method,
            headers,
            ...(request.body === undefined ? {} : { body: request.body }),
            setupRequest: (req) => ({ ...req, path: request.paths[next++ % request.paths.length] }),
          },
        ],
      },
      (err, done) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(done)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  const seconds = (performance.now() - start) / 1000;
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) {
    throw new Error(
      `${request.method} ${request.paths[0]}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts (${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  return {
    requestsPerSecond: result.requests.total / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    requests: result.requests.total,
  };
}

/** The nearest-rank percentile of `values` (in any order); `p` from 0 to 1. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

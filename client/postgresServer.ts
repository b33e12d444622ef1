import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from 'pg';
import { isExecutableFile } from '../core/io/files';
import { freePort } from './temporalServer';

/**
 * A throwaway local PostgreSQL server, for the tests (one per test file) and `judgeflow bench`: Debian's `postgresql` package (installed with apt-get when missing and we
 * are root, the way Chromium is provisioned), a fresh cluster made by initdb in a temporary directory, listening on a free
 * loopback port with password (SCRAM) authentication, stopped and removed afterwards. Tests run as root and PostgreSQL
 * refuses to, so as root the cluster belongs to the `postgres` system user the package creates.
 *
 * The cluster's default collation is ICU en-US (not byte order), so a query that forgets the store's COLLATE "C" orders
 * rows differently from SQLite and the contract suite notices.
 */

const PACKAGE = 'postgresql';
const USER = 'judgeflow';
const PASSWORD = 'jf-s3cret:pw'; // a ':' to prove URL encoding works; never printed by the store

export interface PostgresServer {
  /** Seconds from start to accepting connections (initdb included). */
  startSeconds: number;
  /** A connection URL for `database` (with the password). */
  url(database: string): string;
  password: string;
  /** A new, empty database; returns its URL. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** Stop the server (fast shutdown: sessions are cut) but keep its cluster, to start it again on the same port (outage tests). */
  pause(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** The directory holding initdb, pg_ctl and postgres: PATH first, then Debian's /usr/lib/postgresql/<version>/bin, newest first. */
export function findPostgresBin(): string | null {
  const debian = fs.existsSync('/usr/lib/postgresql')
    ? fs
        .readdirSync('/usr/lib/postgresql')
        .sort((a, b) => Number(b) - Number(a))
        .map((v) => path.join('/usr/lib/postgresql', v, 'bin'))
    : [];
  const candidates = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...debian];
  return (
    candidates.find((dir) => ['initdb', 'pg_ctl', 'postgres'].every((b) => isExecutableFile(path.join(dir, b)))) ?? null
  );
}

/** Why the PostgreSQL tests cannot run here, or null when they can (binaries present, or installable as root). */
export function postgresUnavailable(): string | null {
  const root = process.getuid?.() === 0;
  if (findPostgresBin())
    return root && !systemUser('postgres')
      ? 'running as root, and there is no "postgres" system user to run the server as'
      : null;
  if (!root)
    return `PostgreSQL server binaries not found (PATH, /usr/lib/postgresql/*/bin) and not root to install them: apt-get install -y ${PACKAGE}`;
  if (!isExecutableFile('/usr/bin/apt-get'))
    return 'PostgreSQL server binaries not found and there is no apt-get to install them';
  return null;
}

export async function startPostgres(log: (line: string) => void = () => undefined): Promise<PostgresServer> {
  const started = Date.now();
  const bin = findPostgresBin() ?? (await installPostgres(log));
  const owner = process.getuid?.() === 0 ? systemUser('postgres') : null;
  if (process.getuid?.() === 0 && !owner)
    throw new Error('PostgreSQL refuses to run as root and there is no "postgres" system user');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jf-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  fs.writeFileSync(pwfile, PASSWORD, { mode: 0o600 });
  if (owner) for (const p of [dir, pwfile]) fs.chownSync(p, owner.uid, owner.gid);
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const run = (tool: string, args: string[]) => exec(path.join(bin, tool), args, { ...as, cwd: dir });

  const major = Number(/(\d+)/.exec(await run('postgres', ['--version']))?.[1] ?? 0);
  const collation = major >= 15 ? ['--locale-provider=icu', '--icu-locale=en-US', '--locale=C.UTF-8'] : [];
  await run('initdb', [
    '-D',
    data,
    '-U',
    USER,
    `--pwfile=${pwfile}`,
    '--auth-host=scram-sha-256',
    '--auth-local=trust',
    '-E',
    'UTF8',
    ...collation,
    '--no-sync',
  ]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  await run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']).catch(
    (error: Error) => {
      const serverLog = fs.existsSync(path.join(dir, 'server.log'))
        ? fs.readFileSync(path.join(dir, 'server.log'), 'utf8').slice(-2000)
        : '';
      throw new Error(`${error.message}\n${serverLog}`);
    },
  );
  // If the test process dies without stopping it, the server must not outlive it.
  const serverPid = () => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let pid = serverPid();
  const killOnExit = () => {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // already gone
    }
  };
  process.on('exit', killOnExit);

  const url = (database: string) => `postgres://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${database}`;
  const admin = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
    // Loaded here, not at the top: jest's global setup imports this file, and must not need the driver to provision.
    const { Client: PgClient } = require('pg') as typeof import('pg');
    const client: Client = new PgClient({ connectionString: url('postgres') });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  let databases = 0;
  return {
    startSeconds: (Date.now() - started) / 1000,
    url,
    password: PASSWORD,
    async createDatabase(name = `jf_test_${++databases}`) {
      await admin((c) => c.query(`CREATE DATABASE "${name}"${major >= 15 ? ' STRATEGY FILE_COPY' : ''}`));
      return url(name);
    },
    async dropDatabase(name) {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}"${major >= 13 ? ' WITH (FORCE)' : ''}`));
    },
    async pause() {
      await run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    async resume() {
      await run('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
      pid = serverPid();
    },
    async stop() {
      process.off('exit', killOnExit);
      await run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']).catch(killOnExit);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Called once from jest's global setup (before any test file runs) and by the bench: installs the package when it is missing and can be
 * installed (so parallel test files never run apt-get at the same time). Where it cannot, the PostgreSQL tests skip.
 */
export async function provisionPostgres(log: (line: string) => void): Promise<void> {
  if (!findPostgresBin() && !postgresUnavailable()) await installPostgres(log);
}

async function installPostgres(log: (line: string) => void): Promise<string> {
  const why = postgresUnavailable();
  if (why) throw new Error(why);
  log(`PostgreSQL not found; installing Debian's ${PACKAGE} package with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await exec('apt-get', ['update'], { env });
  await exec('apt-get', ['install', '-y', '--no-install-recommends', PACKAGE], { env });
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      `apt-get installed ${PACKAGE} but no initdb/pg_ctl/postgres was found under /usr/lib/postgresql/*/bin`,
    );
  return bin;
}

function systemUser(name: string): { uid: number; gid: number } | null {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function exec(
  file: string,
  args: string[],
  options: { uid?: number; gid?: number; cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(file, args, { ...options, timeout: 300_000, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${path.basename(file)} ${args.join(' ')} failed: ${stderr.trim() || error.message}`))
        : resolve(stdout),
    ),
  );
}

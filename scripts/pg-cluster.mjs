// A throwaway PostgreSQL cluster for the tests and the bench: made in a temporary directory,
// listening on a free local port, removed by `stop()`. It uses Debian's postgresql package
// (`initdb` and `pg_ctl` under /usr/lib/postgresql/<version>/bin, or PG_BIN). PostgreSQL
// refuses to run as root, so as root the cluster belongs to the `postgres` account.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** The directory of initdb and pg_ctl: PG_BIN, or the newest Debian PostgreSQL. */
export function postgresBin() {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      'PostgreSQL is not installed: no initdb under /usr/lib/postgresql. Install it (apt-get install postgresql) or set PG_BIN to the directory of initdb and pg_ctl.',
    );
  }
  return join(root, versions[0], 'bin');
}

/** A TCP port nothing listens on now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const asRoot = userInfo().uid === 0;

/** Runs a PostgreSQL program, as the postgres account when this process is root. */
function pg(bin, program, args) {
  const command = join(bin, program);
  if (!asRoot) return execFileSync(command, args, { stdio: 'pipe' });
  const quoted = [command, ...args].map((a) => `'${String(a).replaceAll("'", `'\\''`)}'`).join(' ');
  return execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', quoted], { stdio: 'pipe' });
}

/**
 * Starts a cluster and answers `{ url, port, dir, stop(), start() }`: `url` reaches its
 * `postgres` database as the superuser `postgres` (trust authentication, local connections
 * only). `stop()` shuts it down, `start()` starts it again; `remove()` also deletes its
 * directory. The C locale makes text sort byte by byte, as SQLite does. Not `durable`: commits
 * are not flushed to disk (test data; a crash of the machine may lose it), which makes the
 * suite's many small commits cheap; the bench keeps PostgreSQL's defaults.
 */
export async function startCluster({ durable = false } = {}) {
  const bin = postgresBin();
  const dir = mkdtempSync(join(tmpdir(), 'forge-pg-'));
  if (asRoot) {
    const { uid, gid } = postgresAccount();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  pg(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--locale=C', '-E', 'UTF8', '--no-sync']);
  const cluster = {
    dir,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start() {
      pg(bin, 'pg_ctl', [
        '-D',
        data,
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1${durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off'}`,
        '-l',
        join(dir, 'log'),
        '-w',
        'start',
      ]);
    },
    stop() {
      if (existsSync(join(data, 'postmaster.pid'))) pg(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    remove() {
      try {
        cluster.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  try {
    cluster.start();
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return cluster;
}

function postgresAccount() {
  const line = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' });
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

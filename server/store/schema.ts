import type Database from 'better-sqlite3';

/**
 * The schema, applied in order; `user_version` records how many steps a database has seen, so a
 * database written by an older service is brought forward on start.
 */
const MIGRATIONS: string[] = [
  `
  CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    email      TEXT NOT NULL UNIQUE,
    full_name  TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE workflows (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    parent_id     TEXT NOT NULL,
    active        INTEGER NOT NULL,
    variables     TEXT NOT NULL,
    webhook_token TEXT NOT NULL UNIQUE,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (user_id, parent_id)
  );
  CREATE TABLE credentials (
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    integration  TEXT NOT NULL,
    secret       TEXT NOT NULL,
    connected_at TEXT NOT NULL,
    PRIMARY KEY (user_id, integration)
  );
  CREATE TABLE executions (
    id          TEXT PRIMARY KEY,
    workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    started_at  TEXT NOT NULL,
    stopped_at  TEXT NOT NULL,
    finished    INTEGER NOT NULL,
    results     TEXT NOT NULL
  );
  -- Logs are read a page at a time per workflow, newest or oldest first.
  CREATE INDEX executions_by_workflow ON executions (workflow_id, started_at, id);
  CREATE TABLE error_logs (
    id           TEXT PRIMARY KEY,
    workflow_id  TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    execution_id TEXT NOT NULL,
    block_id     TEXT NOT NULL,
    block_type   TEXT NOT NULL,
    error        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    version      INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX error_logs_by_workflow ON error_logs (workflow_id, created_at);
  CREATE TABLE oauth_states (
    state         TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    integration   TEXT NOT NULL,
    opener_origin TEXT NOT NULL,
    code          TEXT,
    expires_at    INTEGER NOT NULL
  );
  `,
  // Executions: the scheduler reads a parent's active children; the outbox holds every error
  // log entry until each channel of the host (error webhook, event bus) has taken it.
  `
  CREATE INDEX workflows_by_parent ON workflows (parent_id, active);
  CREATE TABLE deliveries (
    error_id   TEXT NOT NULL REFERENCES error_logs(id) ON DELETE CASCADE,
    channel    TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    due_at     INTEGER NOT NULL,
    last_error TEXT,
    PRIMARY KEY (error_id, channel)
  );
  CREATE INDEX deliveries_by_due ON deliveries (due_at);
  `,
  // OAuth bound to the browser that started it: the authorize link works once, and a grant
  // waits, pending, until the element that started the flow confirms it (server/oauth-grants.ts).
  `
  ALTER TABLE oauth_states ADD COLUMN opened INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE oauth_grants (
    confirmation_hash TEXT PRIMARY KEY,
    user_id           TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    integration       TEXT NOT NULL,
    opener_origin     TEXT NOT NULL,
    grant_secret      TEXT NOT NULL,
    expires_at        INTEGER NOT NULL
  );
  `,
  // Run health (GET /workflow-health): each error entry says what kind of problem it was, decided
  // when it is recorded; entries recorded before are \`internal\`, as nothing is known of them.
  // Failures per day are counted over error_logs_by_workflow.
  `
  ALTER TABLE error_logs ADD COLUMN kind TEXT NOT NULL DEFAULT 'internal';
  `,
];

export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let step = current; step < MIGRATIONS.length; step++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[step]!);
      db.pragma(`user_version = ${step + 1}`);
    })();
  }
}

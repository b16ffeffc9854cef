/** A throwaway PostgreSQL cluster (scripts/pg-cluster.mjs). */
export interface Cluster {
  dir: string;
  port: number;
  /** The `postgres` database as the `postgres` superuser. */
  url: string;
  start(): void;
  stop(): void;
  remove(): void;
}
export function startCluster(options?: { durable?: boolean }): Promise<Cluster>;
export function postgresBin(): string;
export function freePort(): Promise<number>;

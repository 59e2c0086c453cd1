// The embedded directory store: one router, its directory in SQLite.
export { SqliteDirectory } from './store.ts';
export { exportFromSqlite, importIntoSqlite } from './transfer.ts';

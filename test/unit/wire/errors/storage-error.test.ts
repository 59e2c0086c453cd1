// How a failed SQLite call on a data directory reaches a caller: a full disk
// as RESOURCE_EXHAUSTED, a failing one as UNAVAILABLE, naming whose directory
// and no path; other SQLite errors pass unchanged.
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import Database from 'better-sqlite3';
import { ErrorCode, TallyError, storageError, toServiceError } from '../../../../src/wire/index.ts';

const sqliteError = (code: string, message: string): Error => new Database.SqliteError(message, code);

describe('storage errors', () => {
  it('SQLITE_FULL is RESOURCE_EXHAUSTED naming the owner; I/O, read-only and cannot-open errors are UNAVAILABLE', () => {
    const full = storageError(sqliteError('SQLITE_FULL', 'database or disk is full'), 'node n1');
    expect(full).toBeInstanceOf(TallyError);
    expect(full).toMatchObject({
      code: ErrorCode.resourceExhausted,
      message: 'node n1 data directory is full: nothing was written (SQLITE_FULL)',
    });
    for (const code of [
      'SQLITE_IOERR',
      'SQLITE_IOERR_FSYNC',
      'SQLITE_IOERR_WRITE',
      'SQLITE_READONLY',
      'SQLITE_READONLY_DBMOVED',
      'SQLITE_CANTOPEN',
    ]) {
      const failed = storageError(sqliteError(code, 'disk I/O error'), 'router');
      expect(failed, code).toMatchObject({
        code: ErrorCode.unavailable,
        message: `router data directory failed: disk I/O error (${code})`,
      });
    }
  });

  it('a constraint, a corrupt file or any other error passes unchanged', () => {
    for (const error of [
      sqliteError('SQLITE_CONSTRAINT_PRIMARYKEY', 'UNIQUE constraint failed: log.lsn'),
      sqliteError('SQLITE_CORRUPT', 'database disk image is malformed'),
      new Error('SQLITE_FULL'),
      'SQLITE_FULL',
    ]) {
      expect(storageError(error, 'node n1')).toBe(error);
    }
  });

  it('a server answers an unmapped SQLite error with its status, not INTERNAL', () => {
    expect(toServiceError(sqliteError('SQLITE_FULL', 'database or disk is full'))).toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
      details: "this server's data directory is full: nothing was written (SQLITE_FULL)",
    });
    expect(toServiceError(sqliteError('SQLITE_IOERR_FSYNC', 'disk I/O error')).code).toBe(status.UNAVAILABLE);
    expect(toServiceError(sqliteError('SQLITE_CORRUPT', 'database disk image is malformed')).code).toBe(status.INTERNAL);
  });
});

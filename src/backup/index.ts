// Backup and restore of a whole cluster: an online copy through a router
// (take-backup), its check (verify-backup) and a new cluster's data built
// from it offline (restore-backup). The layout lives in backup-format.
export { takeBackup, type BackupOptions } from './take-backup.ts';
export { verifyBackup, type VerifiedBackup } from './verify-backup.ts';
export { restoreBackup, type RestoreOptions, type RestoreSummary } from './restore-backup.ts';
export { readManifest, type BackupManifest } from './backup-format.ts';

// Support for the config unit tests: the ConfigError a parse throws, and the
// environment key a setting's name mirrors.
import { ConfigError } from '../../src/common/index.ts';

/** The ConfigError message `action` throws; fails the test on anything else. */
export function configErrorOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

/** refreshIntervalMs -> TALLY_REFRESH_INTERVAL_MS */
export function envKeyOf(settingName: string): string {
  return `TALLY_${settingName.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}`;
}

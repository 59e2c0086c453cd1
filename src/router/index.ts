// What the rest of Tally may use of the router without starting one (the
// router itself runs from main.ts): moving a directory between stores, and
// the router's configuration parser (the launcher and the CLI check flags
// with it).
export { openDirectoryTransfer, validateSnapshot, type DirectoryLocation, type DirectorySnapshot } from './directory/index.ts';
export { parseEtcdEndpoints } from './config.ts';

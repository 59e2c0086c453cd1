// A shard node with the V8 CPU profiler on, for bench scripts that want to
// know where a node's time goes (NODE_OPTIONS may not carry --cpu-prof):
//   node --import tsx bench/cpu/profiled-node.mts <node flags>   (TALLY_PROFILE_DIR=dir)
// Writes dir/<node-name>-<pid>.cpuprofile on a clean exit (SIGTERM); a SIGKILL writes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector';

const profileDir = process.env.TALLY_PROFILE_DIR ?? '.';
const nameIndex = process.argv.indexOf('--node-name');
const name = nameIndex > 0 ? process.argv[nameIndex + 1]! : 'node';
const session = new Session();
session.connect();
// The main-thread session answers synchronously: the profile is written before exit returns.
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (error, result) => {
    if (error === null) fs.writeFileSync(path.join(profileDir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
  });
});
await import('../../src/node/main.ts');

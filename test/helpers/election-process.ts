// A supervisor election in a process of its own, so a test can SIGKILL the
// supervisor the honest way (no resignation, no last keepalive). Arguments:
// <etcd endpoint> <prefix> <router id> <lease ttl ms>. Prints one JSON line
// per change on stdout: {"leader":true}; the election logs on stderr.
import { Etcd3 } from 'etcd3';
import { createLogger } from '../../src/common/index.ts';
import { EtcdSupervisorElection } from '../../src/router/supervision/supervisor-election.ts';

const [endpoint, prefix, routerId, leaseTtlMsText] = process.argv.slice(2);
if (endpoint === undefined || prefix === undefined || routerId === undefined || leaseTtlMsText === undefined) {
  process.stderr.write('usage: election-process.ts <etcd endpoint> <prefix> <router id> <lease ttl ms>\n');
  process.exit(2);
}
const client = new Etcd3({ hosts: endpoint });
const election = new EtcdSupervisorElection(client, prefix, routerId, Number(leaseTtlMsText), createLogger(`election-${routerId}`));
election.onChange((leader) => process.stdout.write(`${JSON.stringify({ leader })}\n`));
// The election's timers do not hold the process open (a router has its servers for that).
const keepOpen = setInterval(() => undefined, 60_000);
process.on('SIGTERM', () => {
  void election.stop().then(() => {
    clearInterval(keepOpen);
    client.close();
  });
});
await election.start();
process.stdout.write(`${JSON.stringify({ started: true, leader: election.isLeader })}\n`);

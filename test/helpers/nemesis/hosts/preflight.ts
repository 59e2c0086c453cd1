// The harness's requirements, checked before anything is created: root (network
// namespaces, veth, iptables) and four Debian packages. A missing one is an
// error naming its package, never a skipped test.
import { spawnSync } from 'node:child_process';
import { etcdInstalled } from '../../../../src/cluster/etcd-process.ts';
import { fakeTimeLibrary } from '../../fake-clock.ts';

function runs(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}

/** Throws one error naming every missing requirement and the Debian package that provides it. */
export function requireNemesisTools(): void {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (network namespaces, veth pairs and iptables need it): run the tests as root');
  if (!runs('ip', ['-V'])) missing.push('ip: apt-get install iproute2');
  if (!runs('iptables', ['--version'])) missing.push('iptables: apt-get install iptables');
  try {
    fakeTimeLibrary();
  } catch {
    missing.push('libfaketime: apt-get install faketime');
  }
  if (!etcdInstalled()) missing.push('etcd: apt-get install etcd-server');
  if (missing.length > 0) throw new Error(`the nemesis harness cannot run without:\n  ${missing.join('\n  ')}`);
}

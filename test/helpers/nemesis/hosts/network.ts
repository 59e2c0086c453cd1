// Hosts on a private bridge: one network namespace per host, each with eth0 on
// a /24 of its own, and the bridge in a namespace of its own too, so nothing
// the tests send ever reaches the machine's interfaces. Cuts between hosts are
// iptables rules in the receiving host's namespace, each removable alone.
import { randomInt } from 'node:crypto';
import { addNamespace, deleteNamespace, namespacePrefix, run, runIn, sweepLeftoverNamespaces } from './netns.ts';

export interface Host {
  /** Short name: e1, n0a, r1, client. */
  name: string;
  namespace: string;
  /** IPv4 address on the bridge. */
  address: string;
}

/**
 * How a cut behaves: 'drop' loses packets silently (a sender waits out its
 * timeouts), 'reject' answers a TCP reset at once (a refused connection).
 */
export type CutMode = 'drop' | 'reject';

/** One rule: packets from `from` are not delivered to `to` (in `to`'s INPUT chain). */
interface Rule {
  to: Host;
  spec: string[];
}

let clusterSequence = 0;

export class Network {
  readonly hosts = new Map<string, Host>();
  readonly bridgeNamespace: string;
  /** The /24 all hosts share: 10.<a>.<b>.0. */
  readonly subnet: string;
  private readonly rulesByCut = new Map<string, Rule[]>();
  private destroyed = false;

  private constructor(readonly label: string) {
    this.bridgeNamespace = `${label}-br`;
    this.subnet = `10.${randomInt(16, 250)}.${randomInt(1, 250)}`;
  }

  /**
   * Creates the bridge and one host per name, addresses from .10 up in order.
   * Sweeps the namespaces of dead harnesses first. On any failure, deletes what it made.
   */
  static create(hostNames: readonly string[]): Network {
    sweepLeftoverNamespaces();
    const network = new Network(`${namespacePrefix}${process.pid}-${clusterSequence++}`);
    try {
      network.build(hostNames);
    } catch (error) {
      network.destroy();
      throw error;
    }
    return network;
  }

  private build(hostNames: readonly string[]): void {
    addNamespace(this.bridgeNamespace);
    run('ip', ['-n', this.bridgeNamespace, 'link', 'add', 'br0', 'type', 'bridge']);
    run('ip', ['-n', this.bridgeNamespace, 'link', 'set', 'br0', 'up']);
    hostNames.forEach((name, index) => {
      const host: Host = { name, namespace: `${this.label}-${name}`, address: `${this.subnet}.${10 + index}` };
      addNamespace(host.namespace);
      this.hosts.set(name, host);
      // Both ends made inside namespaces: the veth never exists in the machine's own.
      const bridgeEnd = `v${index}`;
      run('ip', ['-n', this.bridgeNamespace, 'link', 'add', bridgeEnd, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.namespace]);
      run('ip', ['-n', this.bridgeNamespace, 'link', 'set', bridgeEnd, 'master', 'br0', 'up']);
      run('ip', ['-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0']);
      run('ip', ['-n', host.namespace, 'link', 'set', 'eth0', 'up']);
    });
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (host === undefined) throw new Error(`no host ${name} (hosts: ${[...this.hosts.keys()].join(', ')})`);
    return host;
  }

  /**
   * Cuts delivery of packets from every host of `from` to every host of `to`
   * (one way), under a name that heal() takes. Both ways: call it twice.
   */
  cut(name: string, from: readonly Host[], to: readonly Host[], mode: CutMode): void {
    const rules = this.rulesByCut.get(name) ?? [];
    this.rulesByCut.set(name, rules);
    for (const receiver of to) {
      for (const sender of from) {
        if (sender.name === receiver.name) continue;
        const spec =
          mode === 'drop'
            ? ['INPUT', '-s', sender.address, '-j', 'DROP']
            : ['INPUT', '-s', sender.address, '-p', 'tcp', '-j', 'REJECT', '--reject-with', 'tcp-reset'];
        runIn(receiver.namespace, 'iptables', ['-w', '-A', ...spec]);
        rules.push({ to: receiver, spec });
      }
    }
  }

  /** Removes the rules of one cut; the others stay. */
  heal(name: string): void {
    for (const rule of this.rulesByCut.get(name) ?? []) {
      runIn(rule.to.namespace, 'iptables', ['-w', '-D', ...rule.spec]);
    }
    this.rulesByCut.delete(name);
  }

  /** Removes every cut: every host's INPUT chain flushed. */
  healAll(): void {
    for (const host of this.hosts.values()) runIn(host.namespace, 'iptables', ['-w', '-F', 'INPUT']);
    this.rulesByCut.clear();
  }

  /** Names of the cuts in place. */
  get cuts(): string[] {
    return [...this.rulesByCut.keys()];
  }

  /** Kills whatever still runs in the hosts and deletes every namespace. Idempotent. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const host of this.hosts.values()) deleteNamespace(host.namespace);
    deleteNamespace(this.bridgeNamespace);
  }
}

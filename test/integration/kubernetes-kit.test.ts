// The Kubernetes kit (deploy/kubernetes) as a platform team applies it,
// checked offline: rendered by kubectl's built-in kustomize, every object
// validated against the Kubernetes schemas (kubernetes-models), and the
// invariants that matter: the two members of a pair can never share a
// machine, a drain never takes both, every container has probes and resource
// requests, and every setting passed to a Tally process is one its real
// config parser accepts. What only a real cluster can show (scheduling,
// volumes, DNS, probes answering) is listed in docs/kubernetes.md.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import {
  matches,
  pairsOf,
  parseContainerSettings,
  podsOf,
  render,
  schemaErrors,
  zoneFieldPath,
  type K8sObject,
  type Pod,
} from '../helpers/kubernetes-kit.ts';

/** The kustomizations of whole clusters the kit ships and docs/kubernetes.md renders. */
const kits = [
  'deploy/kubernetes/base',
  'deploy/kubernetes/examples/three-pairs',
  'deploy/kubernetes/examples/prometheus-operator',
  'deploy/kubernetes/overlays/dev',
];

/** A host name a pod is dialled by: <pod>.<service>, or with the namespace (<pod>.<service>.<namespace>.svc). */
function dialsPod(host: string, pod: Pod): boolean {
  const short = `${pod.name}.${pod.owner.spec!.serviceName}`;
  return host === short || host === `${short}.${pod.namespace}.svc`;
}

/** Whether pods a and b may run on one machine: neither's required anti-affinity on the host name rules out the other. */
function mayShareMachine(a: Pod, b: Pod): boolean {
  const excludes = (pod: Pod, other: Pod): boolean =>
    (pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []).some(
      (term) => term.topologyKey === 'kubernetes.io/hostname' && matches(term.labelSelector, other.labels),
    );
  return !excludes(a, b) && !excludes(b, a);
}

/** How many of `pods` one budget lets an eviction take at once. */
function disruptionsAllowed(budget: K8sObject, selected: number): number {
  const { maxUnavailable, minAvailable } = budget.spec!;
  const resolve = (value: number | string): number =>
    typeof value === 'number' ? value : Math.round((Number(value.replace('%', '')) / 100) * selected);
  if (maxUnavailable !== undefined) return resolve(maxUnavailable);
  if (minAvailable !== undefined) return selected - resolve(minAvailable);
  return selected;
}

/** Every way the kit breaks an invariant, one line each; empty when it holds them all. */
async function invariantViolations(objects: K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  const pods = podsOf(objects);
  const budgets = objects.filter((object) => object.kind === 'PodDisruptionBudget');

  // The two members of a pair never on one machine.
  const pairs = pairsOf(objects);
  for (const { index, members } of pairs)
    if (mayShareMachine(members[0], members[1]))
      problems.push(`pair ${index}: ${members[0].name} and ${members[1].name} may share a machine`);

  // Each pod under exactly one budget (the eviction API refuses more); a pair's budget lets at most one go.
  for (const pod of pods) {
    const covering = budgets.filter((budget) => budget.metadata.namespace === pod.namespace && matches(budget.spec!.selector, pod.labels));
    if (covering.length !== 1) problems.push(`${pod.name} is covered by ${covering.length} disruption budgets, not 1`);
  }
  for (const budget of budgets) {
    const selected = pods.filter((pod) => pod.namespace === budget.metadata.namespace && matches(budget.spec!.selector, pod.labels));
    if (selected.length === 0) problems.push(`budget ${budget.metadata.name} selects no pod`);
    if (disruptionsAllowed(budget, selected.length) >= Math.max(selected.length, 2))
      problems.push(`budget ${budget.metadata.name} lets a drain take all ${selected.length} of its pods`);
  }
  for (const { index, members } of pairs) {
    const both = budgets.filter((budget) => members.every((member) => matches(budget.spec!.selector, member.labels)));
    const drainable = budgets.some(
      (budget) =>
        members.some((member) => matches(budget.spec!.selector, member.labels)) &&
        disruptionsAllowed(budget, pods.filter((pod) => matches(budget.spec!.selector, pod.labels)).length) > 1,
    );
    if (both.length === 0 || drainable) problems.push(`pair ${index}: no budget keeps a drain from taking both members`);
  }

  // Probes, resource requests, metrics annotations, shutdown time.
  for (const pod of pods.filter((one, index, all) => all.findIndex((other) => other.owner === one.owner) === index)) {
    for (const container of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
      const where = `${pod.owner.kind} ${pod.owner.metadata.name} container ${container.name}`;
      if (container.readinessProbe === undefined) problems.push(`${where} has no readiness probe`);
      if (container.livenessProbe === undefined) problems.push(`${where} has no liveness probe`);
      if (container.resources?.requests?.cpu === undefined || container.resources.requests.memory === undefined)
        problems.push(`${where} has no cpu and memory requests`);
      if (container.resources?.limits?.memory === undefined) problems.push(`${where} has no memory limit`);
      const ports = new Set((container.ports ?? []).map((port) => port.containerPort));
      const scrapePort = Number(pod.annotations['prometheus.io/port']);
      if (pod.annotations['prometheus.io/scrape'] !== 'true' || !ports.has(scrapePort))
        problems.push(`${where}: prometheus.io/scrape and a prometheus.io/port it declares (${scrapePort})`);
      if (!container.image.startsWith('tally')) continue;
      let config: Record<string, unknown>;
      try {
        const parsed = await parseContainerSettings(container, pod, objects);
        config = parsed.config;
        for (const missing of parsed.missing) problems.push(`${where}: ${missing}`);
      } catch (error) {
        problems.push(`${where}: its settings fail the ${container.args?.[0]} config parser: ${(error as Error).message}`);
        continue;
      }
      const grpcPort = Number(String(config.listenAddress).split(':').pop());
      // The kubelet's gRPC probe speaks plaintext only: a TLS process is probed by the CLI's health check.
      const healthCommand = ['/app/bin/docker-entrypoint.sh', 'health', '--address', `127.0.0.1:${grpcPort}`];
      const probes = { startup: container.startupProbe, readiness: container.readinessProbe, liveness: container.livenessProbe };
      for (const [kind, probe] of Object.entries(probes)) {
        if (probe === undefined) continue;
        const isHealthCommand = JSON.stringify(probe.exec?.command) === JSON.stringify(healthCommand);
        if (config.tls !== undefined && !isHealthCommand)
          problems.push(`${where}: ${kind} probe is not the TLS health check ${healthCommand.join(' ')} (a gRPC probe cannot speak TLS)`);
        if (config.tls === undefined && probe.grpc?.port !== grpcPort && !isHealthCommand)
          problems.push(`${where}: ${kind} probe is not a gRPC health check on ${grpcPort}`);
      }
      if (!ports.has(grpcPort)) problems.push(`${where} does not declare its gRPC port ${grpcPort}`);
      if (config.metricsPort !== scrapePort) problems.push(`${where}: metrics on ${String(config.metricsPort)}, scraped on ${scrapePort}`);
      if (config.metricsHost !== '0.0.0.0')
        problems.push(`${where}: metrics bound to ${String(config.metricsHost)}, not reachable by the scraper`);
      const preStopSeconds = Number(container.lifecycle?.preStop?.exec?.command.join(' ').match(/^sleep (\d+)$/)?.[1] ?? 0);
      const neededSeconds = preStopSeconds + Number(config.shutdownTimeoutMs) / 1000 + 1;
      if ((pod.spec.terminationGracePeriodSeconds ?? 30) <= neededSeconds)
        problems.push(
          `${where}: terminationGracePeriodSeconds ${pod.spec.terminationGracePeriodSeconds} is not longer than the shutdown (${neededSeconds} s)`,
        );
      const mounted = (container.volumeMounts ?? []).some((mount) => mount.mountPath === config.dataDir);
      if (!mounted) problems.push(`${where}: its data directory ${String(config.dataDir)} is not a mounted volume`);
    }
  }

  // Node pods keep their volume, restart only one at a time (OnDelete), and the routers find them by stable names.
  const nodeSets = pairs[0]!.members.map((member) => member.owner);
  for (const set of nodeSets) {
    if (set.spec!.updateStrategy?.type !== 'OnDelete')
      problems.push(`${set.metadata.name}: updateStrategy ${set.spec!.updateStrategy?.type}, not OnDelete`);
    if ((set.spec!.volumeClaimTemplates ?? []).length === 0) problems.push(`${set.metadata.name} has no volume claim template`);
    const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === set.spec!.serviceName);
    if (service?.spec?.clusterIP !== 'None') problems.push(`${set.metadata.name}: its serviceName is not a headless Service`);
    // Each node reports its machine's zone: the supervisor's warning and zone-aware placement need it.
    const zone = set.spec!.template!.spec.containers[0]!.env?.find((entry) => entry.name === 'TALLY_ZONE');
    if (zone?.valueFrom?.fieldRef?.fieldPath !== zoneFieldPath)
      problems.push(`${set.metadata.name}: TALLY_ZONE does not come from the topology.kubernetes.io/zone label`);
  }
  const routerPods = pods.filter((pod) => pod.labels['app.kubernetes.io/component'] === 'router');
  if (routerPods.length < 2) problems.push(`${routerPods.length} router(s): several are the point of etcd`);
  for (const routerPod of routerPods.slice(0, 1)) {
    const container = routerPod.spec.containers[0]!;
    const parsed = await parseContainerSettings(container, routerPod, objects).catch(() => undefined);
    if (parsed === undefined) continue;
    const { config } = parsed;
    const listed = (config.pairs as { primary: string; follower: string }[]).map((pair) => [pair.primary, pair.follower]);
    const nodePort = (member: Pod): string => String(member.spec.containers[0]!.ports?.find((port) => port.name === 'grpc')?.containerPort);
    const pairsMatch =
      listed.length === pairs.length &&
      pairs.every(({ members }, index) =>
        members.every((member, side) => {
          const [host, port] = [
            listed[index]![side]!.slice(0, listed[index]![side]!.lastIndexOf(':')),
            listed[index]![side]!.split(':').pop(),
          ];
          return dialsPod(host, member) && port === nodePort(member);
        }),
      );
    if (!pairsMatch)
      problems.push(
        `the routers' TALLY_PAIRS ${JSON.stringify(listed)} is not the node pods by pair ${JSON.stringify(pairs.map(({ members }) => members.map((member) => member.name)))}`,
      );
    const etcdPods = pods.filter((pod) => pod.labels['app.kubernetes.io/component'] === 'etcd');
    const etcdHosts = (config.etcdEndpoints as string[] | undefined)?.map((endpoint) => new URL(endpoint).hostname) ?? [];
    if (etcdPods.length < 3 || etcdHosts.length !== etcdPods.length || !etcdPods.every((pod, index) => dialsPod(etcdHosts[index]!, pod)))
      problems.push(
        `the routers' etcd ${JSON.stringify(etcdHosts)} is not every member of a 3-member etcd ${JSON.stringify(etcdPods.map((pod) => pod.name))}`,
      );
    if (container.env?.find((entry) => entry.name === 'TALLY_ROUTER_ID')?.valueFrom?.fieldRef?.fieldPath !== 'metadata.name')
      problems.push('router ids do not come from the pod names');
  }
  return problems;
}

describe('kubernetes kit', () => {
  for (const kit of kits) {
    it(`kit ${kit}: renders offline and every object passes the Kubernetes schema`, async () => {
      const objects = render(kit);
      expect(objects.length).toBeGreaterThan(10);
      const errors: string[] = [];
      for (const object of objects) {
        const error = await schemaErrors(object);
        if (error !== undefined) errors.push(`${object.kind} ${object.metadata.name}: ${error}`);
      }
      expect(errors).toEqual([]);
      expect(objects.filter((object) => object.kind !== 'Namespace').every((object) => object.metadata.namespace === 'tally')).toBe(true);
    });

    it(`kit ${kit}: pairs never share a machine, a drain never takes both, probes, requests and settings the processes accept`, async () => {
      expect(await invariantViolations(render(kit))).toEqual([]);
    });
  }

  it('the checks fail on a kit that breaks them (anti-affinity, budgets, probes, requests, an unknown setting, no zone)', async () => {
    const objects = render('deploy/kubernetes/base');
    const nodeB = objects.find((object) => object.kind === 'StatefulSet' && object.metadata.name === 'tally-node-b')!;
    const nodeA = objects.find((object) => object.kind === 'StatefulSet' && object.metadata.name === 'tally-node-a')!;
    delete nodeA.spec!.template!.spec.affinity;
    delete nodeB.spec!.template!.spec.affinity;
    const nodeBContainer = nodeB.spec!.template!.spec.containers[0]!;
    nodeBContainer.env = nodeBContainer.env!.filter((entry) => entry.name !== 'TALLY_ZONE');
    const broken = objects.filter((object) => object.metadata.name !== 'tally-pair-1');
    const router = broken.find((object) => object.kind === 'Deployment')!.spec!.template!.spec.containers[0]!;
    delete router.readinessProbe;
    delete router.resources!.requests!.cpu;
    const nodeConfig = broken.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('tally-node-'))!;
    nodeConfig.data!.TALLY_REPLICATION_TIMOUT_MS = '500';
    const problems = (await invariantViolations(broken)).join('\n');
    expect(problems).toContain('pair 0: tally-node-a-0 and tally-node-b-0 may share a machine');
    expect(problems).toContain('tally-node-a-1 is covered by 0 disruption budgets');
    expect(problems).toContain('pair 1: no budget keeps a drain from taking both members');
    expect(problems).toContain('container router has no readiness probe');
    expect(problems).toContain('container router has no cpu and memory requests');
    expect(problems).toContain('unknown flag --replication-timout-ms');
    expect(problems).toContain('tally-node-b: TALLY_ZONE does not come from the topology.kubernetes.io/zone label');
  });

  it('the Prometheus scrape config names the jobs the rules and the dashboard use, and carries the rules file', () => {
    const objects = render('deploy/kubernetes/base');
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('tally-prometheus-'))!;
    expect(configMap.data!['rules.yml']).toBe(fs.readFileSync(path.join(repoRoot, 'deploy/prometheus/rules.yml'), 'utf8'));
    const scrape = configMap.data!['prometheus.yml']!;
    for (const job of ['tally-router', 'tally-nodes', 'tally-relay', 'etcd']) expect(scrape).toContain(`replacement: ${job}`);
    expect(scrape).toContain('kubernetes_sd_configs');
    expect(scrape).toContain('rules.yml');
  });

  it('docs/kubernetes.md renders exactly the kustomizations this test checks', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs/kubernetes.md'), 'utf8');
    const rendered = new Set([...doc.matchAll(/kubectl kustomize (\S+)/g)].map((match) => match[1]!));
    expect([...rendered].sort()).toEqual([...kits].sort());
  });
});

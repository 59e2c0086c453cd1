// The Kubernetes kit (deploy/kubernetes) as a platform team applies it,
// checked offline: rendered by kubectl's built-in kustomize, every object
// validated against the Kubernetes schemas (kubernetes-models), and the
// invariants that matter: the two members of a pair can never share a
// machine, a drain never takes both, every container has probes and resource
// requests, and every setting passed to a Tally process is one its real
// config parser accepts. What only a real cluster can show (scheduling,
// volumes, DNS, probes answering) is listed in docs/kubernetes.md.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';

/** The kustomizations the kit ships and docs/kubernetes.md renders. */
const kits = ['deploy/kubernetes/base', 'deploy/kubernetes/examples/three-pairs'];

// Loose shapes: kubernetes-models checks the real schema; these name what the checks read.
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface AffinityTerm {
  topologyKey: string;
  labelSelector?: LabelSelector;
}
interface Probe {
  grpc?: { port: number };
  httpGet?: { port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  affinity?: {
    podAntiAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[];
      preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: AffinityTerm }[];
    };
  };
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: {
    replicas?: number;
    serviceName?: string;
    selector?: LabelSelector & Record<string, string>;
    clusterIP?: string;
    updateStrategy?: { type: string };
    maxUnavailable?: number | string;
    minAvailable?: number | string;
    template?: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
    volumeClaimTemplates?: { metadata: { name: string } }[];
  };
  data?: Record<string, string>;
}

function requireKubectl(): void {
  if (spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).status !== 0)
    throw new Error(
      "kubectl is not installed: the kit is rendered by its built-in kustomize. These machines carry it (the kubectl package of the machine image); Debian's kubernetes-client conflicts with that package: do not install it",
    );
}

function render(kit: string): K8sObject[] {
  requireKubectl();
  const text = execFileSync('kubectl', ['kustomize', path.join(repoRoot, kit)], { encoding: 'utf8', timeout: 60_000 });
  return parseAllDocuments(text)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/** kubernetes-models' class for apiVersion/kind, e.g. apps/v1 StatefulSet -> kubernetes-models/apps/v1/StatefulSet. */
async function schemaErrors(object: K8sObject): Promise<string | undefined> {
  const modulePath = `kubernetes-models/${object.apiVersion}/${object.kind}`;
  let model: Record<string, new (data: unknown) => { validate(): void }>;
  try {
    model = (await import(modulePath)) as typeof model;
  } catch {
    return `no schema for ${object.apiVersion} ${object.kind}`;
  }
  try {
    new model[object.kind]!(object).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function matches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector === undefined) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const expression of selector.matchExpressions ?? []) {
    const has = expression.key in labels;
    const inValues = has && (expression.values ?? []).includes(labels[expression.key]!);
    const ok = { In: inValues, NotIn: !inValues, Exists: has, DoesNotExist: !has }[expression.operator];
    if (ok !== true) return false;
  }
  return true;
}

interface Pod {
  name: string;
  namespace: string;
  owner: K8sObject;
  labels: Record<string, string>;
  spec: PodSpec;
  annotations: Record<string, string>;
}

/** The pods a workload makes, with the labels the controllers add (StatefulSet: pod name and index). */
function podsOf(objects: K8sObject[]): Pod[] {
  return objects.flatMap((owner) => {
    if (owner.kind !== 'StatefulSet' && owner.kind !== 'Deployment') return [];
    const template = owner.spec!.template!;
    const count = owner.spec!.replicas ?? 1;
    return Array.from({ length: count }, (_, index) => {
      const name = owner.kind === 'StatefulSet' ? `${owner.metadata.name}-${index}` : `${owner.metadata.name}-pod${index}`;
      const labels =
        owner.kind === 'StatefulSet'
          ? { ...template.metadata.labels, 'statefulset.kubernetes.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(index) }
          : { ...template.metadata.labels };
      return {
        name,
        namespace: owner.metadata.namespace ?? 'default',
        owner,
        labels,
        spec: template.spec,
        annotations: template.metadata.annotations ?? {},
      };
    });
  });
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

interface Pair {
  index: number;
  members: [Pod, Pod];
}

/** Node pods by pair: the node StatefulSets' pods of one index. */
function pairsOf(objects: K8sObject[]): Pair[] {
  const nodeSets = objects.filter(
    (object) => object.kind === 'StatefulSet' && object.spec!.template!.metadata.labels['app.kubernetes.io/component'] === 'node',
  );
  if (nodeSets.length !== 2) throw new Error(`expected two node StatefulSets (the two sides of the pairs), found ${nodeSets.length}`);
  const [sideA, sideB] = nodeSets.map((set) => podsOf([set]));
  if (sideA!.length !== sideB!.length)
    throw new Error(`the two sides have ${sideA!.length} and ${sideB!.length} pods: every pair needs both`);
  return sideA!.map((pod, index) => ({ index, members: [pod, sideB![index]!] }));
}

/** Where a node pod's zone comes from: the machine's topology label, copied onto the pod. */
const zoneFieldPath = "metadata.labels['topology.kubernetes.io/zone']";

/** A ConfigMap's data by the name a container refers to (kustomize rewrote the reference with the hash suffix). */
function environmentOf(container: Container, objects: K8sObject[], pod: Pod): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name === source.configMapRef?.name);
    if (configMap === undefined)
      throw new Error(`${container.name} takes env from ConfigMap ${source.configMapRef?.name}, which the kit lacks`);
    Object.assign(env, configMap.data);
  }
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (entry.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[entry.name] = pod.name;
    // What the machine's label would give: a zone name the node's parser must accept.
    else if (entry.valueFrom?.fieldRef?.fieldPath === zoneFieldPath) env[entry.name] = 'europe-west1-b';
    else throw new Error(`${container.name}: env ${entry.name} comes from a source this test cannot resolve`);
  }
  return env;
}

/** The exported parser, wherever the source tree keeps it today (folders are being reorganised). */
async function findParser<T>(exportName: string): Promise<T> {
  const files = (fs.readdirSync(path.join(repoRoot, 'src'), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
  const file = files.find((one) => fs.readFileSync(path.join(repoRoot, 'src', one), 'utf8').includes(`export function ${exportName}(`));
  if (file === undefined) throw new Error(`no src file exports ${exportName}`);
  return ((await import(path.join(repoRoot, 'src', file))) as Record<string, T>)[exportName]!;
}

type Parser = (argv: readonly string[], env: NodeJS.ProcessEnv) => Record<string, unknown>;

/** Environment keys with no flag twin: secrets that must not sit in argv. */
const envOnlyKeys = new Set(['TALLY_ADMIN_TOKEN', 'TALLY_CLIENT_TOKEN', 'TALLY_TOKEN']);

/**
 * Every setting of a Tally container, parsed by the process's own parser,
 * with each TALLY_* variable also passed as its flag: the parser refuses an
 * unknown flag (an unknown variable it would silently ignore).
 */
async function parseTallyContainer(container: Container, env: Record<string, string>): Promise<Record<string, unknown>> {
  const [command, ...flags] = container.args ?? [];
  const parser = await findParser<Parser>(command === 'router' ? 'parseRouterConfig' : command === 'node' ? 'parseNodeConfig' : '');
  const asFlags = Object.entries(env)
    .filter(([key]) => key.startsWith('TALLY_') && !envOnlyKeys.has(key))
    .map(([key, value]) => `--${key.slice('TALLY_'.length).toLowerCase().replaceAll('_', '-')}=${value}`);
  parser([...flags, ...asFlags], {});
  return parser(flags, env);
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
      const env = environmentOf(container, objects, pod);
      let config: Record<string, unknown>;
      try {
        config = await parseTallyContainer(container, env);
      } catch (error) {
        problems.push(`${where}: its settings fail the ${container.args?.[0]} config parser: ${(error as Error).message}`);
        continue;
      }
      const grpcPort = Number(String(config.listenAddress).split(':').pop());
      for (const [kind, probe] of Object.entries({ readiness: container.readinessProbe, liveness: container.livenessProbe }))
        if (probe?.grpc?.port !== grpcPort && probe?.exec === undefined)
          problems.push(`${where}: ${kind} probe is not a gRPC health check on ${grpcPort}`);
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
    const config = await parseTallyContainer(container, environmentOf(container, objects, routerPod)).catch(() => undefined);
    if (config === undefined) continue;
    const listed = (config.pairs as { primary: string; follower: string }[]).map((pair) => [pair.primary, pair.follower]);
    const expected = pairs.map(({ members }) =>
      members.map(
        (member) =>
          `${member.name}.${member.owner.spec!.serviceName}:${String(
            environmentOf(member.spec.containers[0]!, objects, member).TALLY_LISTEN,
          )
            .split(':')
            .pop()}`,
      ),
    );
    if (JSON.stringify(listed) !== JSON.stringify(expected))
      problems.push(`the routers' TALLY_PAIRS ${JSON.stringify(listed)} is not the node pods by pair ${JSON.stringify(expected)}`);
    const etcdPods = pods.filter((pod) => pod.labels['app.kubernetes.io/component'] === 'etcd');
    const etcdHosts = (config.etcdEndpoints as string[] | undefined)?.map((endpoint) => new URL(endpoint).hostname) ?? [];
    const etcdNames = etcdPods.map((pod) => `${pod.name}.${pod.owner.spec!.serviceName}`);
    if (etcdPods.length < 3 || JSON.stringify(etcdHosts) !== JSON.stringify(etcdNames))
      problems.push(`the routers' etcd ${JSON.stringify(etcdHosts)} is not every member of a 3-member etcd ${JSON.stringify(etcdNames)}`);
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

  it('kit: the checks fail on a kit that breaks them (anti-affinity, budgets, probes, requests, an unknown setting, no zone)', async () => {
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

  it('kit: the Prometheus scrape config names the jobs the rules and the dashboard use, and carries the rules file', () => {
    const objects = render('deploy/kubernetes/base');
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('tally-prometheus-'))!;
    expect(configMap.data!['rules.yml']).toBe(fs.readFileSync(path.join(repoRoot, 'deploy/prometheus/rules.yml'), 'utf8'));
    const scrape = configMap.data!['prometheus.yml']!;
    for (const job of ['tally-router', 'tally-nodes', 'etcd']) expect(scrape).toContain(`replacement: ${job}`);
    expect(scrape).toContain('kubernetes_sd_configs');
    expect(scrape).toContain('rules.yml');
  });

  it('kit: docs/kubernetes.md renders exactly the kustomizations this test checks', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs/kubernetes.md'), 'utf8');
    const rendered = new Set([...doc.matchAll(/kubectl kustomize (\S+)/g)].map((match) => match[1]!));
    expect([...rendered].sort()).toEqual([...kits].sort());
  });
});

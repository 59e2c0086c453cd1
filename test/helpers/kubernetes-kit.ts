// The Kubernetes kit as the kit tests read it: rendered by kubectl's built-in
// kustomize, objects checked against the Kubernetes schemas and, for custom
// resources, against their CRDs' (@kubernetes-models/cert-manager and
// @kubernetes-models/prometheus-operator carry the validators), pods as the
// controllers would make them, and each Tally container's settings parsed by
// the process's own parser. Reads files; starts nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';

// Loose shapes: kubernetes-models checks the real schema; these name what the checks read.
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
export interface AffinityTerm {
  topologyKey: string;
  labelSelector?: LabelSelector;
}
export interface Probe {
  grpc?: { port: number };
  httpGet?: { port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
  }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
export interface Volume {
  name: string;
  secret?: { secretName: string; defaultMode?: number; items?: { key: string; path: string }[] };
  emptyDir?: Record<string, unknown>;
}
export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  affinity?: {
    podAntiAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[];
      preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: AffinityTerm }[];
    };
  };
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  automountServiceAccountToken?: boolean;
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
    // Everything else (custom resources, policies) is read through `as` at the check that needs it.
    [field: string]: unknown;
  };
  data?: Record<string, string>;
}

function requireKubectl(): void {
  if (spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).status !== 0)
    throw new Error(
      "kubectl is not installed: the kit is rendered by its built-in kustomize. These machines carry it (the kubectl package of the machine image); Debian's kubernetes-client conflicts with that package: do not install it",
    );
}

export function render(kit: string): K8sObject[] {
  requireKubectl();
  const text = execFileSync('kubectl', ['kustomize', path.join(repoRoot, kit)], { encoding: 'utf8', timeout: 60_000 });
  return parseAllDocuments(text)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

/** Where the validators of a custom resource's group live: each package is generated from the CRDs' openAPIV3Schema. */
const crdModels: Readonly<Record<string, string>> = {
  'cert-manager.io': '@kubernetes-models/cert-manager',
  'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
};

/**
 * The model class for apiVersion/kind, e.g. apps/v1 StatefulSet ->
 * kubernetes-models/apps/v1/StatefulSet, cert-manager.io/v1 Certificate ->
 * @kubernetes-models/cert-manager/cert-manager.io/v1/Certificate. An object
 * of a group with no model fails: nothing goes unchecked.
 */
export async function schemaErrors(object: K8sObject): Promise<string | undefined> {
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
  const modulePath = `${crdModels[group] ?? 'kubernetes-models'}/${object.apiVersion}/${object.kind}`;
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

export function matches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
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

export interface Pod {
  name: string;
  namespace: string;
  owner: K8sObject;
  labels: Record<string, string>;
  spec: PodSpec;
  annotations: Record<string, string>;
}

/** The pods a workload makes, with the labels the controllers add (StatefulSet: pod name and index). */
export function podsOf(objects: K8sObject[]): Pod[] {
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

export interface Pair {
  index: number;
  members: [Pod, Pod];
}

/** Node pods by pair: the node StatefulSets' pods of one index. */
export function pairsOf(objects: K8sObject[]): Pair[] {
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
export const zoneFieldPath = "metadata.labels['topology.kubernetes.io/zone']";

/** A ConfigMap's data by the name a container refers to (kustomize rewrote the reference with the hash suffix). */
export function environmentOf(container: Container, objects: K8sObject[], pod: Pod): Record<string, string> {
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
export async function findParser<T>(exportName: string): Promise<T> {
  const files = (fs.readdirSync(path.join(repoRoot, 'src'), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
  const file = files.find((one) => fs.readFileSync(path.join(repoRoot, 'src', one), 'utf8').includes(`export function ${exportName}(`));
  if (file === undefined) throw new Error(`no src file exports ${exportName}`);
  return ((await import(path.join(repoRoot, 'src', file))) as Record<string, T>)[exportName]!;
}

export type Parser = (argv: readonly string[], env: NodeJS.ProcessEnv) => Record<string, unknown>;

/** Environment keys with no flag twin: secrets that must not sit in argv. */
const envOnlyKeys = new Set(['TALLY_ADMIN_TOKEN', 'TALLY_CLIENT_TOKEN', 'TALLY_TOKEN']);

/**
 * Every setting of a Tally container, parsed by the process's own parser,
 * with each TALLY_* variable also passed as its flag: the parser refuses an
 * unknown flag (an unknown variable it would silently ignore).
 */
export async function parseTallyContainer(container: Container, env: Record<string, string>): Promise<Record<string, unknown>> {
  const [command, ...flags] = container.args ?? [];
  const parser = await findParser<Parser>(command === 'router' ? 'parseRouterConfig' : command === 'node' ? 'parseNodeConfig' : '');
  const asFlags = Object.entries(env)
    .filter(([key]) => key.startsWith('TALLY_') && !envOnlyKeys.has(key))
    .map(([key, value]) => `--${key.slice('TALLY_'.length).toLowerCase().replaceAll('_', '-')}=${value}`);
  parser([...flags, ...asFlags], {});
  return parser(flags, env);
}

/** Every kustomization under deploy/kubernetes a user may apply (not the components, which only overlays use). */
export function kustomizations(): string[] {
  const root = path.join(repoRoot, 'deploy/kubernetes');
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((file) => path.basename(file) === 'kustomization.yaml')
    .filter((file) => /^kind: Kustomization$/m.test(fs.readFileSync(path.join(root, file), 'utf8')))
    .map((file) => path.posix.join('deploy/kubernetes', path.dirname(file).split(path.sep).join('/')))
    .sort();
}

/** The pod template of every workload kind, CronJobs' included (spec.jobTemplate.spec.template). */
export function podSpecsOf(objects: K8sObject[]): { owner: K8sObject; spec: PodSpec }[] {
  return objects.flatMap((owner) => {
    const jobTemplate = owner.spec?.jobTemplate as { spec?: { template?: { spec?: PodSpec } } } | undefined;
    const spec = owner.spec?.template?.spec ?? jobTemplate?.spec?.template?.spec;
    return spec === undefined ? [] : [{ owner, spec }];
  });
}

/** Every container of every workload, with where it is. */
export function containersOf(objects: K8sObject[]): { where: string; owner: K8sObject; container: Container }[] {
  return podSpecsOf(objects).flatMap(({ owner, spec }) =>
    [...spec.containers, ...(spec.initContainers ?? [])].map((container) => ({
      where: `${owner.kind} ${owner.metadata.name} container ${container.name}`,
      owner,
      container,
    })),
  );
}

/** An image reference that names what runs: a tag other than latest, or a digest. */
export function isPinnedImage(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const tag = lastPart.includes(':') ? lastPart.slice(lastPart.indexOf(':') + 1) : '';
  return tag !== '' && tag !== 'latest';
}

/**
 * The container's environment with every path inside a mounted Secret
 * replaced by a scratch file (a token a parser accepts), so a parser that
 * reads a file finds one; `missing` lists paths the Secret's projection
 * does not hold. The caller removes `dir`.
 */
export function withSecretFiles(
  container: Container,
  pod: Pod,
  env: Record<string, string>,
  secretKeys: (secretName: string) => readonly string[] | undefined,
): { env: Record<string, string>; dir: string; missing: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-kit-secrets-'));
  const missing: string[] = [];
  const rewritten = { ...env };
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.spec.volumes?.find((one) => one.name === mount.name);
    if (volume?.secret === undefined) continue;
    const keys = volume.secret.items?.map((item) => item.path) ?? secretKeys(volume.secret.secretName) ?? [];
    for (const [name, value] of Object.entries(env)) {
      if (!value.startsWith(`${mount.mountPath}/`)) continue;
      const file = value.slice(mount.mountPath.length + 1);
      if (!keys.includes(file)) missing.push(`${name}=${value}: Secret ${volume.secret.secretName} as mounted has no ${file}`);
      const scratch = path.join(dir, `${mount.name}-${file}`);
      // Distinct per file: the router refuses an admin token equal to the client token.
      fs.writeFileSync(scratch, `${mount.name}-${file}-`.padEnd(40, 'k'));
      rewritten[name] = scratch;
    }
  }
  return { env: rewritten, dir, missing };
}

/** Secrets the operator creates (docs/kubernetes.md shows the command for each), by the keys the kit reads. */
export const operatorSecrets: Readonly<Record<string, readonly string[]>> = {
  'tally-tokens': ['admin.token', 'client.token'],
  'tally-relay-postgres': ['url'],
};

/** The keys of a Secret the kit mounts: cert-manager's for a Certificate's secretName, else an operator Secret's. */
export function secretKeysOf(objects: K8sObject[]): (secretName: string) => readonly string[] | undefined {
  return (secretName) => {
    const issued = objects.some((object) => object.kind === 'Certificate' && object.spec?.secretName === secretName);
    return issued ? ['tls.crt', 'tls.key', 'ca.crt'] : operatorSecrets[secretName];
  };
}

/**
 * A Tally container's settings as its process would parse them in this pod:
 * its environment resolved, files from Secrets stood in for by scratch
 * files. Throws the parser's error; `missing` lists paths no Secret holds.
 */
export async function parseContainerSettings(
  container: Container,
  pod: Pod,
  objects: K8sObject[],
): Promise<{ config: Record<string, unknown>; env: Record<string, string>; missing: string[] }> {
  const env = environmentOf(container, objects, pod);
  const files = withSecretFiles(container, pod, env, secretKeysOf(objects));
  try {
    return { config: await parseTallyContainer(container, files.env), env, missing: files.missing };
  } finally {
    fs.rmSync(files.dir, { recursive: true, force: true });
  }
}

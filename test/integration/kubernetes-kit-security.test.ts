// The kit's security and monitoring promises, checked offline on what
// kustomize renders: every object passes its schema (custom resources their
// CRD's), every image is pinned, no pod carries a Kubernetes API token, the
// network policies let exactly the needed traffic through, and in the secure
// kits every hop is TLS with a certificate that names the host dialled and the
// role the peer checks (Node's own host name check and src/common/grpc/peer-role.ts
// decide, not this file). That cert-manager issues them and a CNI enforces the
// policies only a cluster shows (docs/kubernetes.md lists what was not run).
import fs from 'node:fs';
import path from 'node:path';
import tls, { type PeerCertificate } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { peerRoleOf } from '../../src/common/index.ts';
import {
  containersOf,
  isPinnedImage,
  kustomizations,
  matches,
  operatorSecrets,
  parseContainerSettings,
  podSpecsOf,
  podsOf,
  render,
  schemaErrors,
  type Container,
  type K8sObject,
  type LabelSelector,
  type Pod,
} from '../helpers/kubernetes-kit.ts';

/** The kits that must run TLS everywhere; overlays/dev is the one plaintext variant. */
const secureKits = [
  'deploy/kubernetes/base',
  'deploy/kubernetes/examples/three-pairs',
  'deploy/kubernetes/examples/prometheus-operator',
  'deploy/kubernetes/examples/outbox-relay',
];
const devKit = 'deploy/kubernetes/overlays/dev';

const componentOf = (pod: Pod): string => pod.labels['app.kubernetes.io/component'] ?? '';
const oneOfEach = (pods: Pod[]): Pod[] => pods.filter((pod, index) => pods.findIndex((other) => other.owner === pod.owner) === index);

/** Image pins, ServiceAccounts without API tokens, and Secrets that something creates. */
function hardeningViolations(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const { where, container } of containersOf(objects))
    if (!isPinnedImage(container.image))
      problems.push(`${where}: image ${container.image} is not pinned (a tag other than latest, or a digest)`);
  const issuedSecrets = new Set(
    objects.filter((object) => object.kind === 'Certificate').map((object) => object.spec!.secretName as string),
  );
  for (const { owner, spec } of podSpecsOf(objects)) {
    const where = `${owner.kind} ${owner.metadata.name}`;
    const account = objects.find((object) => object.kind === 'ServiceAccount' && object.metadata.name === spec.serviceAccountName);
    if (spec.serviceAccountName === undefined || spec.serviceAccountName === 'default')
      problems.push(`${where} runs as the namespace's default ServiceAccount`);
    else if (account === undefined) problems.push(`${where}: ServiceAccount ${spec.serviceAccountName} is not in the kit`);
    else if (account.automountServiceAccountToken !== false)
      problems.push(`${where}: ServiceAccount ${spec.serviceAccountName} mounts an API token by default`);
    if (spec.automountServiceAccountToken !== false) problems.push(`${where}: the pod does not refuse the API token`);
    const secretNames = [
      ...(spec.volumes ?? []).flatMap((volume) => (volume.secret === undefined ? [] : [volume.secret.secretName])),
      ...spec.containers.flatMap((container) => (container.env ?? []).flatMap((entry) => entry.valueFrom?.secretKeyRef?.name ?? [])),
    ];
    for (const name of secretNames)
      if (!issuedSecrets.has(name) && operatorSecrets[name] === undefined)
        problems.push(`${where} needs Secret ${name}, which neither a Certificate nor the operator (docs) creates`);
  }
  return problems;
}

interface Endpoint {
  what: string;
  namespace: string;
  labels: Record<string, string>;
}

const inNamespace = (namespace: string, what: string, labels: Record<string, string>): Endpoint => ({ what, namespace, labels });
const endpointOf = (pod: Pod): Endpoint => inNamespace(pod.namespace, pod.name, pod.labels);

interface PolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: unknown;
}
interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { port?: number; protocol?: string }[];
}

/** Whether NetworkPolicy semantics let `from` open a connection to `to` on port/protocol (both ends' policies). */
function policyAllows(objects: K8sObject[], from: Endpoint, to: Endpoint, port: number, protocol = 'TCP'): boolean {
  const policies = objects.filter((object) => object.kind === 'NetworkPolicy');
  const side = (self: Endpoint, peer: Endpoint, type: 'Ingress' | 'Egress'): boolean => {
    const selecting = policies.filter(
      (policy) =>
        policy.metadata.namespace === self.namespace &&
        matches(policy.spec!.podSelector as LabelSelector, self.labels) &&
        ((policy.spec!.policyTypes as string[] | undefined) ?? ['Ingress']).includes(type),
    );
    if (selecting.length === 0) return true;
    return selecting.some((policy) =>
      ((policy.spec![type === 'Ingress' ? 'ingress' : 'egress'] as PolicyRule[] | undefined) ?? []).some((rule) => {
        const portOk =
          (rule.ports ?? []).length === 0 ||
          rule.ports!.some((one) => (one.port === undefined || one.port === port) && (one.protocol ?? 'TCP') === protocol);
        const peers = type === 'Ingress' ? rule.from : rule.to;
        const peerOk =
          (peers ?? []).length === 0 ||
          peers!.some((one) => {
            if (one.ipBlock !== undefined) return false;
            const namespaceOk =
              one.namespaceSelector === undefined
                ? peer.namespace === policy.metadata.namespace
                : matches(one.namespaceSelector, { 'kubernetes.io/metadata.name': peer.namespace });
            return namespaceOk && (one.podSelector === undefined || matches(one.podSelector, peer.labels));
          });
        return portOk && peerOk;
      }),
    );
  };
  return side(from, to, 'Egress') && side(to, from, 'Ingress');
}

const portNamed = (pod: Pod, name: string): number =>
  pod.spec.containers.flatMap((container) => container.ports ?? []).find((port) => port.name === name)?.containerPort ?? -1;

/** The traffic the cluster needs, allowed; the traffic nobody needs, refused; a default deny under it all. */
function networkViolations(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const pods = oneOfEach(podsOf(objects));
  if (pods.length === 0) return problems;
  const namespace = pods[0]!.namespace;
  const denyAll = objects.some(
    (object) =>
      object.kind === 'NetworkPolicy' &&
      Object.keys((object.spec!.podSelector as object | undefined) ?? { missing: true }).length === 0 &&
      ['Ingress', 'Egress'].every((type) => ((object.spec!.policyTypes as string[] | undefined) ?? []).includes(type)) &&
      object.spec!.ingress === undefined &&
      object.spec!.egress === undefined,
  );
  if (!denyAll) problems.push('no default-deny NetworkPolicy (every pod, ingress and egress)');
  const dns = inNamespace('kube-system', 'kube-dns', { 'k8s-app': 'kube-dns' });
  const client = inNamespace('shop', 'a client elsewhere', { app: 'shop' });
  const scraper = inNamespace('monitoring', 'a Prometheus', { app: 'prometheus' });
  const stray = inNamespace(namespace, 'a stray pod in the namespace', { app: 'debug' });
  const of = (component: string): Pod[] => pods.filter((pod) => componentOf(pod) === component);
  const need = (from: Endpoint, to: Endpoint, port: number, protocol = 'TCP'): void => {
    if (!policyAllows(objects, from, to, port, protocol)) problems.push(`${from.what} cannot reach ${to.what} on ${protocol} ${port}`);
  };
  const refuse = (from: Endpoint, to: Endpoint, port: number): void => {
    if (policyAllows(objects, from, to, port)) problems.push(`${from.what} reaches ${to.what} on ${port}, which nothing needs`);
  };
  for (const pod of pods) {
    need(endpointOf(pod), dns, 53, 'UDP');
    need(endpointOf(pod), dns, 53, 'TCP');
    need(scraper, endpointOf(pod), portNamed(pod, 'metrics'));
    refuse(endpointOf(pod), client, 443);
  }
  for (const router of of('router')) {
    need(client, endpointOf(router), portNamed(router, 'grpc'));
    for (const node of of('node')) need(endpointOf(router), endpointOf(node), portNamed(node, 'grpc'));
    for (const etcd of of('etcd')) {
      need(endpointOf(router), endpointOf(etcd), portNamed(etcd, 'client'));
      refuse(endpointOf(router), endpointOf(etcd), portNamed(etcd, 'peer'));
    }
  }
  for (const node of of('node')) {
    for (const other of of('node')) need(endpointOf(node), endpointOf(other), portNamed(other, 'grpc'));
    for (const outsider of [client, stray]) refuse(outsider, endpointOf(node), portNamed(node, 'grpc'));
    for (const etcd of of('etcd')) refuse(endpointOf(node), endpointOf(etcd), portNamed(etcd, 'client'));
  }
  for (const etcd of of('etcd')) {
    for (const other of of('etcd')) need(endpointOf(etcd), endpointOf(other), portNamed(other, 'peer'));
    for (const outsider of [client, stray]) {
      refuse(outsider, endpointOf(etcd), portNamed(etcd, 'client'));
      refuse(outsider, endpointOf(etcd), portNamed(etcd, 'peer'));
    }
  }
  for (const relay of of('relay'))
    for (const router of of('router')) need(endpointOf(relay), endpointOf(router), portNamed(router, 'grpc'));
  return problems;
}

interface CertificateSpec {
  secretName: string;
  isCA?: boolean;
  dnsNames?: string[];
  ipAddresses?: string[];
  uris?: string[];
  usages?: string[];
  issuerRef: { name: string; kind?: string };
}

/** The Certificate whose Secret holds `file` in this container, as mounted. */
function certificateAt(
  objects: K8sObject[],
  pod: Pod,
  container: Container,
  file: string,
): { name: string; spec: CertificateSpec } | undefined {
  const mount = (container.volumeMounts ?? []).find((one) => file.startsWith(`${one.mountPath}/`));
  const secretName = pod.spec.volumes?.find((volume) => volume.name === mount?.name)?.secret?.secretName;
  const certificate = objects.find((object) => object.kind === 'Certificate' && object.spec!.secretName === secretName);
  return certificate === undefined ? undefined : { name: certificate.metadata.name, spec: certificate.spec as unknown as CertificateSpec };
}

/** The certificate as a TLS peer would see it, for Node's host name check and the role check. */
function asPeerCertificate(spec: CertificateSpec): PeerCertificate {
  const names = [
    ...(spec.dnsNames ?? []).map((name) => `DNS:${name}`),
    ...(spec.ipAddresses ?? []).map((address) => `IP Address:${address}`),
    ...(spec.uris ?? []).map((uri) => `URI:${uri}`),
  ];
  return { subject: {}, subjectaltname: names.join(', ') } as unknown as PeerCertificate;
}

const argValue = (container: Container, flag: string): string | undefined =>
  [...(container.command ?? []), ...(container.args ?? [])].find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
const hasArg = (container: Container, flag: string): boolean => [...(container.command ?? []), ...(container.args ?? [])].includes(flag);

/** TLS on every hop, each server's certificate covering the names it is dialled by with the role its peers check. */
async function tlsViolations(objects: K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  const pods = podsOf(objects);
  const covers = (what: string, certificate: { name: string; spec: CertificateSpec } | undefined, host: string, role?: string): void => {
    if (certificate === undefined) return void problems.push(`${what}: no Certificate's Secret holds its certificate`);
    const error = tls.checkServerIdentity(host, asPeerCertificate(certificate.spec));
    if (error !== undefined) problems.push(`${what}: Certificate ${certificate.name} does not cover ${host} (${error.message})`);
    if (role !== undefined && peerRoleOf(asPeerCertificate(certificate.spec)) !== role)
      problems.push(`${what}: Certificate ${certificate.name} does not state the ${role} role`);
  };
  const usages = (what: string, certificate: { name: string; spec: CertificateSpec } | undefined, needed: string[]): void => {
    for (const usage of needed)
      if (certificate !== undefined && !(certificate.spec.usages ?? []).includes(usage))
        problems.push(`${what}: Certificate ${certificate.name} lacks the ${usage} usage`);
  };
  const settings = new Map<Pod, { container: Container; config: Record<string, unknown>; env: Record<string, string> }>();
  for (const pod of pods) {
    const container = pod.spec.containers[0]!;
    if (!['router', 'node'].includes(container.args?.[0] ?? '')) continue;
    const where = `${pod.owner.kind} ${pod.owner.metadata.name}`;
    for (const flag of ['--insecure', '--allow-unauthenticated']) if (hasArg(container, flag)) problems.push(`${where} runs with ${flag}`);
    const parsed = await parseContainerSettings(container, pod, objects);
    settings.set(pod, { container, ...parsed });
    if (parsed.config.tls === undefined) {
      problems.push(`${where} serves plaintext`);
      continue;
    }
    // The paths as mounted (the parsed settings name the scratch files that stood in for them).
    const serving = certificateAt(objects, pod, container, parsed.env.TALLY_TLS_CERT ?? '');
    const role = componentOf(pod);
    covers(`${pod.name}'s health probe`, serving, '127.0.0.1', role);
    usages(where, serving, ['server auth', 'client auth']);
  }
  const routers = [...settings].filter(([pod]) => componentOf(pod) === 'router');
  const nodes = [...settings].filter(([pod]) => componentOf(pod) === 'node');
  const certificateOf = ([pod, { container, config, env }]: (typeof routers)[number]): ReturnType<typeof certificateAt> =>
    config.tls === undefined ? undefined : certificateAt(objects, pod, container, env.TALLY_TLS_CERT ?? '');
  for (const router of routers.slice(0, 1)) {
    const [pod, { container, config, env }] = router;
    const routerCertificate = certificateOf(router);
    for (const service of objects.filter(
      (object) => object.kind === 'Service' && matches({ matchLabels: object.spec!.selector }, pod.labels),
    ))
      covers(`Service ${service.metadata.name}`, routerCertificate, service.metadata.name, 'router');
    if (config.adminToken === undefined || config.clientToken === undefined) problems.push('the routers take calls without tokens');
    for (const key of ['TALLY_ADMIN_TOKEN', 'TALLY_CLIENT_TOKEN'])
      if (env[key] !== undefined) problems.push(`the routers' ${key} is a literal in a ConfigMap, not a file from a Secret`);
    // Router -> node and primary -> follower: every address of the pairs, against the node it names.
    for (const address of (config.pairs as { primary: string; follower: string }[]).flatMap((pair) => [pair.primary, pair.follower])) {
      const host = address.slice(0, address.lastIndexOf(':'));
      const node = nodes.find(([nodePod]) => host.split('.')[0] === nodePod.name);
      if (node === undefined) problems.push(`TALLY_PAIRS names ${host}, no node pod`);
      else {
        covers(`the node dialled as ${host}`, certificateOf(node), host, 'node');
        if (certificateOf(node)?.spec.issuerRef.name !== routerCertificate?.spec.issuerRef.name)
          problems.push(`${node[0].name}'s certificate and the routers' come from different CAs: neither would verify the other`);
      }
    }
    // Router -> etcd: https everywhere, a client certificate from the CA etcd trusts.
    const endpoints = (config.etcdEndpoints as string[] | undefined) ?? [];
    const etcdTls = config.etcdTls as { caFile: string; certFile?: string } | undefined;
    if (endpoints.some((endpoint) => !endpoint.startsWith('https://')) || etcdTls?.certFile === undefined)
      problems.push(`the routers reach etcd without mutual TLS (${endpoints.join(', ')})`);
    const etcdClient = etcdTls?.certFile === undefined ? undefined : certificateAt(objects, pod, container, env.TALLY_ETCD_TLS_CERT ?? '');
    usages("the routers' etcd client certificate", etcdClient, ['client auth']);
    for (const endpoint of endpoints) {
      const host = new URL(endpoint).hostname;
      const member = pods.find((one) => componentOf(one) === 'etcd' && host.split('.')[0] === one.name);
      const etcd = member?.spec.containers[0];
      if (member === undefined || etcd === undefined) {
        problems.push(`--etcd names ${host}, no etcd pod`);
        continue;
      }
      const server = certificateAt(objects, member, etcd, argValue(etcd, '--cert-file') ?? '');
      covers(`etcd dialled as ${host}`, server, host);
      if (server?.spec.issuerRef.name !== etcdClient?.spec.issuerRef.name)
        problems.push(`etcd's certificate and the routers' etcd client certificate come from different CAs`);
      if (server?.spec.issuerRef.name === routerCertificate?.spec.issuerRef.name)
        problems.push(`etcd trusts the CA of every Tally certificate: any client certificate could rewrite the directory`);
    }
  }
  // etcd members: TLS on both ports, client certificates required, peers from a CA of their own.
  for (const member of oneOfEach(pods.filter((pod) => componentOf(pod) === 'etcd'))) {
    const etcd = member.spec.containers[0]!;
    for (const flag of ['--client-cert-auth', '--peer-client-cert-auth'])
      if (!hasArg(etcd, flag)) problems.push(`etcd runs without ${flag}`);
    for (const flag of ['--listen-client-urls', '--advertise-client-urls', '--listen-peer-urls', '--initial-advertise-peer-urls'])
      if (!(argValue(etcd, flag) ?? '').startsWith('https://')) problems.push(`etcd ${flag} is not https://`);
    const server = certificateAt(objects, member, etcd, argValue(etcd, '--cert-file') ?? '');
    const peer = certificateAt(objects, member, etcd, argValue(etcd, '--peer-cert-file') ?? '');
    usages('etcd peer', peer, ['server auth', 'client auth']);
    if (peer !== undefined && peer.spec.issuerRef.name === server?.spec.issuerRef.name)
      problems.push(`etcd's peer and client certificates share a CA: a router's etcd certificate could join as a member`);
    for (const entry of (argValue(etcd, '--initial-cluster') ?? '').split(',')) {
      const url = new URL(entry.slice(entry.indexOf('=') + 1));
      if (url.protocol !== 'https:') problems.push(`etcd peer ${entry} is not https://`);
      covers(`etcd peer ${url.hostname}`, peer, url.hostname);
    }
  }
  // A relay calls the routers over TLS with the client token, and can read no admin token.
  for (const relay of oneOfEach(pods.filter((pod) => componentOf(pod) === 'relay'))) {
    const container = relay.spec.containers[0]!;
    const env = Object.fromEntries(
      (container.env ?? []).flatMap((entry) => (entry.value === undefined ? [] : [[entry.name, entry.value]])),
    );
    const projected = (file: string | undefined): { secretName: string; key: string } | undefined => {
      const mount = (container.volumeMounts ?? []).find((one) => file?.startsWith(`${one.mountPath}/`));
      const secret = relay.spec.volumes?.find((volume) => volume.name === mount?.name)?.secret;
      if (secret === undefined || mount === undefined) return undefined;
      const path = file!.slice(mount.mountPath.length + 1);
      return { secretName: secret.secretName, key: secret.items?.find((item) => item.path === path)?.key ?? path };
    };
    if (projected(env.TALLY_TLS_CA)?.key !== 'ca.crt') problems.push('the relay does not verify the routers with a CA from a Secret');
    if (JSON.stringify(projected(env.TALLY_TOKEN_FILE)) !== JSON.stringify({ secretName: 'tally-tokens', key: 'client.token' }))
      problems.push('the relay does not send the client token from tally-tokens');
    for (const volume of relay.spec.volumes ?? []) {
      const keys = volume.secret?.items?.map((item) => item.key);
      if (volume.secret?.secretName === 'tally-tokens' && (keys === undefined || keys.some((key) => key !== 'client.token')))
        problems.push('the relay mounts more of tally-tokens than client.token');
    }
  }
  // Every issuer exists; every CA issuer's key is a CA certificate.
  for (const certificate of objects.filter((object) => object.kind === 'Certificate')) {
    const issuerName = (certificate.spec as unknown as CertificateSpec).issuerRef.name;
    const issuer = objects.find((object) => object.kind === 'Issuer' && object.metadata.name === issuerName);
    if (issuer === undefined) problems.push(`Certificate ${certificate.metadata.name}: no Issuer ${issuerName}`);
    const caSecret = (issuer?.spec?.ca as { secretName?: string } | undefined)?.secretName;
    if (caSecret !== undefined) {
      const ca = objects.find((object) => object.kind === 'Certificate' && object.spec!.secretName === caSecret);
      if (ca?.spec?.isCA !== true) problems.push(`Issuer ${issuerName} signs with ${caSecret}, which no CA Certificate makes`);
    }
  }
  return problems;
}

describe('kubernetes kit: secure by default', () => {
  for (const kit of kustomizations()) {
    it(`${kit}: objects pass their schemas (custom resources their CRD's), images are pinned, no API tokens, only the needed traffic`, async () => {
      const objects = render(kit);
      const errors: string[] = [];
      for (const object of objects) {
        const error = await schemaErrors(object);
        if (error !== undefined) errors.push(`${object.kind} ${object.metadata.name}: ${error}`);
      }
      expect(errors).toEqual([]);
      expect(hardeningViolations(objects)).toEqual([]);
      expect(networkViolations(objects)).toEqual([]);
    });
  }

  for (const kit of secureKits)
    it(`${kit}: TLS on every hop, certificates naming what is dialled and the role peers check, tokens from a Secret`, async () => {
      expect(await tlsViolations(render(kit))).toEqual([]);
    });

  it('overlays/dev: plaintext is explicit (--insecure, http:// to etcd) and nothing needs cert-manager', async () => {
    const objects = render(devKit);
    expect(objects.filter((object) => object.apiVersion.startsWith('cert-manager.io/'))).toEqual([]);
    const problems = await tlsViolations(objects);
    expect(problems).toContain('StatefulSet tally-node-a runs with --insecure');
    expect(problems).toContain('Deployment tally-router runs with --allow-unauthenticated');
    expect(problems.some((problem) => problem.startsWith('the routers reach etcd without mutual TLS (http://'))).toBe(true);
    expect(hardeningViolations(objects)).toEqual([]);
  });

  it('the checks fail on a kit that breaks them (a certificate, a flag, an API token, an untagged image, a policy, a CRD field)', async () => {
    const objects = render('deploy/kubernetes/base');
    const find = (kind: string, name: string): K8sObject =>
      objects.find((object) => object.kind === kind && object.metadata.name === name)!;
    (find('Certificate', 'tally-node-b').spec as unknown as CertificateSpec).dnsNames = ['*.tally-node-b', 'localhost'];
    (find('Certificate', 'tally-etcd-peer').spec as unknown as CertificateSpec).issuerRef.name = 'tally-etcd-ca';
    const router = find('Deployment', 'tally-router').spec!.template!.spec;
    router.containers[0]!.args!.push('--insecure');
    router.containers[0]!.image = 'tally';
    find('StatefulSet', 'tally-node-a').spec!.template!.spec.automountServiceAccountToken = true;
    const nodePolicy = find('NetworkPolicy', 'tally-node');
    (nodePolicy.spec!.ingress as PolicyRule[]).push({});
    const broken = objects.filter((object) => !(object.kind === 'NetworkPolicy' && object.metadata.name === 'tally-dns'));
    const tlsProblems = (await tlsViolations(broken)).join('\n');
    expect(tlsProblems).toContain('Certificate tally-node-b does not cover tally-node-b-0.tally-node-b.tally.svc');
    expect(tlsProblems).toContain("etcd's peer and client certificates share a CA");
    expect(tlsProblems).toContain('Deployment tally-router runs with --insecure');
    const hardening = hardeningViolations(broken).join('\n');
    expect(hardening).toContain('Deployment tally-router container router: image tally is not pinned');
    expect(hardening).toContain('StatefulSet tally-node-a: the pod does not refuse the API token');
    const network = networkViolations(broken).join('\n');
    expect(network).toContain('tally-router-pod0 cannot reach kube-dns on UDP 53');
    expect(network).toContain('a client elsewhere reaches tally-node-a-0 on 50061');
    expect(network).toContain('a client elsewhere reaches tally-node-b-0 on 50061');
    const relayKit = render('deploy/kubernetes/examples/outbox-relay');
    const relay = relayKit.find((object) => object.kind === 'Deployment' && object.metadata.name === 'tally-relay')!.spec!.template!.spec;
    delete relay.volumes!.find((volume) => volume.name === 'tokens')!.secret!.items;
    relay.containers[0]!.env = relay.containers[0]!.env!.map((entry) =>
      entry.name === 'TALLY_TOKEN_FILE' ? { ...entry, value: '/etc/tally/tokens/admin.token' } : entry,
    );
    const relayProblems = (await tlsViolations(relayKit)).join('\n');
    expect(relayProblems).toContain('the relay mounts more of tally-tokens than client.token');
    expect(relayProblems).toContain('the relay does not send the client token from tally-tokens');
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'tally-backup', namespace: 'tally' },
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'backup', image: 'tally:latest' }] } } } } },
    } as unknown as K8sObject;
    const withJob = hardeningViolations([...broken, cronJob]).join('\n');
    expect(withJob).toContain('CronJob tally-backup container backup: image tally:latest is not pinned');
    expect(withJob).toContain("CronJob tally-backup runs as the namespace's default ServiceAccount");
    const certificate = structuredClone(find('Certificate', 'tally-router'));
    (certificate.spec as unknown as CertificateSpec).usages = ['server auth', 'bogus'];
    expect(await schemaErrors(certificate)).toMatch(/usages/);
    const monitor = render('deploy/kubernetes/examples/prometheus-operator').find((object) => object.kind === 'PodMonitor')!;
    monitor.spec!.podMetricsEndpoints = 'metrics';
    expect(await schemaErrors(monitor)).toMatch(/podMetricsEndpoints/);
  });

  it('prometheus-operator: a PodMonitor per component finds its metrics port with the job the rules use; the PrometheusRule is rules.yml', () => {
    const objects = [...render('deploy/kubernetes/examples/prometheus-operator'), ...render('deploy/kubernetes/examples/outbox-relay')];
    const rule = objects.find((object) => object.kind === 'PrometheusRule')!;
    expect(rule.spec).toEqual(parseYaml(fs.readFileSync(path.join(repoRoot, 'deploy/prometheus/rules.yml'), 'utf8')));
    const jobs: Record<string, string> = { router: 'tally-router', node: 'tally-nodes', etcd: 'etcd', relay: 'tally-relay' };
    const monitors = objects.filter((object) => object.kind === 'PodMonitor');
    for (const pod of oneOfEach(podsOf(objects))) {
      const found = monitors.filter((monitor) => matches(monitor.spec!.selector as LabelSelector, pod.labels));
      expect(found.length, `${pod.name}: PodMonitors`).toBe(1);
      const endpoint = (
        found[0]!.spec!.podMetricsEndpoints as { port: string; relabelings: { targetLabel: string; replacement?: string }[] }[]
      )[0]!;
      expect(portNamed(pod, endpoint.port), `${pod.name}: the monitored port`).toBe(Number(pod.annotations['prometheus.io/port']));
      expect(endpoint.relabelings.find((relabeling) => relabeling.targetLabel === 'job')?.replacement).toBe(jobs[componentOf(pod)]);
    }
  });

  it('docs: docs/kubernetes.md creates every Secret the operator must, and installs cert-manager before the base', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs/kubernetes.md'), 'utf8');
    const outbox = fs.readFileSync(path.join(repoRoot, 'docs/outbox.md'), 'utf8');
    const relayKit = fs.readFileSync(path.join(repoRoot, 'deploy/kubernetes/examples/outbox-relay/kustomization.yaml'), 'utf8');
    for (const [name, keys] of Object.entries(operatorSecrets)) {
      const text = [doc, outbox, relayKit].find((one) => one.includes(`create secret generic ${name}`));
      expect(text, `the command that creates ${name}`).toBeDefined();
      for (const key of keys) expect(text!.slice(text!.indexOf(`create secret generic ${name}`)).split('\n')[0]).toContain(key);
    }
    expect(doc.indexOf('cert-manager.yaml')).toBeGreaterThan(-1);
    expect(doc.indexOf('cert-manager.yaml')).toBeLessThan(doc.indexOf('kubectl kustomize deploy/kubernetes/base'));
  });
});

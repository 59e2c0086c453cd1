// The backup component (deploy/kubernetes/components/backup) as
// examples/backup renders it, checked offline: every object against the
// Kubernetes schemas, the CronJob taking etcd's snapshot and `tally backup`
// onto one claim, one run at a time, a pinned image, and the etcd client
// port opened to backup pods only. What only a real cluster shows (the
// claim bound, etcd answering) is listed in docs/operations.md.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts?: { name: string; mountPath: string }[];
}

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

function render(kit: string): K8sObject[] {
  if (spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).status !== 0)
    throw new Error('kubectl is not installed: the kit is rendered by its built-in kustomize');
  const text = execFileSync('kubectl', ['kustomize', path.join(repoRoot, kit)], { encoding: 'utf8', timeout: 60_000 });
  return parseAllDocuments(text)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

async function schemaErrors(object: K8sObject): Promise<string | undefined> {
  const model = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<
    string,
    new (data: unknown) => { validate(): void }
  >;
  try {
    new model[object.kind]!(object).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('kubernetes: scheduled backups', () => {
  const objects = render('deploy/kubernetes/examples/backup');
  const named = (kind: string, name: string): K8sObject => {
    const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
    expect(found, `${kind} ${name}`).toBeDefined();
    return found!;
  };

  it('the component adds a CronJob, its claim and its etcd policy, each valid against its schema', async () => {
    for (const object of objects.filter((item) => item.metadata.labels?.['app.kubernetes.io/component'] === 'backup'))
      expect(await schemaErrors(object), `${object.kind} ${object.metadata.name}`).toBeUndefined();
    expect(await schemaErrors(named('NetworkPolicy', 'tally-etcd-backup'))).toBeUndefined();
  });

  it('the CronJob snapshots etcd, then runs tally backup into a new directory per run on the claim, one run at a time', () => {
    const cronJob = named('CronJob', 'tally-backup');
    const spec = cronJob.spec as {
      concurrencyPolicy: string;
      jobTemplate: {
        spec: {
          template: {
            spec: { initContainers: Container[]; containers: Container[]; volumes: { persistentVolumeClaim?: { claimName: string } }[] };
          };
        };
      };
    };
    expect(spec.concurrencyPolicy).toBe('Forbid');
    const pod = spec.jobTemplate.spec.template.spec;
    const [etcd] = pod.initContainers;
    const [backup] = pod.containers;
    expect(etcd!.args).toEqual(expect.arrayContaining(['snapshot', 'save', '/backups/$(BACKUP_NAME).etcd.db']));
    expect(etcd!.image).toMatch(/^quay\.io\/coreos\/etcd:v3\.5\.\d+$/);
    expect(backup!.args).toEqual(['backup', '--out', '/backups/$(BACKUP_NAME)']);
    // Pinned: a tag, never the bare name.
    expect(backup!.image).toMatch(/^tally:\S+$/);
    for (const container of [etcd!, backup!]) {
      expect(container.env?.find((env) => env.name === 'BACKUP_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe("metadata.labels['job-name']");
      expect(container.volumeMounts).toContainEqual({ name: 'backups', mountPath: '/backups' });
    }
    // The secure base: etcd over TLS with the routers' etcd client certificate, the routers with the CA and the admin token.
    expect(etcd!.args).toEqual(expect.arrayContaining(['--cacert=/etc/tally/etcd-tls/ca.crt', '--cert=/etc/tally/etcd-tls/tls.crt']));
    expect(etcd!.args!.find((arg) => arg.startsWith('--endpoints='))).toMatch(/^--endpoints=https:\/\//);
    expect(backup!.env?.find((env) => env.name === 'TALLY_TOKEN_FILE')?.value).toBe('/etc/tally/tokens/admin.token');
    expect(backup!.env?.find((env) => env.name === 'TALLY_TLS_CA')?.value).toBe('/etc/tally/tls/ca.crt');
    expect(pod.volumes[0]?.persistentVolumeClaim?.claimName).toBe(named('PersistentVolumeClaim', 'tally-backups').metadata.name);
  });

  it('etcd client port opened to backup pods only', () => {
    const policy = named('NetworkPolicy', 'tally-etcd-backup').spec as {
      ingress: { from: { podSelector: { matchLabels: Record<string, string> } }[]; ports: { port: number }[] }[];
    };
    expect(policy.ingress).toHaveLength(1);
    expect(policy.ingress[0]!.from.map((peer) => peer.podSelector.matchLabels['app.kubernetes.io/component'])).toEqual(['backup']);
    expect(policy.ingress[0]!.ports).toEqual([{ port: 2379 }]);
  });
});

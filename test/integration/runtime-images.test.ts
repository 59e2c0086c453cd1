// The runtime the images ship, read from the files that build and start them:
// Node.js 22 LTS in the Tally image (package.json's engines still admit the
// 20 the test machines run), one etcd 3.5 image for compose and Kubernetes,
// current Prometheus and Grafana in compose with tags pinned, and compose's
// Prometheus loading the alert rules (promtool checks the config with them).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { isPinnedImage, render } from '../helpers/kubernetes-kit.ts';

const read = (file: string): string => fs.readFileSync(path.join(repoRoot, file), 'utf8');
const baseImages = (dockerfile: string): string[] => [...read(dockerfile).matchAll(/^FROM (\S+)/gm)].map((match) => match[1]!);

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  volumes?: (string | { source?: string; target?: string })[];
}

function composeServices(): Record<string, ComposeService> {
  const normalized = execFileSync('docker-compose', ['-f', path.join(repoRoot, 'docker-compose.yml'), 'config'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return (parseYaml(normalized) as { services: Record<string, ComposeService> }).services;
}

const majorOf = (image: string): number => Number(/:v?(\d+)\./.exec(image)?.[1] ?? Number.NaN);

describe('runtime images', () => {
  it('every stage of the Dockerfile is Node.js 22 LTS; engines still admits Node.js 20', () => {
    const stages = baseImages('Dockerfile');
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const image of stages) expect(image).toMatch(/^node:22-bookworm-slim( |$)/);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe('>=20');
  });

  it('etcd: compose builds on the etcd 3.5 image the Kubernetes kit runs, pinned', () => {
    const kitImages = render('deploy/kubernetes/base')
      .filter((object) => object.metadata.name === 'tally-etcd' && object.kind === 'StatefulSet')
      .map((object) => object.spec!.template!.spec.containers[0]!.image);
    expect(kitImages).toHaveLength(1);
    expect(kitImages[0]).toMatch(/^quay\.io\/coreos\/etcd:v3\.5\.\d+$/);
    const composeEtcd = baseImages('deploy/etcd/Dockerfile').filter((image) => image.includes('etcd'));
    expect(composeEtcd).toEqual(kitImages);
  });

  it('compose: Prometheus 3 and Grafana 12 or later, pinned; Prometheus mounts rules.yml beside its config, which loads it', () => {
    const services = composeServices();
    const prometheus = services.prometheus!;
    const grafana = services.grafana!;
    for (const image of [prometheus.image!, grafana.image!]) expect(isPinnedImage(image), image).toBe(true);
    expect(majorOf(prometheus.image!)).toBeGreaterThanOrEqual(3);
    expect(majorOf(grafana.image!)).toBeGreaterThanOrEqual(12);
    const mounts = (prometheus.volumes ?? []).map((volume) =>
      typeof volume === 'string' ? volume.split(':').slice(0, 2) : [volume.source ?? '', volume.target ?? ''],
    );
    const target = (file: string): string | undefined =>
      mounts.find(([source]) => path.resolve(repoRoot, source!) === path.join(repoRoot, 'deploy/prometheus', file))?.[1];
    const configFlag = prometheus.command!.find((arg) => arg.startsWith('--config.file='))!.slice('--config.file='.length);
    expect(target('prometheus.yml')).toBe(configFlag);
    const config = parseYaml(read('deploy/prometheus/prometheus.yml')) as { rule_files?: string[] };
    expect(config.rule_files).toEqual(['rules.yml']);
    expect(target('rules.yml')).toBe(path.posix.join(path.posix.dirname(configFlag), 'rules.yml'));
    // promtool resolves rule_files as Prometheus does, beside the config, and checks every rule.
    const check = spawnSync('promtool', ['check', 'config', 'prometheus.yml'], {
      cwd: path.join(repoRoot, 'deploy/prometheus'),
      encoding: 'utf8',
    });
    const output = `${check.stdout}${check.stderr}`;
    expect(check.status, output).toBe(0);
    expect(output).toMatch(/SUCCESS: 1 rule files found/);
  });
});

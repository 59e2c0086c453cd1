// The on-call view as files: deploy/prometheus/rules.yml (the alert table of
// docs/operations.md as rules) checked and unit-tested by Prometheus's own
// promtool, and the Grafana dashboard as deploy/grafana/make-dashboard.py
// writes it (variables, a stat row first, a legend per query). That every
// metric the dashboard queries exists is operations.test.ts's check.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';

const rulesFile = path.join(repoRoot, 'deploy/prometheus/rules.yml');

/** Fails (never skips) without promtool: it comes with Debian's prometheus, which .ci/run installs. */
function promtool(args: string[]): { status: number | null; output: string } {
  const found = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  if (found.status !== 0)
    throw new Error(
      'promtool is not installed: it comes from the Debian package prometheus (apt-get install prometheus; .ci/run installs it)',
    );
  const run = spawnSync('promtool', args, { cwd: path.dirname(rulesFile), encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function ruleGroups(): { name: string; rules: Rule[] }[] {
  return (parseYaml(fs.readFileSync(rulesFile, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups;
}

function rules(): Rule[] {
  return ruleGroups().flatMap((group) => group.rules);
}

/** The anchors GitHub gives the headings of a Markdown file (lowercase, punctuation dropped, spaces to hyphens). */
function headingAnchors(file: string): Set<string> {
  const text = fs.readFileSync(path.join(repoRoot, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
      match[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

/** The rows of the table under `### What to alert on` in docs/operations.md: its first cell. */
function alertTableConditions(): string[] {
  const text = fs.readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
  const section = text.slice(text.indexOf('### What to alert on'));
  const table = section.slice(0, section.indexOf('\n\n', section.indexOf('|')));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| condition') && !line.startsWith('|---'))
    .map((line) => line.split(' | ')[0]!.slice(2));
}

/** Every metric the metric tables of docs/operations.md, docs/outbox.md (the relay's) and docs/regions.md (the links') list; a test elsewhere checks them against the processes. */
function documentedMetrics(): Set<string> {
  const rows = ['docs/operations.md', 'docs/outbox.md', 'docs/regions.md']
    .flatMap((file) => fs.readFileSync(path.join(repoRoot, file), 'utf8').split('\n'))
    .filter((line) => line.startsWith('| `tally_'));
  const names = rows.flatMap((row) => [...row.matchAll(/`(tally_[a-z0-9_]+)/g)].map((match) => match[1]!));
  return new Set(names.flatMap((name) => [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]));
}

/** Tally's metrics and etcd's (the etcd alerts): what a rule or an alert table row names. */
const metricsIn = (text: string): string[] => [...text.matchAll(/\b((?:tally|etcd)_[a-z0-9_]+)/g)].map((match) => match[1]!);

describe('prometheus rules and dashboard', () => {
  it('rules: promtool check rules accepts deploy/prometheus/rules.yml', () => {
    const { status, output } = promtool(['check', 'rules', rulesFile]);
    expect(output).toContain('SUCCESS');
    expect(status, output).toBe(0);
  });

  it('rules: promtool test rules passes rules.test.yml (what fires, what does not, and when)', () => {
    const { status, output } = promtool(['test', 'rules', 'rules.test.yml']);
    expect(status, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });

  it('rules: promtool test rules fails when an expectation is wrong (the unit tests can fail)', () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-rules-'));
    try {
      fs.copyFileSync(rulesFile, path.join(scratch, 'rules.yml'));
      const tests = fs.readFileSync(path.join(path.dirname(rulesFile), 'rules.test.yml'), 'utf8');
      // Pair 0 stays in sync: the alert the test expects never fires.
      const broken = tests.replace('values: "1 1 0x18"', 'values: "1x20"');
      expect(broken).not.toBe(tests);
      fs.writeFileSync(path.join(scratch, 'rules.test.yml'), broken);
      const run = spawnSync('promtool', ['test', 'rules', 'rules.test.yml'], { cwd: scratch, encoding: 'utf8' });
      expect(run.status).not.toBe(0);
      expect(`${run.stdout}${run.stderr}`).toContain('TallyPairOutOfSync');
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('rules: every metric of the alert table in docs/operations.md has a rule, and every rule names documented metrics', () => {
    const conditions = alertTableConditions();
    expect(conditions.length).toBeGreaterThan(15);
    const exprs = rules().map((rule) => rule.expr);
    const ruled = new Set(exprs.flatMap(metricsIn).map((name) => name.replace(/_(bucket|sum|count)$/, '')));
    for (const condition of conditions) {
      const named = condition.includes('up == 0') ? ['up'] : metricsIn(condition);
      expect(named.length, `alert table row "${condition}" names no metric`).toBeGreaterThan(0);
      for (const metric of named)
        expect(
          metric === 'up' ? exprs.some((expr) => /\bup\{/.test(expr)) : ruled.has(metric),
          `no rule uses ${metric} ("${condition}")`,
        ).toBe(true);
    }
    const documented = documentedMetrics();
    for (const metric of [...ruled].filter((name) => name.startsWith('tally_')))
      expect(documented.has(metric), `${metric} is in rules.yml but not in docs/operations.md, docs/outbox.md or docs/regions.md`).toBe(
        true,
      );
  });

  it('rules: every alert has a severity of page or ticket, a summary and a description; names are unique', () => {
    const all = rules();
    expect(new Set(all.map((rule) => rule.alert)).size).toBe(all.length);
    for (const rule of all) {
      expect(['page', 'ticket'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
    }
  });

  it('rules: every alert links its own runbook section in docs/operations.md by runbook_url, and the section exists', () => {
    const anchors = headingAnchors('docs/operations.md');
    expect(anchors.has('runbooks')).toBe(true);
    for (const rule of rules()) {
      expect(rule.annotations, rule.alert).not.toHaveProperty('runbook');
      const url = rule.annotations?.runbook_url ?? '';
      expect(url, rule.alert).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      expect(
        anchors.has(url.slice(url.indexOf('#') + 1)),
        `${rule.alert}: no heading in docs/operations.md gives #${url.split('#')[1]}`,
      ).toBe(true);
    }
    // The check sees a missing section: a heading that is not there has no anchor.
    expect(anchors.has('tallynosuchalert')).toBe(false);
  });

  it('rules: relay and etcd alerts exist, and promtool tests make each of them fire', () => {
    const groups = ruleGroups();
    const tests = parseYaml(fs.readFileSync(path.join(path.dirname(rulesFile), 'rules.test.yml'), 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const firing = new Set(
      tests.tests.flatMap((test) => (test.alert_rule_test ?? []).filter((one) => one.exp_alerts.length > 0).map((one) => one.alertname)),
    );
    for (const name of ['tally.relay', 'tally.etcd']) {
      const group = groups.find((one) => one.name === name);
      expect(group?.rules.length, name).toBeGreaterThanOrEqual(5);
      for (const rule of group!.rules) expect(firing.has(rule.alert), `${rule.alert}: no promtool test expects it to fire`).toBe(true);
    }
    const exprs = groups.flatMap((group) => group.rules.map((rule) => rule.expr)).join('\n');
    for (const metric of [
      'tally_relay_halted',
      'tally_relay_oldest_pending_age_seconds',
      'tally_relay_dead_letters_total',
      'etcd_server_has_leader',
    ])
      expect(exprs).toContain(metric);
  });

  it('rules: region link alerts (silent, lagging, down, refused) exist, and promtool tests make each of them fire', () => {
    const group = ruleGroups().find((one) => one.name === 'tally.regions');
    expect(group?.rules.map((rule) => rule.alert).sort()).toEqual([
      'TallyRegionLinkDown',
      'TallyRegionLinkRefused',
      'TallyRegionPeerLagging',
      'TallyRegionPeerSilent',
    ]);
    const tests = parseYaml(fs.readFileSync(path.join(path.dirname(rulesFile), 'rules.test.yml'), 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const checks = tests.tests.flatMap((test) => test.alert_rule_test ?? []);
    for (const rule of group!.rules) {
      expect(
        checks.some((one) => one.alertname === rule.alert && one.exp_alerts.length > 0),
        `${rule.alert} fires in a test`,
      ).toBe(true);
      expect(
        checks.some((one) => one.alertname === rule.alert && one.exp_alerts.length === 0),
        `${rule.alert} stays quiet in a test`,
      ).toBe(true);
    }
  });

  it("rules: the kit's copies (the ConfigMap file and the PrometheusRule) are what make-kit-rules.py writes from rules.yml", () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-kit-rules-'));
    try {
      fs.mkdirSync(path.join(scratch, 'prometheus'));
      fs.mkdirSync(path.join(scratch, 'kubernetes/base/monitoring'), { recursive: true });
      fs.mkdirSync(path.join(scratch, 'kubernetes/components/prometheus-operator'), { recursive: true });
      for (const file of ['make-kit-rules.py', 'rules.yml'])
        fs.copyFileSync(path.join(repoRoot, 'deploy/prometheus', file), path.join(scratch, 'prometheus', file));
      execFileSync('python3', [path.join(scratch, 'prometheus/make-kit-rules.py')]);
      for (const file of ['base/monitoring/rules.yml', 'components/prometheus-operator/prometheus-rule.yaml'])
        expect(
          fs.readFileSync(path.join(repoRoot, 'deploy/kubernetes', file), 'utf8'),
          `run deploy/prometheus/make-kit-rules.py and commit deploy/kubernetes/${file}`,
        ).toBe(fs.readFileSync(path.join(scratch, 'kubernetes', file), 'utf8'));
      const rule = parseYaml(
        fs.readFileSync(path.join(scratch, 'kubernetes/components/prometheus-operator/prometheus-rule.yaml'), 'utf8'),
      ) as {
        kind: string;
        spec: unknown;
      };
      expect(rule.kind).toBe('PrometheusRule');
      expect(rule.spec).toEqual(parseYaml(fs.readFileSync(rulesFile, 'utf8')));
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('dashboard: tally.json is what make-dashboard.py writes, with variables, a stat row first and a legend per query', () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-dashboard-'));
    try {
      fs.copyFileSync(path.join(repoRoot, 'deploy/grafana/make-dashboard.py'), path.join(scratch, 'make-dashboard.py'));
      fs.mkdirSync(path.join(scratch, 'dashboards'));
      execFileSync('python3', [path.join(scratch, 'make-dashboard.py')]);
      const committed = fs.readFileSync(path.join(repoRoot, 'deploy/grafana/dashboards/tally.json'), 'utf8');
      expect(committed, 'run deploy/grafana/make-dashboard.py and commit tally.json').toBe(
        fs.readFileSync(path.join(scratch, 'dashboards/tally.json'), 'utf8'),
      );
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
    interface Panel {
      type: string;
      title: string;
      fieldConfig?: { defaults: { thresholds: { steps: { color: string; value: number | null }[] } } };
      gridPos: { y: number };
      targets: { expr: string; legendFormat?: string }[];
    }
    const dashboard = JSON.parse(fs.readFileSync(path.join(repoRoot, 'deploy/grafana/dashboards/tally.json'), 'utf8')) as {
      templating: { list: { name: string }[] };
      panels: Panel[];
    };
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(['datasource', 'job', 'instance', 'pair']);
    const topRow = dashboard.panels.filter((panel) => panel.gridPos.y === 0);
    expect(topRow.length).toBeGreaterThanOrEqual(5);
    expect(topRow.every((panel) => panel.type === 'stat')).toBe(true);
    expect(topRow.map((panel) => panel.title)).toEqual(
      expect.arrayContaining(['Pairs out of sync', 'Supervisor', 'Least disk free', 'Refused calls/s', 'Increment errors/s by code']),
    );
    // A stat's colour is the last threshold step at or below its value: one pair of two out of sync is red, none is green.
    const colorAt = (title: string, value: number): string => {
      const panel = dashboard.panels.find((one) => one.title === title)!;
      const steps = panel.fieldConfig!.defaults.thresholds.steps;
      return steps.filter((step) => step.value === null || step.value <= value).pop()!.color;
    };
    for (const title of ['Pairs out of sync', 'Processes down']) {
      expect(dashboard.panels.find((one) => one.title === title)!.targets, title).toHaveLength(1);
      expect(colorAt(title, 0), `${title} at 0`).toBe('green');
      expect(colorAt(title, 1), `${title} at 1`).toBe('red');
    }
    expect(dashboard.panels.find((one) => one.title === 'Pairs out of sync')!.targets[0]!.expr).toMatch(
      /tally_pair_in_sync\{.*== 0\) or vector\(0\)$/,
    );
    expect(dashboard.panels.filter((panel) => panel.type === 'row').map((panel) => panel.title)).toEqual([
      'Traffic and latency',
      'Replication',
      'Disk and log',
      'Processes',
    ]);
    for (const panel of dashboard.panels.filter((one) => one.type !== 'row')) {
      const legends = panel.targets.map((target) => target.legendFormat ?? '');
      expect(
        legends.every((legend) => legend !== ''),
        `${panel.title}: every query has a legend`,
      ).toBe(true);
      expect(new Set(legends).size, `${panel.title}: legends tell the queries apart (p50 vs p99)`).toBe(legends.length);
      for (const target of panel.targets)
        if (/tally_/.test(target.expr)) expect(target.expr, `${panel.title}: filtered by the variables`).toMatch(/\$job/);
    }
  });
});

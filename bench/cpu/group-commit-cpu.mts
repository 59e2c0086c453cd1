// Group commit's CPU per item (staging, the log append, applying to memory)
// with a real ShardLog in a temp dir: 400 groups of 25 increments per flush,
// every fifth keyed, every seventh with a window. CPU time (user + system),
// not wall time, so a busy machine moves it less. The tree to measure is an
// argument, so an A/B can point it at an older checkout.
// node --import tsx bench/cpu/group-commit-cpu.mts [rounds=15] [tree=this repository]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
const rounds = Number(process.argv[2] ?? 15);
const root = path.resolve(process.argv[3] ?? path.join(import.meta.dirname, '../..'));
const gc = fs.existsSync(path.join(root, 'src/node/write/group-commit.ts')) ? 'src/node/write/group-commit.ts' : 'src/node/group-commit.ts';
const { GroupCommitter } = await import(path.join(root, gc));
const { ShardLog } = await import(path.join(root, 'src/node/log/index.ts'));
const { NodeMemory, DedupIndex, checkpointFolder } = await import(path.join(root, 'src/node/state/index.ts'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stage-bench-'));
const log = ShardLog.open(dir, checkpointFolder);
const memory = new NodeMemory();
const dedup = new DedupIndex(60_000);
const role = { role: 'primary', epoch: 1n, peer: '', syncRequired: false, epochStartLsn: 0n, configVersion: 0n };
let nowMs = 1_000_000;
const committer = new GroupCommitter(
  log,
  memory,
  () => role,
  dedup,
  { onCommit: () => undefined, waitForFollower: () => Promise.resolve() },
  () => nowMs,
);
const groupsPerFlush = 400;
const itemsPerGroup = 25;
let keySeq = 0;
const results: number[] = [];
for (let round = 0; round < rounds; round++) {
  const groups = [];
  for (let g = 0; g < groupsPerFlush; g++) {
    const group = [];
    for (let i = 0; i < itemsPerGroup; i++) {
      const keyed = i % 5 === 0;
      group.push({
        shardId: 1 + ((g * itemsPerGroup + i) % 5000),
        amount: 1n,
        idempotencyKey: keyed ? Buffer.from(`k${keySeq++}`) : Buffer.alloc(0),
        fenceShardCount: 0,
        fence: false,
        routedShardCount: 1,
        op: 'increment',
        window: i % 7 === 0 ? { bucketMs: 60_000, retentionMs: 3_600_000 } : undefined,
      });
    }
    groups.push(group);
  }
  nowMs += 10;
  const started = process.cpuUsage();
  await committer.submit(groups, 1n);
  const used = process.cpuUsage(started);
  results.push((used.user + used.system) / (groupsPerFlush * itemsPerGroup));
}
log.close();
fs.rmSync(dir, { recursive: true, force: true });
const sorted = results.slice(2).sort((a, b) => a - b);
console.log(JSON.stringify({ root, medianCpuUsPerItem: sorted[Math.floor(sorted.length / 2)]!.toFixed(3) }));

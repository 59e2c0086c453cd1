// The floor for any gRPC service on this machine: a bare grpc-js server
// answering a trivial unary call, driven like `tally bench` drives Tally.
//   node --import tsx bench/cpu/grpc-echo.mts serve <port>      (0: any port; prints "ready <port>")
//   node --import tsx bench/cpu/grpc-echo.mts drive <port> <concurrency> <seconds> [ratePerSec]   (prints calls/s as JSON)
//   node --import tsx bench/cpu/grpc-echo.mts drive-client <port> <concurrency> <seconds> [ratePerSec]
//     the same loops through Tally's client (createTallyClient().increment, unkeyed, as
//     `tally bench --batch 1` calls it) against the echo's CounterService.Increment, which
//     answers at once: the client library's CPU per call beside the bare grpc-js call's.
//     TALLY_CLIENT=<path to src/client/index.ts> drives another worktree's client.
// A rate paces the calls as `tally bench --rate` does (each loop its share,
// timed from when a call was due), so the echo and Tally can be compared at
// the same paced rate: a process's CPU per call depends on its call rate.
import * as grpc from '@grpc/grpc-js';
import type * as TallyClientModule from '../../src/client/index.ts';
import { counterServiceDefinition, shardNodeServiceDefinition, ShardNodeClient } from '../../src/common/index.ts';

const [mode, portText, concurrencyText, secondsText, rateText] = process.argv.slice(2);
const port = Number(portText);

if (mode === 'serve') {
  const server = new grpc.Server();
  const unimplemented = (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback({ code: grpc.status.UNIMPLEMENTED });
  server.addService(shardNodeServiceDefinition, {
    Status: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, { role: 'echo', pid: process.pid }),
    Apply: unimplemented,
    ReadShards: unimplemented,
    SetRole: unimplemented,
    AppendEntries: unimplemented,
    Reconcile: unimplemented,
  });
  // Only Increment: the other methods answer UNIMPLEMENTED (grpc-js's default).
  server.addService(counterServiceDefinition, {
    Increment: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, { applied: true, shard: 0 }),
  });
  // Port 0 takes one the kernel picks: the ready line names the port bound.
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, boundPort) => {
    if (error) throw error;
    console.log(`ready ${boundPort}`);
  });
} else if (mode === 'drive' || mode === 'drive-client') {
  let call: () => Promise<unknown>;
  let close: () => void;
  if (mode === 'drive') {
    const client = new ShardNodeClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as {
      Status(request: object, callback: (error: unknown) => void): void;
      close(): void;
    };
    call = () => new Promise<void>((resolve, reject) => client.Status({}, (error) => (error ? reject(error) : resolve())));
    close = () => client.close();
  } else {
    const clientModule = (await import(process.env.TALLY_CLIENT ?? '../../src/client/index.ts')) as typeof TallyClientModule;
    const client = clientModule.createTallyClient({ addresses: [`127.0.0.1:${port}`], deadlineMs: 10_000 });
    call = () => client.increment('echo', 1, { idempotencyKey: null });
    close = () => client.close();
  }
  await call();
  let calls = 0;
  const concurrency = Number(concurrencyText);
  const ratePerSec = Number(rateText ?? 0);
  // Each loop's share of the target rate, as bench.ts paces its loops.
  const loopIntervalMs = ratePerSec > 0 ? (concurrency * 1000) / ratePerSec : 0;
  const startedMs = performance.now();
  const untilMs = startedMs + Number(secondsText) * 1000;
  const startedCpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      for (let sent = 0; ; sent++) {
        if (loopIntervalMs > 0) {
          const waitMs = startedMs + (sent + loop / concurrency) * loopIntervalMs - performance.now();
          if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        }
        if (performance.now() >= untilMs) return;
        await call();
        calls++;
      }
    }),
  );
  const cpu = process.cpuUsage(startedCpu);
  // cpuMicros: the driver's CPU over the calls alone (not its start), as tally bench's loadGeneratorCpuSeconds.
  console.log(
    JSON.stringify({
      callsPerSec: Math.round((calls * 1000) / (performance.now() - startedMs)),
      calls,
      cpuMicros: cpu.user + cpu.system,
    }),
  );
  close();
} else {
  console.error('usage: grpc-echo.mts serve <port> | drive|drive-client <port> <concurrency> <seconds> [ratePerSec]');
  process.exit(2);
}

// The floor for any gRPC service on this machine: a bare grpc-js server
// answering a trivial unary call, driven like `tally bench` drives Tally.
//   node --import tsx bench/grpc-echo.mts serve <port>      (0: any port; prints "ready <port>")
//   node --import tsx bench/grpc-echo.mts drive <port> <concurrency> <seconds>   (prints calls/s as JSON)
import * as grpc from '@grpc/grpc-js';
import { shardNodeServiceDefinition, ShardNodeClient } from '../src/common/index.ts';

const [mode, portText, concurrencyText, secondsText] = process.argv.slice(2);
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
  // Port 0 takes one the kernel picks: the ready line names the port bound.
  server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, boundPort) => {
    if (error) throw error;
    console.log(`ready ${boundPort}`);
  });
} else if (mode === 'drive') {
  const client = new ShardNodeClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as {
    Status(request: object, callback: (error: unknown) => void): void;
    close(): void;
  };
  const call = () => new Promise<void>((resolve, reject) => client.Status({}, (error) => (error ? reject(error) : resolve())));
  await call();
  let calls = 0;
  const untilMs = Date.now() + Number(secondsText) * 1000;
  const startedMs = Date.now();
  await Promise.all(
    Array.from({ length: Number(concurrencyText) }, async () => {
      while (Date.now() < untilMs) {
        await call();
        calls++;
      }
    }),
  );
  console.log(JSON.stringify({ callsPerSec: Math.round((calls * 1000) / (Date.now() - startedMs)) }));
  client.close();
} else {
  console.error('usage: grpc-echo.mts serve <port> | drive <port> <concurrency> <seconds>');
  process.exit(2);
}

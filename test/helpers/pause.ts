// A pause for pacing (a writer's rhythm, a fault schedule, a backoff, a
// window or lease waited out); to wait for a state, use waitFor (cluster.ts).
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

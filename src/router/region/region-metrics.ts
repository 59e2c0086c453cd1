// The metrics of the links between regions, one series per peer region
// (a bounded set: --peer-regions), named in docs/regions.md.
import { Counter, Gauge, type Registry } from 'prom-client';

export function createRegionMetrics(registry: Registry) {
  return {
    componentsPending: new Gauge({
      name: 'tally_region_components_pending',
      help: "This region's changed components not yet acknowledged by the peer region",
      labelNames: ['peer'],
      registers: [registry],
    }),
    lagSeconds: new Gauge({
      name: 'tally_region_lag_seconds',
      help: 'Seconds since the newest component from the peer region was applied here (-1 until one is)',
      labelNames: ['peer'],
      registers: [registry],
    }),
    linkUp: new Gauge({
      name: 'tally_region_link_up',
      help: '1 while the stream to the peer region is open and answering, else 0',
      labelNames: ['peer'],
      registers: [registry],
    }),
    bytes: new Counter({
      name: 'tally_region_bytes_total',
      help: 'Component bytes sent to and received from the peer region',
      labelNames: ['peer', 'direction'],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'tally_region_errors_total',
      help: 'Link failures with the peer region, by reason (connect, refused, stream, apply)',
      labelNames: ['peer', 'reason'],
      registers: [registry],
    }),
    componentsUnpacked: new Counter({
      name: 'tally_region_components_unpacked_total',
      help: 'Components from the peer region stored one log entry each because a primary refused their packed entry (its follower one release older or not answering, or a counter deleted meanwhile)',
      labelNames: ['peer'],
      registers: [registry],
    }),
    componentsApplied: new Counter({
      name: 'tally_region_components_applied_total',
      help: 'Components from the peer region that moved a stored component forward',
      labelNames: ['peer'],
      registers: [registry],
    }),
  };
}

export type RegionMetrics = ReturnType<typeof createRegionMetrics>;

// One router's part in a multi-region setup, built from its configuration:
// the publisher (a supervisor duty: one per region), a link per peer region,
// the RegionLink receiver and the global reader. Wiring only; each decision
// is its module's.
import type { Registry } from 'prom-client';
import { IntervalTask, type Logger, type PeerRegion, type TlsMaterial, type counterV1 } from '../../common/index.ts';
import type { Directory } from '../directory/index.ts';
import type { NodePool } from '../nodes/index.ts';
import type { ReadPath } from '../read/index.ts';
import { ComponentStore, type ClearUpTo, type DeleteUpTo } from './component-store.ts';
import { GlobalDistinctReader } from './global-distinct.ts';
import { GlobalReader } from './global-reader.ts';
import { PeerLink } from './peer-link.ts';
import { createRegionMetrics } from './region-metrics.ts';
import { RegionPublisher, ShardFeed, TombstoneSource, isPublishable, type SketchReads, type TermSource } from './publish/index.ts';
import { RegionReceiver } from './region-receiver.ts';

export interface RegionSettings {
  region: string;
  peerRegions: PeerRegion[];
  regionPublishIntervalMs: number;
  readTimeoutMs: number;
  tls: TlsMaterial | undefined;
  adminToken: string | undefined;
}

export interface Regions {
  /** '' when the cluster runs alone (no --region). */
  readonly region: string;
  readonly publisher: RegionPublisher;
  /** Deleted names the publisher ships as tombstones: mark() one deleted through this router. */
  readonly tombstones: TombstoneSource;
  readonly receiver: RegionReceiver;
  readonly globalReader: GlobalReader;
  /** CountDistinct with SCOPE_GLOBAL; undefined when the router was built without distinct reads. */
  readonly globalDistinct: GlobalDistinctReader | undefined;
  /** Each peer region as tally status shows it. */
  peerStatus(): counterV1.PeerRegionStatus__Output[];
  start(): void;
  stop(): void;
}

export function createRegions(
  settings: RegionSettings,
  parts: {
    directory: Directory;
    pool: NodePool;
    reads: ReadPath;
    registry: Registry;
    logger: Logger;
    termSource: TermSource;
    clearUpTo: ClearUpTo;
    /** A peer region deleted a name: this region deletes its counter at its own cut. */
    deleteUpTo: DeleteUpTo;
    /** Distinct counters' unions: published and read globally by register maximum. */
    sketches?: SketchReads;
  },
): Regions {
  const metrics = createRegionMetrics(parts.registry);
  const store = new ComponentStore(parts.directory, parts.pool, settings.readTimeoutMs, parts.clearUpTo, parts.deleteUpTo);
  const tombstones = new TombstoneSource(settings.region, parts.directory);
  const links: PeerLink[] = [];
  const publisher = new RegionPublisher(
    settings.region,
    parts.directory,
    parts.reads,
    links,
    parts.termSource,
    parts.logger,
    settings.regionPublishIntervalMs,
    new ShardFeed(parts.directory, parts.pool, settings.readTimeoutMs, isPublishable, parts.logger),
    parts.sketches,
    tombstones,
  );
  for (const peer of settings.peerRegions)
    links.push(
      new PeerLink(
        { ownRegion: settings.region, peer, tls: settings.tls, adminToken: settings.adminToken },
        publisher,
        metrics,
        parts.logger,
      ),
    );
  const receiver = new RegionReceiver(
    settings.region,
    new Set(settings.peerRegions.map((peer) => peer.name)),
    store,
    metrics,
    parts.logger,
  );
  // eslint-disable-next-line no-restricted-properties -- staleness of a part is shown to readers against the origin's as_of_unix_ms (both wall clocks)
  const wallNowMs = (): number => Date.now();
  const globalReader = new GlobalReader(
    settings.region,
    parts.directory,
    parts.reads,
    store,
    (origin) => receiver.progress.get(origin),
    wallNowMs,
  );
  const gauges = new IntervalTask({ name: 'region gauges', intervalMs: 1_000, logger: parts.logger }, () => receiver.refreshLagGauges());
  return {
    region: settings.region,
    publisher,
    tombstones,
    receiver,
    globalReader,
    globalDistinct: parts.sketches === undefined ? undefined : new GlobalDistinctReader(parts.directory, parts.sketches, store),
    peerStatus() {
      // Only the supervising router publishes: the others' links are on standby.
      return links.map((link) => ({
        ...link.status(),
        ...(publisher.isActive ? {} : { link: 'standby' }),
        lagSeconds: receiver.lagSeconds(link.peerName),
      }));
    },
    start() {
      gauges.start();
    },
    stop() {
      gauges.stop();
    },
  };
}

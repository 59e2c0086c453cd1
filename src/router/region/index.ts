// Regions (docs/regions.md): publishing this region's components, receiving
// the peers', and reads with SCOPE_GLOBAL.
export { createRegions, type RegionSettings, type Regions } from './regions.ts';
export { RegionPublisher, fileTermSource, isPublishable, revisionTermSource, type TermSource } from './publish/index.ts';
export { GlobalReader, refuseGlobalRead, type GlobalRead, type RegionPartRead } from './global-reader.ts';
export { RegionReceiver } from './region-receiver.ts';
export { ComponentStore, type ClearUpTo } from './component-store.ts';
export { PeerLink } from './peer-link.ts';
export { GlobalDistinctReader, type GlobalDistinctCount } from './global-distinct.ts';

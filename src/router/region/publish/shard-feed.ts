// Where the region publisher's totals come from: one ChangedShards call per
// pair per round, each answering the totals of the shards changed since the
// position that pair's node last gave (every shard, once, after a node
// restart, a failover or a position the node no longer knows). Single-shard
// counters are published from the shard's total; a counter with several
// shards is named for an exact read (one cut over all its shards). It only
// reads: it never writes to this region's nodes or directory.
import { decodeShardColumns, type ShardColumns } from '../../../wire/internal/index.ts';
import {
  regionFeedCallsPerRoundMax,
  regionFeedShardsMax,
  regionFloorCountersMax,
  regionFullSweepRounds,
  type Logger,
  type shardV1,
} from '../../../common/index.ts';
import type { CounterInfo, PairInfo } from '../../directory/index.ts';
import { readPairWithFallback } from '../../read/index.ts';
import { ShardIndex } from './shard-index.ts';

/** Rounds between two rebuilds of the shard index that unknown shard ids ask for. */
const indexRebuildRoundsMin = 4;

export interface FeedDirectory {
  liveCounters(options?: { reuseHandle?: boolean }): IterableIterator<CounterInfo>;
  get(name: string): CounterInfo | undefined;
  allPairs(): readonly PairInfo[];
}

export interface FeedNodes {
  read<Request, Response>(address: string, method: 'ChangedShards', request: Request, timeoutMs: number): Promise<Response>;
}

/** A counter's total as the feed read it, at its generation. */
export interface FedTotal {
  counter: string;
  total: bigint;
  generation: number;
}

export interface FeedRound {
  totals: FedTotal[];
  /** Counters to read exactly this round (several shards, or found late). */
  exactNames: Set<string>;
  /** Every pair answered up to its newest position: the round saw every change made before it began. */
  complete: boolean;
}

/** Where this router stands in one pair's feed. */
interface FeedPosition {
  feedId: string;
  seq: number;
  /** A full answer under way: the next page starts after this shard id (0: none under way). */
  fullAfter: number;
}

export class ShardFeed {
  private readonly positions = new Map<number, FeedPosition>();
  private index = new ShardIndex();
  private round = 0;
  private indexBuiltRound = Number.NEGATIVE_INFINITY;
  /** Shard ids a feed named that no counter of the directory held then, to the round they were first seen. */
  private readonly unmapped = new Map<number, number>();

  constructor(
    private readonly directory: FeedDirectory,
    private readonly nodes: FeedNodes,
    private readonly readTimeoutMs: number,
    private readonly isPublishable: (counter: CounterInfo) => boolean,
    private readonly logger: Logger,
  ) {}

  /** A new tenure: every pair is read in full again, the index built anew. */
  reset(): void {
    this.positions.clear();
    this.index = new ShardIndex();
    this.round = 0;
    this.indexBuiltRound = Number.NEGATIVE_INFINITY;
    this.unmapped.clear();
  }

  /**
   * One round. `written`: counters written or cleared through this router
   * since the last round (indexed now, so their shards map at once);
   * `publishedGeneration`: the generation last published for a counter, so
   * a clear whose shards have not applied it yet is read exactly.
   */
  async collect(written: Iterable<string>, publishedGeneration: (name: string) => number | undefined): Promise<FeedRound> {
    this.round++;
    if (this.round === 1) this.rebuildIndex();
    const exactNames = new Set<string>();
    for (const name of written) {
      const counter = this.directory.get(name);
      if (counter === undefined || !this.isPublishable(counter) || counter.shards.length === 0) continue;
      if (this.index.nameOf(counter.shards[0]!.shardId) !== name)
        this.index.add(
          name,
          counter.shards.map((shard) => shard.shardId),
        );
      const published = publishedGeneration(name);
      if (published !== undefined && counter.generation > published) exactNames.add(name);
    }
    const pairs = this.directory.allPairs();
    const answers = await Promise.all(pairs.map((pair) => this.pollPair(pair)));
    let complete = answers.every((answer) => answer.complete);
    const totals: FedTotal[] = [];
    for (const { pages } of answers)
      for (const columns of pages)
        for (let index = 0; index < columns.shardIds.length; index++) {
          const shardId = columns.shardIds[index]!;
          const name = this.index.nameOf(shardId);
          const fed = name === undefined ? 'unmapped' : this.take(name, shardId, columns.totals[index]!, columns.generations[index]!);
          if (fed === 'unmapped') {
            if (this.unmapped.size >= regionFloorCountersMax) complete = false;
            else if (!this.unmapped.has(shardId)) this.unmapped.set(shardId, this.round);
          } else if (fed === 'exact') exactNames.add(name!);
          else if (fed !== undefined) totals.push(fed);
        }
    this.mapLate(exactNames);
    return { totals, exactNames, complete };
  }

  /** A shard's total as its counter's, or 'exact' (several shards), 'unmapped' (not its counter's), undefined (not published). */
  private take(name: string, shardId: number, total: bigint, generation: number): FedTotal | 'exact' | 'unmapped' | undefined {
    const counter = this.directory.get(name);
    if (counter === undefined || !counter.shards.some((shard) => shard.shardId === shardId)) return 'unmapped';
    if (!this.isPublishable(counter)) return undefined;
    if (counter.shards.length > 1) return 'exact';
    // A shard behind the counter's clear reads as cleared (as an exact read tags it); one ahead of this router's directory wins.
    return {
      counter: name,
      total: generation < counter.generation ? 0n : total,
      generation: Math.max(generation, counter.generation),
    };
  }

  /** Shards no counter held when they were fed: once the index knows them, their counters are read exactly. */
  private mapLate(exactNames: Set<string>): void {
    if (this.unmapped.size === 0) return;
    if (this.round - this.indexBuiltRound >= indexRebuildRoundsMin) this.rebuildIndex();
    for (const [shardId, firstRound] of this.unmapped) {
      const name = this.index.nameOf(shardId);
      const counter = name === undefined ? undefined : this.directory.get(name);
      if (counter !== undefined && counter.shards.some((shard) => shard.shardId === shardId)) {
        if (this.isPublishable(counter)) exactNames.add(counter.name);
        this.unmapped.delete(shardId);
      } else if (this.round - firstRound > regionFullSweepRounds) {
        // A deleted counter's shard (its drop was the change): nothing to publish.
        this.unmapped.delete(shardId);
      }
    }
  }

  private rebuildIndex(): void {
    const index = new ShardIndex();
    for (const counter of this.directory.liveCounters())
      if (this.isPublishable(counter))
        index.add(
          counter.name,
          counter.shards.map((shard) => shard.shardId),
        );
    this.index = index;
    this.indexBuiltRound = this.round;
  }

  /** One pair's changes since its position: up to regionFeedCallsPerRoundMax calls; complete when it answered everything. */
  private async pollPair(pair: PairInfo): Promise<{ pages: ShardColumns[]; complete: boolean }> {
    const pages: ShardColumns[] = [];
    for (let call = 0; call < regionFeedCallsPerRoundMax; call++) {
      const position = this.positions.get(pair.pairIndex) ?? { feedId: '', seq: 0, fullAfter: 0 };
      let response: shardV1.ChangedShardsResponse__Output;
      try {
        ({ response } = await readPairWithFallback(pair, (address) =>
          this.nodes.read<shardV1.ChangedShardsRequest, shardV1.ChangedShardsResponse__Output>(
            address,
            'ChangedShards',
            {
              feedId: position.feedId,
              sinceSeq: String(position.seq),
              shardsMax: regionFeedShardsMax,
              fullAfterShardId: String(position.fullAfter),
            },
            this.readTimeoutMs,
          ),
        ));
        pages.push(decodeShardColumns(response));
      } catch (error) {
        // Its changes wait for a later round: the position stays where the last answer left it.
        this.logger.debug('region feed read failed', { pair: pair.pairIndex, error: (error as Error).message });
        return { pages, complete: false };
      }
      this.positions.set(pair.pairIndex, nextPosition(position, response, pages.at(-1)!));
      if (!response.more) return { pages, complete: true };
    }
    return { pages, complete: false };
  }
}

/** Where the next call starts: after this answer's changes, or after this page of a full answer. */
export function nextPosition(position: FeedPosition, response: shardV1.ChangedShardsResponse__Output, page: ShardColumns): FeedPosition {
  const seq = Number(response.seq);
  if (!response.full) return { feedId: response.feedId, seq, fullAfter: 0 };
  const lastShardId = page.shardIds.length > 0 ? page.shardIds[page.shardIds.length - 1]! : 0;
  // A full answer resumes, once its last page is in, from where its first page was taken.
  const firstPage = response.feedId !== position.feedId || Number(response.fullAfterShardId) === 0;
  return { feedId: response.feedId, seq: firstPage ? seq : position.seq, fullAfter: response.more ? lastShardId : 0 };
}

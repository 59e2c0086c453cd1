// Membership: who is in a set of unsigned 64-bit member ids, and which
// partition each id belongs to. Import from here, not from the files.
export { MemberSet, partitionOf, parseMemberId } from './member-set.ts';

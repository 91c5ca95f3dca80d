/** The first words of every compaction summary (the `compaction` stream), so any reader of a
 *  conversation — a model, an offline procedure — can tell a summary from a person's message. */
export const SUMMARY_PREFIX = '[summary of earlier turns';

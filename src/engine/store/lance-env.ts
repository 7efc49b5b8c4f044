/**
 * LanceDB's native logger prints warnings such as "No existing dataset at …" on stderr, which
 * would mix with the CLI's own output. It reads LANCEDB_LOG once, when first used: quiet it
 * unless the user asked for something else.
 */
process.env.LANCEDB_LOG ??= 'error';

//! Import of foreign transcripts (Claude Code, Codex, pi) into journal-v1 records in memory.

//! OpenCode and Kilo CLI stores → journal-v1 records: the SQLite `opencode.db` (OpenCode ≥ 1.2,
//! also `opencode-<channel>.db`) and `kilo.db` (Kilo CLI, the same drizzle schema), one session
//! of the store per import (`store.db#<session id>`; a store holding one main session opens it).
//!
//! The store is opened **read-only** and never written beside: with no `-wal` file it is opened
//! `immutable` (no `-shm` is created); with one (a running OpenCode), the database and its `-wal`
//! are copied to a temporary folder and read there, so the pages the writer has not checkpointed
//! are seen and the user's folder stays as it was.
//!
//! Schema (`packages/opencode/src/session/session.sql.ts` and `message-v2.ts` of
//! anomalyco/opencode @ v1.2.10; v1.16 and Kilo 7.0 have the same tables): `session(id,
//! parent_id, title, version, …)`, `message(id, session_id, time_created, data)` with `data` =
//! `MessageV2.Info` minus its ids, `part(id, message_id, session_id, data)` with `data` = the part.
//! Message and part ids ascend with time, so rows are read ordered by id.
//!
//! * user message → `user` (text parts that are not `ignored`, synthetic ones included: they are
//!   sent); a `compaction` part → `compact` (below); `file`, `subtask`, `agent` parts are counted
//!   as unrepresented;
//! * assistant message → one `assistant` per LLM step (parts between `step-start`s; a message
//!   without step parts is one step): `text` parts → text, `tool` parts → calls (`callID`, `tool`,
//!   `state.input`) and after the assistant one `result` each — `completed` → `state.output`,
//!   `error` → `state.error` (`is_error`), `pending`/`running` → `[Tool execution was
//!   interrupted]` (`is_error`), as `toModelMessages` sends them; `reasoning` is unrepresented.
//!   Usage from the step's `step-finish.tokens` (else the message's `tokens`): OpenCode's `input`
//!   excludes the cache, so prompt = `input + cache.read + cache.write`, cached = `cache.read`,
//!   cache write = `cache.write`, completion = `output + reasoning`. A message with an `error`
//!   and no content was never answered and is skipped;
//! * compaction: `SessionCompaction.create` writes a user message holding one `compaction` part
//!   (`auto`), then the summarisation call an assistant message with `summary: true` whose
//!   `parentID` is that user message. Together they become one `compact` whose summary is the
//!   summary message's text; nothing before is kept (v1.2.10), or the tail from
//!   `tail_start_id` on where a later OpenCode recorded one. The summarisation call is not a turn
//!   of the conversation (its request is the old history plus OpenCode's summary prompt) and is
//!   counted in the report;
//! * prune: `SessionCompaction.prune` sets `state.time.compacted` on old completed tool parts,
//!   after which OpenCode sends `[Old tool result content cleared]` instead of the output. Each
//!   prune (one timestamp) becomes an `elide` by `auto` of those results (a harness decision,
//!   not the model's `ctx clear`, which a `clear` record would claim), placed before the first
//!   step that started after it; the elision marker (journal-v1 §5) stands in for OpenCode's
//!   placeholder text, a few tokens apart.
//!
//! The system prompt (`agent.prompt` or the provider's, plus `system` fields) and the tool schemas
//! are not stored: both are reported missing and the replay estimates the prefix.

//! The module holds the store (`store.rs`: opening, listing and reading one session's rows),
//! OpenCode's legacy `storage/` JSON tree (`legacy.rs`, before 1.2: one session file, its
//! message and part files), and the messages → records rules both share (`messages.rs`).

mod legacy;
mod messages;
mod store;

use std::io::Read;
use std::path::Path;

pub use legacy::is_session as is_legacy_session;
pub use store::{has_store_tables, is_store, part_spec, sessions, StoreSession};

use super::{ImportError, Imported};

/// Imports one session: of the SQLite store at `path` (session `part`, else its only main
/// session), or of the legacy session file at `path`.
pub fn read(path: &Path, part: Option<&str>) -> Result<Imported, ImportError> {
    let mut head = [0u8; 16];
    let sqlite = crate::journal::input::open_regular(path)
        .ok()
        .and_then(|(mut f, _)| f.read_exact(&mut head).ok())
        .is_some_and(|()| head == *b"SQLite format 3\0");
    if sqlite {
        store::read(path, part)
    } else {
        legacy::read(path, part)
    }
}

//! Why a request does not start with the whole previous one: the block named ([`BlockRef`]) and
//! the one-line explanation both `cache`'s simulated breaks and the recorded `prefix_change`
//! cause give ([`explain`], from the diff engine's [`Cause`]).

use crate::projection::diff::Cause;
use crate::projection::Block;
use crate::strategy::Origin;

/// A block named for reports: its type, its id and how the strategy produced it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BlockRef {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// [`Origin::describe`] of the block in its request.
    pub origin: String,
}

impl BlockRef {
    pub(crate) fn of(b: &Block, o: Option<&Origin>) -> BlockRef {
        BlockRef {
            kind: b.type_name(),
            id: b.id().map(str::to_string),
            origin: o.map(Origin::describe).unwrap_or_else(|| "verbatim".into()),
        }
    }
}

impl std::fmt::Display for BlockRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.id {
            Some(id) => write!(f, "{} {}", self.kind, id),
            None => f.write_str(self.kind),
        }
    }
}

/// Explains why the current request does not start with the whole previous one, at block `i`
/// (`was`: the previous request's block there; `prev_len`: its length).
pub(crate) fn explain(
    was: &BlockRef,
    cause: Cause,
    prev_len: usize,
    cur: &[Block],
    cur_origins: &[Origin],
    i: usize,
) -> String {
    // The origin says something only when the strategy changed the block and its type does not
    // already say it ("summary (summary)").
    let tagged = |b: &BlockRef| {
        if b.origin == "verbatim" || b.origin == b.kind {
            b.to_string()
        } else if b.id.is_none() && b.origin.starts_with(b.kind) {
            b.origin.clone()
        } else {
            format!("{b} ({})", b.origin)
        }
    };
    let now = || BlockRef::of(&cur[i], cur_origins.get(i));
    match cause {
        Cause::Ended => format!(
            "request ends before block {}: {was} and the {} block(s) after it are gone",
            i + 1,
            prev_len - i - 1
        ),
        Cause::Rewritten => format!("{}: content changed", tagged(&now())),
        Cause::Moved => format!("{was} moved; {} stands here now", tagged(&now())),
        Cause::Dropped => format!("{was} dropped; {} stands here now", tagged(&now())),
    }
}

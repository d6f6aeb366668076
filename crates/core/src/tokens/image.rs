//! Images counted as the provider counts them (issue 14). A transcript's inline image is a base64
//! payload the provider never tokenizes as text: it scales the picture and bills it by its
//! pixels. The importer reads the width and height from the image header, applies the [`Rule`] of
//! the provider that received it and writes the figure into the text it imports, as an explicit,
//! labelled estimate:
//!
//! `[image: image/png, 311409 bytes, 2536×2508 ≈ 1599 tokens]`
//!
//! For imported sessions the estimator counts that marker as its figure ([`super::redacted`]);
//! journals written by a ctxj harness are counted as written. The rules, with the figures their
//! documentation gives (`docs/tokens-and-cache.md`, "Images"):
//!
//! * **Anthropic** — ⌈w × h / 750⌉ after the image is scaled down, aspect kept, until its long
//!   edge is ≤ 1568 px and it holds ≤ ~1,600 tokens (1.2 megapixels).
//! * **OpenAI, tiles** (gpt-5, gpt-4o, gpt-4.1, o1/o3; `detail` high or auto) — fit in 2048 ×
//!   2048, shrink until the shortest side is ≤ 768, then `base + tile × ⌈w/512⌉ × ⌈h/512⌉`.
//! * **OpenAI, patches** (gpt-5-mini/nano, gpt-4.1-mini/nano, o4-mini, codex-mini) — 32-px patches
//!   capped at 1,536, times the model's multiplier.

/// How one provider counts an image of a given size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Anthropic: pixels / 750 after the size limits.
    Anthropic,
    /// OpenAI's tile rule: `base + tile × tiles` (512-px tiles).
    Tiles { base: u64, tile: u64 },
    /// OpenAI's patch rule: 32-px patches (at most 1,536) × `multiplier_x100` / 100, rounded.
    Patches { multiplier_x100: u64 },
}

/// Anthropic: the longest edge the API keeps.
pub const ANTHROPIC_MAX_EDGE: f64 = 1568.0;
/// Anthropic: pixels per token.
pub const ANTHROPIC_PIXELS_PER_TOKEN: u64 = 750;
/// Anthropic: the most pixels the API keeps (~1,600 tokens × 750).
pub const ANTHROPIC_MAX_PIXELS: f64 = 1_200_000.0;

const TILE: u64 = 512;
const PATCH: f64 = 32.0;
const MAX_PATCHES: f64 = 1536.0;

impl Rule {
    /// The rule of a session's model (`provider/model` or a bare model id): Anthropic for
    /// `anthropic/…` and `claude…`, OpenAI's for `openai…/…`, `gpt…`, `o1`–`o4`, `codex…`;
    /// `None` for any other provider (its image rule is not modelled).
    pub fn for_model(model: &str) -> Option<Rule> {
        let m = model.to_ascii_lowercase();
        let (provider, id) = m.rsplit_once('/').map_or(("", m.as_str()), |(p, i)| (p, i));
        if provider.contains("anthropic") || id.starts_with("claude") {
            return Some(Rule::Anthropic);
        }
        let openai = provider.contains("openai")
            || ["gpt", "o1", "o3", "o4", "codex", "chatgpt"].iter().any(|p| id.starts_with(p));
        openai.then(|| Rule::openai(Some(id)))
    }

    /// OpenAI's rule for `model`; an unknown or absent model is taken as the gpt-5 family (the
    /// models Codex runs).
    pub fn openai(model: Option<&str>) -> Rule {
        let id = model.unwrap_or("").to_ascii_lowercase();
        let id = id.rsplit('/').next().unwrap_or("");
        let small = |m: &str| id.contains(m);
        if id.starts_with("o4-mini") || id.starts_with("codex-mini") {
            Rule::Patches { multiplier_x100: 172 }
        } else if (id.starts_with("gpt-5") || id.starts_with("gpt-4.1")) && small("nano") {
            Rule::Patches { multiplier_x100: 246 }
        } else if (id.starts_with("gpt-5") || id.starts_with("gpt-4.1")) && small("mini") {
            Rule::Patches { multiplier_x100: 162 }
        } else if id.starts_with("gpt-4o-mini") {
            Rule::Tiles { base: 2833, tile: 5667 }
        } else if id.starts_with("gpt-4") || id.starts_with("chatgpt-4") {
            Rule::Tiles { base: 85, tile: 170 }
        } else if id.starts_with("o1") || id.starts_with("o3") {
            Rule::Tiles { base: 75, tile: 150 }
        } else {
            Rule::Tiles { base: 70, tile: 140 }
        }
    }

    /// The tokens an image of `w` × `h` pixels costs (`None` for an empty size).
    pub fn tokens(self, w: u32, h: u32) -> Option<u64> {
        if w == 0 || h == 0 {
            return None;
        }
        let (w, h) = (f64::from(w), f64::from(h));
        Some(match self {
            Rule::Anthropic => {
                let s = 1f64.min(ANTHROPIC_MAX_EDGE / w.max(h)).min((ANTHROPIC_MAX_PIXELS / (w * h)).sqrt());
                let (w, h) = (scaled(w, s), scaled(h, s));
                (w * h).div_ceil(ANTHROPIC_PIXELS_PER_TOKEN)
            }
            Rule::Tiles { base, tile } => {
                let s = 1f64.min(2048.0 / w.max(h));
                let (w, h) = (w * s, h * s);
                let s = 1f64.min(768.0 / w.min(h));
                let (w, h) = (scaled(w, s), scaled(h, s));
                base.saturating_add(tile.saturating_mul(w.div_ceil(TILE) * h.div_ceil(TILE)))
            }
            Rule::Patches { multiplier_x100 } => patches(w, h).saturating_mul(multiplier_x100).saturating_add(50) / 100,
        })
    }

    /// A short name for the docs and notes.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Anthropic => "anthropic",
            Rule::Tiles { .. } => "openai-tiles",
            Rule::Patches { .. } => "openai-patches",
        }
    }
}

/// `x × s` rounded down, at least 1 pixel.
fn scaled(x: f64, s: f64) -> u64 {
    ((x * s).floor() as u64).max(1)
}

/// OpenAI's patch count: 32-px patches; over 1,536 the image is shrunk so that a whole number of
/// patches spans its width and the total fits.
fn patches(w: f64, h: f64) -> u64 {
    let raw = (w / PATCH).ceil() * (h / PATCH).ceil();
    if raw <= MAX_PATCHES {
        return raw as u64;
    }
    let shrink = (MAX_PATCHES * PATCH * PATCH / (w * h)).sqrt();
    let across = w * shrink / PATCH;
    let cols = across.floor().max(1.0);
    // The height in patches after the second shrink (cols / across); a hair of float error
    // must not add a whole row.
    let rows = (h * shrink * (cols / across) / PATCH - 1e-9).ceil().max(1.0);
    (cols * rows).min(MAX_PATCHES) as u64
}

const OPEN: &str = "[image: ";

/// The marker of an image of `media`, `bytes` long, `w` × `h` pixels, counted as `tokens`.
pub fn marker(media: &str, bytes: u64, (w, h): (u32, u32), tokens: u64) -> String {
    format!("{OPEN}{media}, {bytes} bytes, {w}×{h} ≈ {tokens} tokens]")
}

/// An image marker at the start of `s`: (its byte length, its tokens). The shape is exactly what
/// [`marker`] writes (a media type without `,` `]` or spaces; digits elsewhere).
pub fn parse(s: &str) -> Option<(usize, u64)> {
    let rest = s.strip_prefix(OPEN)?;
    let end = rest.bytes().take(160).position(|b| b == b']')?;
    let body = &rest[..end];
    let (media, rest) = body.split_once(", ")?;
    if media.is_empty() || media.contains([' ', ',']) {
        return None;
    }
    let (bytes, rest) = rest.split_once(" bytes, ")?;
    let (size, rest) = rest.split_once(" ≈ ")?;
    let (w, h) = size.split_once('×')?;
    let tokens = rest.strip_suffix(" tokens")?;
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !(digits(bytes) && digits(w) && digits(h) && digits(tokens)) {
        return None;
    }
    Some((OPEN.len() + end + 1, tokens.parse().ok()?))
}

/// Whether `s` may hold an image marker (a cheap pre-check).
pub fn may_hold(s: &str) -> bool {
    s.contains(OPEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_matches_its_documented_figures() {
        // docs: 200×200 ≈ 54, 1000×1000 ≈ 1334, 1092×1092 ≈ 1590 tokens.
        assert_eq!(Rule::Anthropic.tokens(200, 200), Some(54));
        assert_eq!(Rule::Anthropic.tokens(1000, 1000), Some(1334));
        assert_eq!(Rule::Anthropic.tokens(1092, 1092), Some(1590));
        // Long edge over 1568: scaled to 1568 × 784 first, then to 1.2 MP.
        assert_eq!(Rule::Anthropic.tokens(1568, 400), Some(837));
        assert_eq!(Rule::Anthropic.tokens(3136, 800), Some(837));
        // The shared agentlogs screenshot: 2536×2508 → 1101×1089 → 1599 (billed ≈ 1,600).
        assert_eq!(Rule::Anthropic.tokens(2536, 2508), Some(1599));
        for (w, h) in [(8000, 8000), (8000, 100), (1, 1), (u32::MAX, u32::MAX)] {
            let t = Rule::Anthropic.tokens(w, h).unwrap();
            assert!((1..=1600).contains(&t), "{w}×{h}: {t}");
        }
        assert_eq!(Rule::Anthropic.tokens(0, 10), None);
    }

    #[test]
    fn openai_tiles_match_the_documented_examples() {
        let gpt4o = Rule::openai(Some("gpt-4o"));
        // docs: 1024×1024 high → 765; 2048×4096 → 1105; small images are not scaled up.
        assert_eq!(gpt4o.tokens(1024, 1024), Some(765));
        assert_eq!(gpt4o.tokens(2048, 4096), Some(1105));
        assert_eq!(gpt4o.tokens(128, 64), Some(255));
        // gpt-5 family (Codex): 70 + 140 per tile.
        let gpt5 = Rule::openai(Some("gpt-5.1-codex"));
        assert_eq!(gpt5, Rule::Tiles { base: 70, tile: 140 });
        assert_eq!(gpt5.tokens(1024, 1024), Some(630));
        assert_eq!(Rule::openai(None), gpt5);
        assert_eq!(Rule::openai(Some("o3")).tokens(1024, 1024), Some(675));
    }

    #[test]
    fn openai_patches_match_the_documented_examples() {
        // docs: 1024×1024 → 1024 patches; 1800×2400 → 1452 patches; × 1.62 for the -mini models.
        assert_eq!(patches(1024.0, 1024.0), 1024);
        assert_eq!(patches(1800.0, 2400.0), 1452);
        let mini = Rule::openai(Some("gpt-5-mini"));
        assert_eq!(mini.tokens(1024, 1024), Some(1659));
        assert_eq!(mini.tokens(1800, 2400), Some(2352));
        assert_eq!(Rule::openai(Some("gpt-4.1-nano")), Rule::Patches { multiplier_x100: 246 });
        assert_eq!(Rule::openai(Some("o4-mini")), Rule::Patches { multiplier_x100: 172 });
    }

    #[test]
    fn the_rule_follows_the_model() {
        assert_eq!(Rule::for_model("claude-opus-4-5-20251101"), Some(Rule::Anthropic));
        assert_eq!(Rule::for_model("anthropic/claude-x"), Some(Rule::Anthropic));
        assert_eq!(Rule::for_model("openai/gpt-5.2"), Some(Rule::Tiles { base: 70, tile: 140 }));
        assert_eq!(Rule::for_model("openai-codex/gpt-5.1-codex-mini").map(Rule::name), Some("openai-patches"));
        assert_eq!(Rule::for_model("google/gemini-2.5-pro"), None);
    }

    #[test]
    fn a_marker_is_written_and_read_back() {
        let m = marker("image/png", 311_409, (2536, 2508), 1599);
        assert_eq!(m, "[image: image/png, 311409 bytes, 2536×2508 ≈ 1599 tokens]");
        assert_eq!(parse(&m), Some((m.len(), 1599)));
        assert_eq!(parse(&format!("{m} tail")), Some((m.len(), 1599)));
        assert_eq!(parse("[image: image/png, 12 bytes]"), None, "today's placeholder is text");
        assert_eq!(parse("[image: a b, 1 bytes, 1×1 ≈ 1 tokens]"), None);
        assert_eq!(parse("[image: x, 1 bytes, 1×1 ≈ 99999999999999999999999 tokens]"), None);
        assert_eq!(parse("[image: x, 1 bytes, 1×1 ≈ -1 tokens]"), None);
    }
}

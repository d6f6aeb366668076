//! Inline images and documents of transcripts: base64 helpers, the size read from an image
//! header, the provider-rule token marker and the attachments `ctxj import` writes beside a journal.

use std::sync::Arc;

use super::{Builder, ImageRule, ImportReport};
use crate::journal::Text;

/// Decoded length of a base64 payload (padding and whitespace ignored).
pub(crate) fn base64_len(data: &str) -> u64 {
    let n = data
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/' || *b == b'-' || *b == b'_')
        .count();
    (n as u64 * 3) / 4
}

/// Decodes standard or URL-safe base64, with or without padding, ignoring whitespace; `None` on
/// any other character.
pub fn base64_decode(data: &str) -> Option<Vec<u8>> {
    use base64::engine::{general_purpose::GeneralPurpose, DecodePaddingMode, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let standard: Vec<u8> = data
        .bytes()
        .filter(|b| *b != b'=' && !b.is_ascii_whitespace())
        .map(|b| match b {
            b'-' => b'+',
            b'_' => b'/',
            b => b,
        })
        .collect();
    LENIENT.decode(standard).ok()
}

/// The file extension for an image media type.
pub(crate) fn image_ext(media: &str) -> &'static str {
    match media {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

/// An image (or document) of a user message: its media type and, when the transcript holds it,
/// its base64 payload.
pub(crate) struct Image {
    pub kind: &'static str,
    pub media: String,
    pub data: Option<Text>,
}

/// Attachments for the images of user `uid`. An image whose payload the transcript holds becomes
/// an attachment (`<uid>.att/<kind>-N.<ext>`, payload queued in `files` for `ctxj import`) whose
/// preview is its [`image_text`] under `rule` (the provider's image rule, `None` when not
/// modelled); one without (a URL, a redaction) becomes a placeholder line in `texts`, since there
/// is no file to point at.
pub(crate) fn attach(
    b: &mut Builder,
    uid: &str,
    images: Vec<Image>,
    rule: Option<ImageRule>,
    texts: &mut Vec<String>,
    files: &mut Vec<(String, Text)>,
    report: &mut ImportReport,
) -> Vec<crate::journal::AttachmentRef> {
    let mut out = Vec::new();
    for (n, img) in images.into_iter().enumerate() {
        let Some(data) = img.data.filter(|d| !d.is_empty()) else {
            texts.push(format!("[{}: {}]", img.kind, img.media));
            report.lose(format!("{} without its payload (placeholder line in the text)", img.kind));
            continue;
        };
        let bytes = base64_len(&data);
        let rel = format!("{uid}.att/{}-{}.{}", img.kind, n + 1, image_ext(&img.media));
        let preview = match img.kind {
            "image" => image_text(&img.media, &data, rule, report),
            _ => format!("[{}: {}, {bytes} bytes]", img.kind, img.media),
        };
        files.push((rel.clone(), data));
        out.push(crate::journal::AttachmentRef {
            id: b.unique_id(&format!("{uid}.{}{}", img.kind, n + 1)),
            path: rel,
            bytes,
            preview: Arc::from(preview),
        });
    }
    out
}

/// Note of an image counted as its placeholder text because its header gave no size.
pub const IMAGE_UNSIZED_NOTE: &str =
    "an image header gave no size: the image is counted as its placeholder text, not as the provider counts it";
/// Note of an image counted as its placeholder text because its provider's rule is not modelled.
pub const IMAGE_NO_RULE_NOTE: &str =
    "an image went to a provider whose image rule is not modelled: it is counted as its placeholder text";

/// The text an inline image of `media` with base64 payload `data` becomes: the provider's
/// estimate ([`crate::tokens::image::marker`], `[image: image/png, 311409 bytes, 2536×2508 ≈ 1599
/// tokens]`) when `rule` is known and the header gives the size; otherwise the placeholder
/// `[image: image/png, 311409 bytes]`, counted as text, with a note saying why.
pub(crate) fn image_text(media: &str, data: &str, rule: Option<ImageRule>, report: &mut ImportReport) -> String {
    let bytes = base64_len(data);
    let Some(rule) = rule else {
        report.note(IMAGE_NO_RULE_NOTE);
        return format!("[image: {media}, {bytes} bytes]");
    };
    match image_size(data).and_then(|size| Some((size, rule.tokens(size.0, size.1)?))) {
        Some((size, tokens)) => crate::tokens::image::marker(media, bytes, size, tokens),
        None => {
            report.note(IMAGE_UNSIZED_NOTE);
            format!("[image: {media}, {bytes} bytes]")
        }
    }
}

/// Width and height from an image's header, read from the first 4 KiB of its base64 payload
/// (128 KiB when a JPEG's size comes after a large EXIF block); never the whole image.
pub(crate) fn image_size(data: &str) -> Option<(u32, u32)> {
    let significant = || data.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=');
    let total = significant().take(131_072 + 1).count();
    for chars in [4096usize, 131_072] {
        let take = chars.min(total) / 4 * 4;
        let prefix: String = significant().take(take).map(char::from).collect();
        if let Some(size) = base64_decode(&prefix).and_then(|b| imagesize::blob_size(&b).ok()) {
            let (w, h) = (u32::try_from(size.width).ok()?, u32::try_from(size.height).ok()?);
            return (w > 0 && h > 0).then_some((w, h));
        }
        if take >= total {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGVsbG8").unwrap(), b"hello");
        assert_eq!(base64_len("aGVsbG8="), 5);
        assert!(base64_decode("a*b").is_none());
    }
}

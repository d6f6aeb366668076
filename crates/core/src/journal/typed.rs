//! Typed reads of a few fields of a JSON line, without building its tree: `ctxj usage` reads
//! the token counts of hundreds of MB of transcripts and format detection reads a few keys of
//! each line, while most of a line's bytes are message content that only has to be skipped.
//!
//! Serde's derived structs accept a JSON array too (its elements read as the fields in order);
//! [`object`] and [`object_or_null`] accept objects only, so a typed read never takes a line
//! the full parse reads differently. A line the typed read refuses (a duplicate key, a field of
//! another JSON type, an array where an object was expected) is for the caller to parse in full.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{value::MapAccessDeserializer, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

use super::reader::{check_values, json_depth, MAX_DEPTH};

/// A key that is present, whatever its value (`null` included); `#[serde(default)]` makes an
/// absent key `Seen(false)`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Seen(pub bool);

impl<'de> Deserialize<'de> for Seen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| Seen(true))
    }
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// `T` read from a JSON object only (`deserialize_with` on a struct field, or a whole line).
pub fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(ObjectVisitor(PhantomData))
}

struct OptionVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for OptionVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object or null")
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        object(d).map(Some)
    }
}

/// An object, or `None` for `null` (with `#[serde(default)]`, also for an absent key).
pub fn object_or_null<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    d.deserialize_option(OptionVisitor(PhantomData))
}

/// `T` read from a whole line that is UTF-8 text holding one JSON object and nothing after it;
/// `None` when the typed read refuses the line (the caller then parses it in full). UTF-8 is
/// checked over the whole line because the skipped strings are not decoded, while the full parse
/// refuses a line with a broken string anywhere.
pub fn line<'a, T: Deserialize<'a>>(line: &'a [u8]) -> Option<T> {
    std::str::from_utf8(line).ok()?;
    // Skipped values are not depth-limited by serde_json, while the full parses refuse deep
    // lines (`parse_json` past 128 levels, a `Value` parse past 127) and `parse_json` lines of
    // too many values: such a line is never taken here.
    // Fewer opening brackets than the limit, in strings or not, cannot nest that deep: a byte
    // count (vectorised) spares the structural scan on nearly every line.
    let opens: usize =
        line.chunks(255).map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from(b == b'[' || b == b'{')))).sum();
    if (opens >= MAX_DEPTH && json_depth(line, MAX_DEPTH) >= MAX_DEPTH) || check_values(line).is_err() {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(line);
    let t = object(&mut de).ok()?;
    de.end().ok()?;
    Some(t)
}

/// The lines of `bytes`, split at `\n` (memchr), as `split` would give them.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())).map(move |end| {
        let line = &bytes[start..end];
        start = end + 1;
        line
    })
}

/// Test inputs: every transcript line we have.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::PathBuf;

    /// Every `.jsonl` of the bundled transcripts and of the shared samples (`../shared/samples`
    /// or `$CTXJ_SHARED_SAMPLES`; a test calling this carries `#[cfg_attr(not(ctxj_has_samples),
    /// ignore)]` and panics here when they are missing, as under `CI=true`).
    pub fn transcript_files() -> Vec<PathBuf> {
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let shared = std::env::var_os("CTXJ_SHARED_SAMPLES")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("..").join("shared").join("samples"));
        assert!(shared.is_dir(), "{} (the shared samples) is missing", shared.display());
        let mut out: Vec<PathBuf> = [root.join("sample-journals").join("transcripts"), shared]
            .iter()
            .flat_map(|d| walkdir::WalkDir::new(d).into_iter().flatten())
            .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "jsonl"))
            .map(walkdir::DirEntry::into_path)
            .collect();
        out.sort();
        assert!(out.len() > 20, "{out:?}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Inner {
        #[serde(default)]
        a: Option<u64>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Outer<'a> {
        #[serde(default, borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(default, deserialize_with = "object_or_null")]
        inner: Option<Inner>,
        #[serde(default)]
        flag: Seen,
    }

    #[test]
    fn objects_only_and_presence_of_null() {
        let o: Outer = line(br#"{"name":"x","inner":{"a":1,"b":[1,{"c":2}]},"flag":null,"z":"\u00e9"}"#).unwrap();
        assert_eq!(o, Outer { name: Some("x".into()), inner: Some(Inner { a: Some(1) }), flag: Seen(true) });
        let o: Outer = line(br#"{"inner":null}"#).unwrap();
        assert_eq!(o, Outer { name: None, inner: None, flag: Seen(false) });
        assert!(line::<Outer>(br#"["x",{"a":1},true]"#).is_none(), "a line that is an array");
        assert!(line::<Outer>(br#"{"inner":[1]}"#).is_none(), "an array where an object is expected");
        assert!(line::<Outer>(br#"{"name":"a","name":"b"}"#).is_none(), "a duplicate key");
        assert!(line::<Outer>(b"{\"z\":\"\xff\"}").is_none(), "broken UTF-8 in a skipped string");
        assert!(line::<Outer>(br#"{} {}"#).is_none(), "trailing bytes");
    }

    #[test]
    fn a_line_the_full_parses_refuse_is_never_taken() {
        for depth in 120..=132 {
            let l = format!("{{\"name\":\"x\",\"z\":{}1{}}}", "[".repeat(depth - 1), "]".repeat(depth - 1));
            if line::<Outer>(l.as_bytes()).is_some() {
                assert!(serde_json::from_str::<serde_json::Value>(&l).is_ok(), "depth {depth}");
                assert!(super::super::reader::parse_json(l.as_bytes()).is_ok(), "depth {depth}");
            }
        }
        assert!(line::<Outer>(format!("{{\"z\":{}1{}}}", "[".repeat(100), "]".repeat(100)).as_bytes()).is_some());
    }

    #[test]
    fn lines_split_like_split() {
        for b in [&b""[..], b"\n", b"a", b"a\n", b"a\n\nb", b"\n\na\n"] {
            assert_eq!(lines(b).collect::<Vec<_>>(), b.split(|&c| c == b'\n').collect::<Vec<_>>());
        }
    }
}

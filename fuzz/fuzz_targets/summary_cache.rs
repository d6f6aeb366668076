//! The summary cache's reader (`--summarizer CMD`, issue 31): an entry written into a private
//! cache folder, read back by `strategy::summarizer::read_cached`, the answer redacted as it is
//! on a hit. The first byte picks the entry: the raw bytes; a sealed entry of the rest (must read
//! back exactly, when it is non-blank UTF-8 within the size limit); that entry truncated or with
//! one byte changed (must be a miss); a forged header followed by the rest. No panic (overflow
//! checks on), a hit is never blank.
#![no_main]

use std::sync::OnceLock;

use ctxj_core::journal::cache_dir::CacheDir;
use ctxj_core::strategy::summarizer::{cache_in, read_cached, seal_entry, MAX_OUTPUT};
use ctxj_core::strategy::summary;
use libfuzzer_sys::fuzz_target;

fn dir() -> &'static CacheDir {
    static DIR: OnceLock<CacheDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("ctxj-fuzz-summaries-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        cache_in(&base).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let sealed = |b: &[u8]| seal_entry(&String::from_utf8_lossy(b));
    let (entry, expect): (Vec<u8>, Option<Option<String>>) = match mode % 4 {
        0 => (rest.to_vec(), None),
        1 => {
            let s = String::from_utf8_lossy(rest).into_owned();
            let hit = (!s.trim().is_empty() && s.len() <= MAX_OUTPUT).then(|| s.clone());
            (seal_entry(&s), Some(hit))
        }
        2 => {
            // The first two bytes: where to damage the sealed rest, and how.
            let [at, how, body @ ..] = rest else { return };
            let mut e = sealed(body);
            let at = (*at as usize * e.len()) / 256;
            if *how == 0 {
                e.truncate(at);
            } else {
                e[at] ^= *how;
            }
            (e, Some(None))
        }
        _ => ([&b"ctxj-cache summary/1 "[..], rest].concat(), None),
    };
    dir().write("entry.txt", &entry).unwrap();
    let got = read_cached(dir(), "entry.txt");
    if let Some(want) = expect {
        assert_eq!(got, want, "mode {}", mode % 4);
    }
    if let Some(s) = got {
        assert!(!s.trim().is_empty());
        let _ = summary::redact(&s);
    }
});

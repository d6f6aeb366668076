//! The persistent token memo (issue 20): token counts keyed by (encoding, content hash), kept
//! between runs in the user's cache folder, so a second `report`, `cache`, `tokens` or `audit` of
//! the same session tokenizes nothing it counted before.
//!
//! * **Where.** `$CTXJ_CACHE_DIR/tokens/`, else `<cache dir>/ctxj/tokens/` (`dirs::cache_dir()`:
//!   `$XDG_CACHE_HOME` or `~/.cache` on Linux), one file per encoding (`o200k_base.v1.bin`). The
//!   library keeps no memo on disk unless told where ([`Dir::default_location`], chosen by the
//!   binary; `--no-cache` or `CTXJ_NO_CACHE` turn it off). A folder inside a session directory
//!   is refused: ctxj never writes there.
//! * **What.** A 40-byte header (magic, format version, encoding, a probe of the content hash
//!   function, entry count, the file's seed) and 32-byte entries: the 128-bit content hash
//!   (XXH3-128 under the file's seed, [`crate::projection::hash::content_key`]), the text's length
//!   and its count. The seed is drawn at random when the file is first written and kept with it,
//!   so nobody who cannot read the file can craft a text whose key collides with another's. A
//!   file whose header, probe or size does not check out, or that holds a count its text cannot
//!   hold ([`plausible`]: an edited count, issue 31), is ignored (and replaced at the next save):
//!   corruption costs a cold run, never a wrong count. The file goes through the cache folder's
//!   guarded reader and writer (`journal::cache_dir`: `0600` in a `0700` folder, no symlinks).
//!   The probe makes a change of the hash function look like a foreign file. Version 1 files (SipHash keys) are ignored, and
//!   removed by the first save of version 2.
//! * **Size.** At most [`CAP`] entries (32 MiB). A save keeps the entries this run used first,
//!   then the others already on disk, up to the cap.
//! * **Once per run.** The binary makes one [`Store`] and passes it along (no global): each file
//!   is read once ([`Store::loaded`]) into one read-only map shared by every estimator a command
//!   makes (one per session for `export` and `experiment`): an estimator copies only the entries
//!   it uses. What they counted is gathered ([`Store::keep`]) and written once, when the binary
//!   calls [`Store::flush`] at the end.
//! * **Concurrency.** A save re-reads the file, merges, and writes a new file renamed over the old
//!   one (`journal::session::write_guarded`: temp file + rename, never through a symlink), so two
//!   runs at once never leave a torn file; at worst one run's new entries are not kept (also
//!   when the file was replaced meanwhile by one with another seed: its entries are dropped).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use super::encoding::Encoding;
use crate::journal::cache_dir::{self, CacheDir};
use crate::journal::SessionError;
use crate::projection::hash::content_key;

/// Most entries a memo file keeps (32 bytes each).
pub const CAP: usize = 1 << 20;
/// Format version; bump it when the key, the layout or the meaning of a count changes
/// (2: XXH3-128 keys under the file's own seed, kept in the header).
pub const VERSION: u32 = 2;
const MAGIC: &[u8; 8] = b"ctxjtokm";
const HEADER: usize = 40;
const ENTRY: usize = 32;

/// A content key: a 128-bit [`content_key`] of the text under a seed, plus its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key(pub u128, pub u64);

impl Key {
    /// The key of a text under `seed` (a memo file's, or [`crate::projection::hash::process_seed`]).
    pub fn of(seed: u64, s: &str) -> Key {
        Key(content_key(seed, s.as_bytes()), s.len() as u64)
    }
}

/// The hash of a fixed text under a fixed seed: a file written with another hash function
/// carries another probe.
fn probe() -> u64 {
    Key::of(0, "ctxj token memo probe").0 as u64
}

/// A memo file as this process read it: the seed its keys are made with, and its counts (a
/// read-only map every estimator of the run looks into).
#[derive(Debug, Default)]
pub struct Loaded {
    pub seed: u64,
    pub counts: FxHashMap<Key, u64>,
}

/// A new random seed for a memo file that does not exist yet (or is damaged).
fn fresh_seed(path: &Path) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(path)
}

fn encoding_id(enc: Encoding) -> u32 {
    match enc {
        Encoding::O200kBase => 1,
        Encoding::Cl100kBase => 2,
    }
}

/// The folder a persistent memo lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dir(CacheDir);

impl Dir {
    /// `<dir>/tokens`, refused inside a session directory.
    pub fn new(dir: &Path) -> Result<Dir, SessionError> {
        Ok(Dir(CacheDir::new(dir, "tokens")?))
    }

    /// `$CTXJ_CACHE_DIR`, else `<user cache dir>/ctxj` (`None` when neither is known).
    pub fn default_location() -> Option<PathBuf> {
        cache_dir::default_base()
    }

    /// The file of one encoding.
    pub fn file(&self, enc: Encoding) -> PathBuf {
        self.0.file(&format!("{}.v{VERSION}.bin", enc.name()))
    }
}

type Pending = HashMap<PathBuf, (Encoding, u64, Vec<(Key, u64)>)>;

/// The persistent memo of one run: its folder, each file as the run first read it ([`Store::loaded`],
/// shared by every estimator made from the store) and what the estimators counted, written once by
/// [`Store::flush`]. A value the binary makes and passes along (through
/// [`super::Tokenizer`]); the library keeps no memo of its own.
#[derive(Debug)]
pub struct Store {
    dir: Dir,
    loaded: Mutex<HashMap<PathBuf, Arc<Loaded>>>,
    pending: Mutex<Pending>,
}

impl Store {
    /// A store over the memo folder `dir`, nothing read yet.
    pub fn new(dir: Dir) -> Store {
        Store { dir, loaded: Mutex::default(), pending: Mutex::default() }
    }

    /// The file of one encoding.
    pub fn file(&self, enc: Encoding) -> PathBuf {
        self.dir.file(enc)
    }

    /// The memo file of `enc` as this store first read it ([`load`] once per file); a missing or
    /// damaged file gives no counts and a fresh seed.
    pub fn loaded(&self, enc: Encoding) -> Arc<Loaded> {
        let path = self.file(enc);
        let mut m = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        m.entry(path.clone())
            .or_insert_with(|| {
                let (seed, entries) = load(&path, enc).unwrap_or_else(|| (fresh_seed(&path), Vec::new()));
                let mut counts = FxHashMap::with_capacity_and_hasher(entries.len(), Default::default());
                counts.extend(entries);
                Arc::new(Loaded { seed, counts })
            })
            .clone()
    }

    /// Adds the entries one estimator used (keyed under `seed`, the file's as [`Store::loaded`]
    /// gave it) to what [`Store::flush`] writes.
    pub fn keep(&self, enc: Encoding, seed: u64, used: Vec<(Key, u64)>) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        p.entry(self.file(enc)).or_insert_with(|| (enc, seed, Vec::new())).2.extend(used);
    }

    /// Writes what the estimators kept ([`Store::keep`]) to their memo files, each once
    /// ([`save`]). The binary calls it when the command is done; errors leave a file as it was (it
    /// is a cache) and the first is returned.
    pub fn flush(&self) -> Result<(), SessionError> {
        let all = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first = Ok(());
        for (path, (enc, seed, used)) in all {
            if let (Err(e), true) = (save(&path, enc, seed, used), first.is_ok()) {
                first = Err(e);
            }
        }
        first
    }
}

/// Reads the seed and the entries of a memo file; `None` for a missing, foreign or damaged file.
pub fn load(path: &Path, enc: Encoding) -> Option<(u64, Vec<(Key, u64)>)> {
    let b = cache_dir::read_private(path, (HEADER + CAP * ENTRY) as u64)?;
    decode(&b, enc)
}

/// Most tokens a text of `len` bytes can count as: every token of the encodings holds at least
/// one byte, so a count above its text's length (plus a margin) was not written by ctxj.
pub fn plausible(len: u64, count: u64) -> bool {
    count <= len.saturating_add(PLAUSIBLE_MARGIN)
}

/// The margin of [`plausible`].
const PLAUSIBLE_MARGIN: u64 = 8;

fn decode(b: &[u8], enc: Encoding) -> Option<(u64, Vec<(Key, u64)>)> {
    let u32_at = |i: usize| Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let u64_at = |i: usize| Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?));
    if b.get(..8)? != MAGIC || u32_at(8)? != VERSION || u32_at(12)? != encoding_id(enc) || u64_at(16)? != probe() {
        return None;
    }
    let n = usize::try_from(u64_at(24)?).ok()?;
    if n > CAP || b.len() != HEADER.checked_add(n.checked_mul(ENTRY)?)? {
        return None;
    }
    let seed = u64_at(32)?;
    let mut out = Vec::with_capacity(n);
    for e in b[HEADER..].chunks_exact(ENTRY) {
        let lo = u64::from_le_bytes(e[0..8].try_into().ok()?);
        let hi = u64::from_le_bytes(e[8..16].try_into().ok()?);
        let len = u64::from_le_bytes(e[16..24].try_into().ok()?);
        let count = u64::from_le_bytes(e[24..32].try_into().ok()?);
        // An edited count is not trusted: one impossible entry discards the file (issue 31).
        if !plausible(len, count) {
            return None;
        }
        out.push((Key((u128::from(hi) << 64) | u128::from(lo), len), count));
    }
    Some((seed, out))
}

fn encode(seed: u64, entries: &[(Key, u64)], enc: Encoding) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER + entries.len() * ENTRY);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&encoding_id(enc).to_le_bytes());
    b.extend_from_slice(&probe().to_le_bytes());
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    b.extend_from_slice(&seed.to_le_bytes());
    for (k, n) in entries {
        b.extend_from_slice(&(k.0 as u64).to_le_bytes());
        b.extend_from_slice(&((k.0 >> 64) as u64).to_le_bytes());
        b.extend_from_slice(&k.1.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes());
    }
    b
}

/// Writes `used` (this run's entries, keyed under `seed`, kept first) merged with what the file
/// holds now when its seed is the same, up to [`CAP`] entries. The folder is created when
/// missing; a version 1 file of the encoding beside it is removed.
pub fn save(path: &Path, enc: Encoding, seed: u64, used: Vec<(Key, u64)>) -> Result<(), SessionError> {
    let mut seen: HashMap<Key, ()> = HashMap::with_capacity(used.len());
    let mut all = Vec::with_capacity(used.len().min(CAP));
    let old = load(path, enc).filter(|(s, _)| *s == seed).map(|(_, v)| v).unwrap_or_default();
    for (k, n) in used.into_iter().chain(old) {
        if all.len() >= CAP {
            break;
        }
        if seen.insert(k, ()).is_none() {
            all.push((k, n));
        }
    }
    cache_dir::write_private(path, &encode(seed, &all, enc))?;
    // The SipHash-keyed version 1 file is of no use to this version: free its space.
    let v1 = path.with_file_name(format!("{}.v1.bin", enc.name()));
    if v1 != path && v1.is_file() {
        let _ = std::fs::remove_file(v1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: u64 = 0x1234_5678;

    #[test]
    fn round_trip_and_merge() {
        let dir = tempfile::tempdir().unwrap();
        let d = Dir::new(dir.path()).unwrap();
        let f = d.file(Encoding::O200kBase);
        assert!(load(&f, Encoding::O200kBase).is_none(), "no file: no entries");
        let k = |s: &str| Key::of(SEED, s);
        save(&f, Encoding::O200kBase, SEED, vec![(k("a"), 1), (k("b c"), 2)]).unwrap();
        save(&f, Encoding::O200kBase, SEED, vec![(k("d"), 1), (k("a"), 1)]).unwrap();
        let (seed, mut got) = load(&f, Encoding::O200kBase).unwrap();
        assert_eq!(seed, SEED);
        got.sort_by_key(|(k, _)| k.0);
        let mut want = vec![(k("a"), 1), (k("b c"), 2), (k("d"), 1)];
        want.sort_by_key(|(k, _)| k.0);
        assert_eq!(got, want);
        // Another encoding's file is another file; reading this one as cl100k gives nothing.
        assert!(load(&f, Encoding::Cl100kBase).is_none());
        // A save under another seed (the file was replaced meanwhile) drops the old entries.
        save(&f, Encoding::O200kBase, SEED + 1, vec![(Key::of(SEED + 1, "e"), 1)]).unwrap();
        assert_eq!(load(&f, Encoding::O200kBase).unwrap(), (SEED + 1, vec![(Key::of(SEED + 1, "e"), 1)]));
    }

    #[test]
    fn the_loaded_map_is_shared_and_a_new_file_gets_a_random_seed() {
        let dir = tempfile::tempdir().unwrap();
        let store = |d: &str| Store::new(Dir::new(&dir.path().join(d)).unwrap());
        let (sa, sb, sc) = (store("a"), store("b"), store("c"));
        let a = sa.file(Encoding::O200kBase);
        std::fs::create_dir_all(a.parent().unwrap()).unwrap();
        save(&a, Encoding::O200kBase, SEED, vec![(Key::of(SEED, "x"), 1)]).unwrap();
        let la = sa.loaded(Encoding::O200kBase);
        assert_eq!((la.seed, la.counts.get(&Key::of(SEED, "x"))), (SEED, Some(&1)));
        assert!(Arc::ptr_eq(&la, &sa.loaded(Encoding::O200kBase)), "read once per store");
        let (lb, lc) = (sb.loaded(Encoding::O200kBase), sc.loaded(Encoding::O200kBase));
        assert!(lb.counts.is_empty());
        assert_ne!(lb.seed, lc.seed, "each new file draws its own seed");
    }

    #[test]
    fn a_save_removes_the_version_1_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = Dir::new(dir.path()).unwrap();
        let f = d.file(Encoding::O200kBase);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        let v1 = f.with_file_name("o200k_base.v1.bin");
        std::fs::write(&v1, b"old").unwrap();
        assert!(load(&v1, Encoding::O200kBase).is_none(), "a version 1 file is foreign");
        save(&f, Encoding::O200kBase, SEED, vec![]).unwrap();
        assert!(!v1.exists() && f.is_file());
    }

    #[test]
    fn damaged_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.bin");
        let good = encode(SEED, &[(Key::of(SEED, "x"), 1), (Key::of(SEED, "y"), 1)], Encoding::O200kBase);
        assert_eq!(decode(&good, Encoding::O200kBase).map(|(s, v)| (s, v.len())), Some((SEED, 2)));
        for bad in [
            good[..good.len() - 1].to_vec(), // torn
            good[..10].to_vec(),
            [good.clone(), vec![0]].concat(), // trailing byte
            {
                let mut b = good.clone();
                b[0] ^= 1; // magic
                b
            },
            {
                let mut b = good.clone();
                b[16] ^= 1; // another hash function
                b
            },
            {
                let mut b = good.clone();
                b[24..32].copy_from_slice(&u64::MAX.to_le_bytes()); // absurd count
                b
            },
            Vec::new(),
        ] {
            assert!(decode(&bad, Encoding::O200kBase).is_none());
            std::fs::write(&f, &bad).unwrap();
            assert!(load(&f, Encoding::O200kBase).is_none());
        }
        // A damaged file is replaced by the next save.
        save(&f, Encoding::O200kBase, SEED, vec![(Key::of(SEED, "z"), 1)]).unwrap();
        assert_eq!(load(&f, Encoding::O200kBase), Some((SEED, vec![(Key::of(SEED, "z"), 1)])));
    }

    #[test]
    fn the_cap_keeps_this_runs_entries_first() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.bin");
        let old: Vec<(Key, u64)> = (0..10).map(|i| (Key::of(SEED, &format!("old {i}")), 2)).collect();
        save(&f, Encoding::O200kBase, SEED, old).unwrap();
        let new: Vec<(Key, u64)> = (0..CAP).map(|i| (Key(i as u128, 1), 1)).collect();
        save(&f, Encoding::O200kBase, SEED, new).unwrap();
        let (_, got) = load(&f, Encoding::O200kBase).unwrap();
        assert_eq!(got.len(), CAP);
        assert!(got.iter().all(|(_, n)| *n == 1), "the old entries made room");
    }

    #[test]
    fn never_inside_a_session() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("journal.jsonl"), "").unwrap();
        assert!(Dir::new(dir.path()).is_err());
        assert!(Dir::new(&dir.path().join("cache")).is_err());
    }
}

//! Unit tests of `estimator.rs`.

use super::*;

#[test]
fn short_texts_are_one_piece() {
    assert_eq!(pieces(""), std::iter::once(0..0).collect::<Vec<_>>());
    let s = "a\n".repeat(WHOLE_LIMIT / 2);
    assert_eq!(s.len(), WHOLE_LIMIT);
    assert_eq!(pieces(&s), std::iter::once(0..WHOLE_LIMIT).collect::<Vec<_>>());
}

#[test]
fn pieces_end_after_the_last_newline() {
    // 10 000 bytes of 'x', a newline, then more: the first piece of 8192 holds no newline.
    let mut s = "x".repeat(5000);
    s.push('\n');
    s.push_str(&"y".repeat(70_000));
    let p = pieces(&s);
    assert_eq!(p[0], 0..5001, "ends after the newline inside the first 8192 bytes");
    assert_eq!(p[1], 5001..5001 + PIECE_LIMIT, "no newline: a full piece");
    let total: usize = p.iter().map(|r| r.len()).sum();
    assert_eq!(total, s.len());
    for w in p.windows(2) {
        assert_eq!(w[0].end, w[1].start);
    }
    assert!(p.iter().all(|r| r.len() <= PIECE_LIMIT && !r.is_empty()));
}

#[test]
fn pieces_respect_char_boundaries() {
    // 3-byte characters: 8192 is not a multiple of 3, so the cut moves back to 8190.
    let s = "日".repeat(30_000);
    let p = pieces(&s);
    assert_eq!(p[0], 0..8190);
    assert!(p.iter().all(|r| s.is_char_boundary(r.start) && s.is_char_boundary(r.end)));
    // A newline right at the end of the window counts as inside it.
    let mut t = "a".repeat(8191);
    t.push('\n');
    t.push_str(&"b".repeat(70_000));
    assert_eq!(pieces(&t)[0], 0..8192);
    // A newline as the first byte after the window does not.
    let mut u = "a".repeat(8192);
    u.push('\n');
    u.push_str(&"b".repeat(70_000));
    assert_eq!(pieces(&u)[0], 0..8192);
    assert_eq!(pieces(&u)[1], 8192..8193);
}

/// Strings whose counts were checked once against Python `tiktoken` 0.14.0 (`encode_ordinary`,
/// the same `.tiktoken` rank files) — an implementation independent of tiktoken-rs' Rust code.
const FIXED: [&str; 10] = [
    "",
    "hello world",
    "Hello, world! How are you today?",
    "fn main() {\n    println!(\"héllo, wörld\");\n}\n",
    "日本語のテキストとemoji 😀🎉 mixed",
    "<|endoftext|> is ordinary text here",
    "    indented    spaces   \n\n\ttab",
    "12345678901234567890",
    r#"{"command":"cargo test -p export -- part_1 --exact --nocapture"}"#,
    "[elided: run, 872 bytes, … -p export -- part_1 --exact --nocapture]",
];

#[test]
fn known_counts_o200k() {
    let e = TiktokenEstimator::new(Encoding::O200kBase);
    let got: Vec<u64> = FIXED.iter().map(|s| e.count(s)).collect();
    assert_eq!(got, [0, 2, 9, 15, 12, 11, 7, 7, 18, 24]);
}

#[test]
fn known_counts_cl100k() {
    let e = TiktokenEstimator::new(Encoding::Cl100kBase);
    let got: Vec<u64> = FIXED.iter().map(|s| e.count(s)).collect();
    assert_eq!(got, [0, 2, 9, 16, 15, 11, 7, 7, 18, 24]);
}

/// A 222,301-byte text (28 pieces under the rule): figures from Python tiktoken 0.14.0 with
/// the piece rule re-implemented there.
#[test]
fn known_counts_of_a_long_text() {
    let mut s: String =
        (0..3000).map(|i| format!("line {i}: the quick brown fox — jumps over 日本 {}\n", i * 7)).collect();
    s.push_str(&"x".repeat(20_000));
    s.push_str(&" y".repeat(5000));
    s.push_str(&"é".repeat(9000));
    assert_eq!(s.len(), 222_301);
    assert_eq!(pieces(&s).len(), 28);
    assert_eq!(TiktokenEstimator::new(Encoding::O200kBase).count(&s), 66_357);
    assert_eq!(TiktokenEstimator::new(Encoding::Cl100kBase).count(&s), 69_357);
}

#[test]
fn memo_answers_repeats() {
    let e = TiktokenEstimator::new(Encoding::O200kBase);
    assert_eq!(e.count("hello world"), 2);
    assert_eq!(e.count("hello world"), 2);
    let st = e.stats();
    assert_eq!((st.hits, st.misses), (1, 1));
    assert_eq!(e.memo_len(), 1);
    let many = e.count_many(&["a b c", "hello world", "a b c"]);
    assert_eq!(many, vec![3, 2, 3]);
}

/// The persistent memo is one read-only map shared by the estimators of a process: making one
/// copies nothing, a first use of an entry counts as `stored` (per estimator), later ones as hits.
#[test]
fn the_persistent_memo_is_shared_not_copied() {
    let dir = tempfile::tempdir().unwrap();
    let d = Arc::new(Store::new(memo::Dir::new(dir.path()).unwrap()));
    let f = d.file(Encoding::O200kBase);
    // A planted count (the real one is 2) proves the answer comes from the file.
    memo::save(&f, Encoding::O200kBase, 99, vec![(Key::of(99, "hello world"), 7)]).unwrap();
    let a = TiktokenEstimator::with_memo(Encoding::O200kBase, Some(&d));
    assert_eq!(a.memo_len(), 0, "nothing copied at creation");
    assert_eq!((a.count("hello world"), a.count("hello world")), (7, 7));
    assert_eq!((a.stats().stored, a.stats().hits, a.stats().misses), (1, 1, 0));
    let b = TiktokenEstimator::with_memo(Encoding::O200kBase, Some(&d));
    assert_eq!((b.count("hello world"), b.count("a b c")), (7, 3));
    assert_eq!((b.stats().stored, b.stats().misses, b.memo_len()), (1, 1, 2));
    assert_eq!(a.memo_len(), 1, "one estimator's counts are not another's");
}

/// Issue 31: an edited memo file's counts were used as read (a planted 10^9 for a text of
/// 11 bytes); a count its text cannot hold discards the file.
#[test]
fn regression_memo_edited_count_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let d = Arc::new(Store::new(memo::Dir::new(dir.path()).unwrap()));
    let f = d.file(Encoding::O200kBase);
    memo::save(&f, Encoding::O200kBase, 99, vec![(Key::of(99, "hello world"), 1_000_000_000)]).unwrap();
    let a = TiktokenEstimator::with_memo(Encoding::O200kBase, Some(&d));
    assert_eq!(a.count("hello world"), 2);
}

/// Issue 31: with u64::MAX counts in the memo, the sum of a long text's pieces wrapped in
/// release builds; it saturates.
#[test]
fn regression_memo_u64_max_counts_do_not_wrap() {
    let e = TiktokenEstimator::new(Encoding::O200kBase);
    let s = "word ".repeat(WHOLE_LIMIT / 2);
    let ps = pieces(&s);
    assert!(ps.len() >= 2);
    for r in &ps {
        e.store(e.key(&s[r.clone()]), u64::MAX);
    }
    assert_eq!(e.count(&s), u64::MAX);
    // …and the persistent memo never hands such a count on.
    let mut counts = FxHashMap::default();
    counts.insert(Key::of(7, "hello world"), u64::MAX);
    let mut f = TiktokenEstimator::new(Encoding::O200kBase);
    f.seed = 7;
    f.base = Some(Arc::new(memo::Loaded { seed: 7, counts }));
    assert_eq!(f.count("hello world"), 2);
}

#[test]
fn a_million_spaces_and_friends_do_not_panic() {
    let e = TiktokenEstimator::new(Encoding::O200kBase);
    let spaces = " ".repeat(1_000_000);
    // 122 pieces of 8192 spaces (64 tokens each: 128-space tokens) and a rest of 576 spaces.
    assert_eq!(pieces(&spaces).len(), 123);
    assert_eq!(e.count(&spaces), 122 * 64 + 5);
    let wrapped = format!("x{}y", " ".repeat(999_998));
    assert!(e.count(&wrapped) > 7000);
    assert!(e.count(&"\n".repeat(1_000_000)) > 0);
    assert!(e.count(&"A".repeat(1_000_000)) > 0);
    assert_eq!(fallbacks(), 0, "no piece needed the panic fallback");
}

/// The spec's bound: no piece of at most 8 KiB, and no whole text of at most 64 KiB, makes the
/// regex engine fail. Called on the encoder directly, so a failure panics the test.
#[test]
fn adversarial_pieces_do_not_overflow() {
    fn kinds(n: usize) -> Vec<String> {
        vec![
            " ".repeat(n),
            format!("x{}y", " ".repeat(n - 2)),
            "\t".repeat(n),
            "\n".repeat(n),
            "\r\n".repeat(n / 2),
            "\u{a0}".repeat(n / 2),
            "\u{3000}".repeat(n / 3),
            "A".repeat(n),
            "a".repeat(n),
            "7".repeat(n),
            "^".repeat(n),
            " !".repeat(n / 2),
            "日".repeat(n / 3),
            "😀".repeat(n / 4),
            "a\u{301}".repeat(n / 3),
            "é".repeat(n / 2),
            "'s".repeat(n / 2),
            "  x".repeat(n / 3),
        ]
    }
    for enc in Encoding::ALL {
        for s in kinds(PIECE_LIMIT) {
            assert!(s.len() <= PIECE_LIMIT);
            assert!(!enc.bpe().encode_ordinary(&s).is_empty());
        }
        for s in kinds(WHOLE_LIMIT).into_iter().take(4) {
            assert!(!enc.bpe().encode_ordinary(&s).is_empty());
        }
    }
}

proptest::proptest! {
    /// Pieces tile the text, respect the bound and character boundaries, and each piece but
    /// the last ends after the last newline of its 8 KiB window when the window holds one.
    #[test]
    fn pieces_tile_the_text(parts in proptest::collection::vec(("[a \n日😀]{0,40}", 0usize..3000), 1..60)) {
        let mut s = String::new();
        for (p, n) in &parts {
            for _ in 0..(*n / 40 + 1) {
                s.push_str(p);
            }
        }
        let ps = pieces_with(&s, 1024, 256);
        let mut pos = 0;
        for (i, r) in ps.iter().enumerate() {
            proptest::prop_assert_eq!(r.start, pos);
            proptest::prop_assert!(s.is_char_boundary(r.end));
            if s.len() > 1024 {
                proptest::prop_assert!(r.len() <= 256 && !r.is_empty());
                if i + 1 < ps.len() {
                    let window = &s.as_bytes()[r.start..r.start + 256];
                    match memchr::memrchr(b'\n', window) {
                        Some(k) => proptest::prop_assert_eq!(r.end, r.start + k + 1),
                        None => proptest::prop_assert!(r.end + 4 > r.start + 256),
                    }
                }
            }
            pos = r.end;
        }
        proptest::prop_assert_eq!(pos, s.len());
    }
}

#[test]
fn encoding_choice() {
    assert_eq!(Encoding::choose(None, None).unwrap(), Encoding::O200kBase);
    assert_eq!(Encoding::choose(None, Some("cl100k_base")).unwrap(), Encoding::Cl100kBase);
    assert_eq!(Encoding::choose(Some("o200k_base"), Some("cl100k_base")).unwrap(), Encoding::O200kBase);
    let e = Encoding::choose(None, Some("p50k_base")).unwrap_err();
    assert!(e.to_string().contains("\"p50k_base\" (the session's `encoding`)"), "{e}");
    assert!(e.to_string().contains("o200k_base or cl100k_base"), "{e}");
    assert_eq!(Encoding::choose(Some("cl100k"), Some("p50k_base")).unwrap(), Encoding::Cl100kBase);
    assert!(Encoding::choose(Some("p50k_base"), None).is_err());
}

//! Header text is Python's `repr()`: sciio's printer must quote and escape exactly like the
//! reference Python, for every code point, so that headers are byte-identical.

use sciio_core::pyliteral::is_printable;
use sciio_core::PyLiteral;

/// Inclusive code point ranges, merged.
fn merge(points: impl Iterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for u in points {
        match ranges.last_mut() {
            Some(last) if last.1 + 1 == u => last.1 = u,
            _ => ranges.push((u, u)),
        }
    }
    ranges
}

fn expand(ranges: &[(u32, u32)]) -> std::collections::BTreeSet<u32> {
    ranges.iter().flat_map(|&(a, b)| a..=b).collect()
}

#[test]
fn python_repr_matches_sciio() {
    // Every code point the venv's Python deems unprintable, as merged ranges, with the Python
    // version and, for each code point that Python prints, whether it is assigned (not Cn).
    let out = sciio_testkit::run_python(
        "import json, sys, unicodedata\nbad = [c for c in range(0x110000) if not chr(c).isprintable() and not 0xd800 <= c < 0xe000]\nr = []\nfor c in bad:\n    if r and r[-1][1] == c - 1: r[-1][1] = c\n    else: r.append([c, c])\nprint(json.dumps({'minor': sys.version_info[:2], 'unicode': unicodedata.unidata_version, 'bad': r}))",
        &[],
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let minor: (u32, u32) = serde_json::from_value(doc["minor"].clone()).unwrap();
    let python: Vec<(u32, u32)> = serde_json::from_value(doc["bad"].clone()).unwrap();
    let ours = merge(
        (0..0x110000u32)
            .filter_map(char::from_u32)
            .filter(|c| !is_printable(*c))
            .map(u32::from),
    );
    if minor == (3, 11) {
        // The table was generated from Python 3.11 (Unicode 14.0.0): exactly the same.
        assert_eq!(ours, python);
    } else {
        // Another Python knows another Unicode version: code points assigned since 14.0.0
        // print there and are escaped by sciio (a header naming a field with such a letter
        // differs from that Python's; numpy reads both). Everything else must agree: what
        // that Python escapes, sciio escapes, and the only extra escapes are code points
        // unassigned in Unicode 14.0.0 (which the table lists as Cn) that this Python's
        // newer Unicode assigns; there are a few thousand per release, never ASCII or Latin-1.
        let (ours, python) = (expand(&ours), expand(&python));
        let missing: Vec<u32> = python.difference(&ours).copied().collect();
        assert_eq!(
            missing,
            Vec::<u32>::new(),
            "Python {minor:?} (Unicode {}) escapes code points sciio prints",
            doc["unicode"]
        );
        let extra: Vec<u32> = ours.difference(&python).copied().collect();
        assert!(extra.iter().all(|&c| c > 0x2ff), "{extra:x?}");
        assert!(
            extra.len() < 20_000,
            "{} code points escaped by sciio only: more than new Unicode versions assign",
            extra.len()
        );
    }

    // Whole strings: quote choice and escapes.
    let samples = [
        "plain",
        "it's",
        "say \"hi\"",
        "both ' and \"",
        "back\\slash",
        "tab\tnl\ncr\r",
        "\u{0}\u{7}\u{1b}\u{7f}\u{80}\u{a0}\u{ad}\u{ff}",
        "\u{e9}\u{3c0}\u{65e5}\u{1f600}",
        "\u{2028}\u{feff}\u{e000}\u{10ffff}\u{378}",
        "",
    ];
    let json = serde_json::to_string(&samples).unwrap();
    let out = sciio_testkit::run_python(
        "import json, sys\nfor s in json.loads(sys.argv[1]): print(json.dumps(repr(s)))",
        &[&json],
    );
    for (line, s) in out.lines().zip(samples) {
        let python: String = serde_json::from_str(line).unwrap();
        assert_eq!(PyLiteral::Str(s.to_string()).repr(), python, "{s:?}");
        assert_eq!(
            PyLiteral::parse(&python).unwrap(),
            PyLiteral::Str(s.to_string())
        );
    }
}

//! Header text is Python's `repr()`: sciio's printer must quote and escape exactly like the
//! reference Python, for every code point, so that headers are byte-identical.

use sciio_core::pyliteral::is_printable;
use sciio_core::PyLiteral;

#[test]
fn python_repr_matches_sciio() {
    // Every code point Python deems unprintable, as merged ranges.
    let out = sciio_testkit::run_python(
        "import json\nbad = [c for c in range(0x110000) if not chr(c).isprintable() and not 0xd800 <= c < 0xe000]\nr = []\nfor c in bad:\n    if r and r[-1][1] == c - 1: r[-1][1] = c\n    else: r.append([c, c])\nprint(json.dumps(r))",
        &[],
    );
    let python: Vec<(u32, u32)> = serde_json::from_str(&out).unwrap();
    let mut ours: Vec<(u32, u32)> = Vec::new();
    for c in (0..0x110000u32).filter_map(char::from_u32) {
        if !is_printable(c) {
            let u = u32::from(c);
            match ours.last_mut() {
                Some(last) if last.1 + 1 == u => last.1 = u,
                _ => ours.push((u, u)),
            }
        }
    }
    assert_eq!(ours, python);

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

//! The `sciio` command against files numpy writes, and numpy reading what it writes.

use std::path::{Path, PathBuf};

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir};

/// Runs a failing command and checks the error contract: non-zero exit, exactly one line on
/// stderr starting with `sciio: error:`, nothing on stdout. Returns the line.
fn fails(args: &[&str], code: i32) -> String {
    let out = sciio(args);
    assert_eq!(out.status.code(), Some(code), "sciio {args:?}: {out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(stderr.starts_with("sciio: error: "), "{stderr:?}");
    assert!(out.stdout.is_empty());
    stderr.trim_end().to_string()
}

/// numpy writes one .npy per case into `dir`; returns the case names.
const CASES: &str = r#"
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
cases = {
    "f8_2d": rng.normal(size=(5, 4)),
    "f8_mixed": np.array([0.0, 1.5, -2.25, 100.125, 1e-3]),
    "f8_exp": np.array([1e-7, 1.0, 12345.678]),
    "f8_special": np.array([np.nan, np.inf, -np.inf, 0.5, -0.0]),
    "f8_big": np.arange(2000.0).reshape(40, 50) / 7,
    "f4": np.array([0.1, 0.2, 0.3, 1e5], dtype="<f4"),
    "f2": np.array([0.1, 1.5, 65504.0, -3.0], dtype="<f2"),
    "i4_3d": np.arange(60, dtype="<i4").reshape(3, 4, 5) - 30,
    "i8_long": np.arange(0, 300, dtype="<i8") * 1000003,
    "u1": np.arange(250, 256, dtype="u1"),
    "big_endian": np.arange(6, dtype=">i2").reshape(2, 3),
    "bool": np.array([True, False, True]),
    "unicode": np.array(["a", "it's", 'q"uote', "ünï"]),
    "bytes": np.array([b"ab", b"\x00\xff", b"x"]),
    "complex": np.array([1 + 2j, -0.5j, 3.25 - 1j]),
    "records": np.array([(1, 2.5, b"x"), (2, -1.0, b"yz")],
                        dtype=[("id", "<i8"), ("value", "<f8"), ("tag", "S2")]),
    "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    "scalar": np.array(3.25),
    "empty": np.zeros((0, 3)),
    "wide": np.linspace(-1, 1, 40),
    "f8_long": np.linspace(0, 1, 1001),
    "i8_3d_big": np.arange(3000).reshape(10, 10, 30),
    "f8_neg_zero": np.array([-0.0, 0.0]),
    "f8_all_nan": np.array([np.nan, np.nan]),
    "f8_extremes": np.array([1e300, -1e-300]),
    "f4_small": np.array([1e-5, 3.0], dtype="<f4"),
    "c8": np.array([1 + 1j, np.nan + 0j], dtype="<c8"),
    "i8_min": np.array([np.iinfo(np.int64).min, 5]),
    "u8_max": np.array([np.iinfo(np.uint64).max], dtype="<u8"),
    "dt_days": np.array(["2020-01-01", "1969-12-31", "NaT"], dtype="M8[D]"),
    "dt_seconds": np.array(["2020-01-01T12:34:56", "1900-03-01T00:00:01"], dtype="M8[s]"),
    "dt_millis": np.array(["2020-01-01T12:34:56.789"], dtype="M8[ms]"),
    "dt_months": np.array(["2020-01", "1969-02"], dtype="M8[M]"),
    "td_nat": np.array([1, "NaT"], dtype="m8[D]"),
    "one_field": np.array([(1,), (2,)], dtype=[("a", "<i4")]),
    "subarray": np.zeros(2, dtype=[("a", "<i4", (2,)), ("b", "<f8")]),
    "void": np.array([b"ab", b"cd"], dtype="V2"),
    "bool_0d": np.array(False),
    "str_0d": np.array("hello"),
    "complex_0d": np.array(2j),
    "f2_0d": np.array(0.1, dtype="<f2"),
    "f8_0d_big": np.array(1e16),
    "empty_strings": np.array(["", "a"]),
}
for name, a in cases.items():
    np.save(f"{d}/{name}.npy", a)
print(" ".join(cases))
"#;

fn write_cases(dir: &Path) -> Vec<String> {
    run_python(CASES, &[s(dir)])
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn cat_prints_what_numpy_prints() {
    let dir = tempdir();
    for name in write_cases(dir.path()) {
        let path = dir.path().join(format!("{name}.npy"));
        let ours = ok(&["cat", s(&path)]);
        let numpy = run_python(
            "import sys, numpy as np; print(np.load(sys.argv[1]))",
            &[s(&path)],
        );
        assert_eq!(ours, numpy, "case {name}");
    }
}

#[test]
fn cat_json_carries_numpys_dtype_shape_and_values() {
    let dir = tempdir();
    let check = r#"
import json, math, sys, numpy as np
path, doc = sys.argv[1], json.loads(sys.argv[2])
a = np.load(path)
descr = doc["dtype"]
dt = np.dtype(descr if isinstance(descr, str) else [tuple(e) for e in descr])
assert dt == a.dtype, (dt, a.dtype)
assert tuple(doc["shape"]) == a.shape, (doc["shape"], a.shape)
def feq(v, x):
    return v == "nan" if np.isnan(x) else float(v) == float(x)
def same(x, v, dt):
    if dt.names:
        return all(same(x[n], v[n], dt.fields[n][0]) for n in dt.names)
    if dt.subdtype is not None:
        return np.array_equal(np.array(v), x)
    if dt.kind == "f":
        return feq(v, x)
    if dt.kind == "c":
        return feq(v[0], x.real) and feq(v[1], x.imag)
    if dt.kind in "SV":
        return v.encode("latin-1") == bytes(x)
    if dt.kind in "mM":
        return v is None if np.isnat(x) else v == int(x.astype("i8"))

    return v == x.item() if hasattr(x, "item") else v == x
vals = doc["values"]
for idx in np.ndindex(a.shape):
    v = vals
    for i in idx:
        v = v[i]
    assert same(a[idx], v, a.dtype), (idx, a[idx], v)
print("ok")
"#;
    let names = write_cases(dir.path());
    for name in &names {
        if name == "empty" {
            continue;
        }
        let path = dir.path().join(format!("{name}.npy"));
        let doc = ok(&["cat", "--json", s(&path)]);
        let out = run_python(check, &[s(&path), doc.trim()]);
        assert_eq!(out.trim(), "ok", "case {name}");
    }
}

#[test]
fn ls_draws_the_members_numpy_saved() {
    let dir = tempdir();
    let npz = dir.path().join("saved.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], a=np.zeros((3, 4)), b=np.arange(10, dtype='<i4'), c=np.array(True))",
        &[s(&npz)],
    );
    let out = ok(&["ls", s(&npz)]);
    assert!(out.contains("npz"), "{out}");
    for row in [
        ["├── a", "<f8", "(3, 4)", "96 B"],
        ["├── b", "<i4", "(10,)", "40 B"],
        ["└── c", "|b1", "()", "1 B"],
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(row[0]))
            .unwrap_or_else(|| panic!("no row {row:?} in\n{out}"));
        for cell in row {
            assert!(line.contains(cell), "{cell} not in {line}");
        }
    }
    assert!(out.contains('┌') && out.contains('│'), "{out}");
}

#[test]
fn convert_npy_files_into_one_npz_numpy_loads() {
    let dir = tempdir();
    let names = write_cases(dir.path());
    let dst = dir.path().join("all.npz");
    let mut args = vec!["convert".to_string()];
    for name in &names {
        args.push(s(&dir.path().join(format!("{name}.npy"))).to_string());
    }
    args.push(s(&dst).to_string());
    args.extend(["--compress".to_string(), "deflate:6".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&args);
    let check = r#"
import sys, zipfile, numpy as np
d, dst, names = sys.argv[1], sys.argv[2], sys.argv[3].split()
with np.load(dst) as z:
    assert sorted(z.files) == sorted(names), z.files
    for n in names:
        a, b = np.load(f"{d}/{n}.npy"), z[n]
        assert a.dtype == b.dtype and a.shape == b.shape, n
        assert a.flags.f_contiguous == b.flags.f_contiguous, n
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fcmM"), n
with zipfile.ZipFile(dst) as zf:
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())
print("ok")
"#;
    let joined = names.join(" ");
    assert_eq!(
        run_python(check, &[s(dir.path()), s(&dst), &joined]).trim(),
        "ok"
    );
}

#[test]
fn convert_npz_member_back_to_npy_and_default_is_stored() {
    let dir = tempdir();
    let src = dir.path().join("src.npz");
    run_python(
        "import sys, numpy as np; np.savez_compressed(sys.argv[1], x=np.arange(12.0).reshape(3, 4), y=np.array([1, 2], dtype='>i8'))",
        &[s(&src)],
    );
    let one = dir.path().join("y.npy");
    ok(&["convert", &format!("{}:y", s(&src)), s(&one)]);
    let whole = dir.path().join("copy.npz");
    ok(&["convert", s(&src), s(&whole)]);
    let renamed = dir.path().join("renamed.npz");
    ok(&["convert", s(&one), &format!("{}:z", s(&renamed))]);
    let check = r#"
import sys, zipfile, numpy as np
src, one, whole, renamed = sys.argv[1:5]
z = np.load(src)
y = np.load(one)
assert y.dtype == np.dtype('>i8') and np.array_equal(y, z["y"])
w = np.load(whole)
assert sorted(w.files) == ["x", "y"] and np.array_equal(w["x"], z["x"])
assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(whole).infolist())
assert np.load(renamed).files == ["z"]
print("ok")
"#;
    let out = run_python(check, &[s(&src), s(&one), s(&whole), s(&renamed)]);
    assert_eq!(out.trim(), "ok");
}

#[test]
fn errors_are_one_line_with_non_zero_exit() {
    let dir = tempdir();
    let npz = dir.path().join("two.npz");
    run_python(
        "import sys, numpy as np; np.savez(sys.argv[1], a=np.zeros(3), b=np.ones(2))",
        &[s(&npz)],
    );
    let missing = dir.path().join("missing.npy");
    let out = dir.path().join("out.npy");
    let line = fails(&["cat", s(&missing)], 1);
    assert!(line.contains("missing.npy"), "{line}");
    let line = fails(&["cat", s(&npz)], 1);
    assert!(line.contains("2 arrays") && line.contains("/a"), "{line}");
    let line = fails(&["cat", &format!("{}:nope", s(&npz))], 1);
    assert!(line.contains("nope"), "{line}");
    let line = fails(&["convert", s(&npz), s(&out)], 1);
    assert!(line.contains("one array"), "{line}");
    let line = fails(
        &[
            "convert",
            &format!("{}:a", s(&npz)),
            s(&out),
            "--compress",
            "zstd:3",
        ],
        1,
    );
    assert!(line.contains("zstd"), "{line}");
    let line = fails(
        &[
            "convert",
            s(&npz),
            s(&dir.path().join("x.npz")),
            "--compress",
            "deflate:x:y:z",
        ],
        2,
    );
    assert!(line.contains("deflate:x:y:z"), "{line}");
    fails(&["convert", s(&npz), s(&dir.path().join("x.parquet"))], 1);
    fails(&["convert", s(&npz), s(&dir.path().join("x.unknown"))], 1);
    fails(&["ls"], 2);
    fails(&["frobnicate"], 2);
    fails(&["ls", s(&npz), "--bogus"], 2);
    let junk = dir.path().join("junk.npy");
    std::fs::write(&junk, b"\x93NUMPY\x01\x00\xff\xff{'descr'").unwrap();
    fails(&["ls", s(&junk)], 1);
    assert!(!out.exists());
}

fn folder_listing(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
}

#[test]
fn a_failing_conversion_leaves_no_partial_file_and_keeps_the_old_one() {
    let dir = tempdir();
    let src = dir.path().join("src.npz");
    // Two members; the second one's data is corrupted so its CRC-32 check fails only after
    // the first member has already been streamed into the destination.
    let corrupt = r#"
import sys, zipfile, numpy as np
path = sys.argv[1]
np.savez(path, first=np.arange(100000.0), second=np.arange(1000.0))
with zipfile.ZipFile(path) as zf:
    info = zf.getinfo("second.npy")
with open(path, "r+b") as f:
    f.seek(info.header_offset + 26)
    name_len, extra_len = np.frombuffer(f.read(4), "<u2")
    f.seek(info.header_offset + 30 + int(name_len) + int(extra_len) + info.file_size - 1)
    last = f.read(1)
    f.seek(-1, 1)
    f.write(bytes([last[0] ^ 0xFF]))
"#;
    run_python(corrupt, &[s(&src)]);
    let dst = dir.path().join("dst.npz");
    std::fs::write(&dst, b"precious old content").unwrap();
    let before = folder_listing(dir.path());

    let line = fails(&["convert", s(&src), s(&dst), "--compress", "deflate:1"], 1);
    assert!(
        line.contains("second"),
        "the error names the member: {line}"
    );
    assert_eq!(std::fs::read(&dst).unwrap(), b"precious old content");
    assert_eq!(
        folder_listing(dir.path()),
        before,
        "a temporary file was left behind"
    );

    // A destination that did not exist is not created either.
    let fresh = dir.path().join("fresh.npz");
    fails(&["convert", s(&src), s(&fresh)], 1);
    assert!(!fresh.exists());
    assert_eq!(folder_listing(dir.path()), before);

    // Failures before any write (missing node, unsupported target) keep it intact too.
    fails(&["convert", &format!("{}:missing", s(&src)), s(&dst)], 1);
    fails(&["convert", s(&src), s(&dst), "--to", "npy"], 1);
    assert_eq!(std::fs::read(&dst).unwrap(), b"precious old content");
    assert_eq!(folder_listing(dir.path()), before);
}

#[test]
fn truncated_npy_is_a_clear_error() {
    let dir = tempdir();
    let path = dir.path().join("t.npy");
    run_python(
        "import sys, numpy as np; np.save(sys.argv[1], np.arange(100.0))",
        &[s(&path)],
    );
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
    for cmd in ["ls", "cat"] {
        let line = fails(&[cmd, s(&path)], 1);
        assert!(line.contains("truncated"), "{line}");
    }
    let line = fails(&["convert", s(&path), s(&dir.path().join("o.npz"))], 1);
    assert!(line.contains("truncated"), "{line}");
    assert!(!dir.path().join("o.npz").exists());
}

/// Everything `sciio` wrote to a terminal on its stderr, and how it ended.
struct TtyRun {
    status: std::process::ExitStatus,
    stdout: String,
    terminal: String,
}

/// Runs `sciio args` with stderr on a fresh 100x30 pseudo-terminal (stdout piped, stdin empty)
/// and collects what reached the terminal.
fn sciio_with_stderr_on_a_tty(args: &[&str], env: &[(&str, &str)]) -> TtyRun {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    use std::process::Stdio;

    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("no pseudo-terminal");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let size = rustix::termios::Winsize {
        ws_row: 30,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    rustix::termios::tcsetwinsize(&master, size).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(std::ffi::OsStr::from_bytes(name.as_bytes()))
        .unwrap();
    // Drain the terminal while sciio runs, so that a full buffer never blocks it; reading the
    // master ends with EIO once the last handle on the terminal side is closed.
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = master.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
        seen
    });
    let out = {
        // The Command holds the terminal handle: dropped at the end of this block.
        let mut cmd = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"));
        cmd.args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stderr(Stdio::from(terminal));
        cmd.output().expect("cannot run the sciio binary")
    };
    let seen = reader.join().unwrap();
    TtyRun {
        status: out.status,
        stdout: String::from_utf8(out.stdout).unwrap(),
        terminal: without_escapes(&String::from_utf8_lossy(&seen)),
    }
}

/// `text` without ANSI escape sequences (cursor moves, line clears) and carriage returns.
fn without_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ parameters, then one final byte in '@'..='~'.
                if chars.next() == Some('[') {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\r' => out.push('\n'),
            c => out.push(c),
        }
    }
    out
}

/// An 8 MiB int64 array numpy writes. The tests below make the bar appear at once
/// (`SCIIO_PROGRESS_AFTER_MS=0`) instead of after 0.4 s, so that they do not depend on how
/// fast the machine compresses.
fn to_compress(dir: &Path) -> PathBuf {
    let src = dir.join("big.npy");
    run_python(
        "import sys, numpy as np; np.save(sys.argv[1], np.random.default_rng(1).integers(0, 1000, size=1 << 20))",
        &[s(&src)],
    );
    src
}

#[test]
fn convert_draws_a_progress_bar_on_a_terminal() {
    let dir = tempdir();
    let src = to_compress(dir.path());
    let dst = dir.path().join("bar.npz");
    let run = sciio_with_stderr_on_a_tty(
        &["convert", s(&src), s(&dst), "--compress", "deflate:1"],
        &[("SCIIO_PROGRESS_AFTER_MS", "0")],
    );
    assert!(run.status.success(), "{:?}: {}", run.status, run.terminal);
    assert!(
        run.stdout.contains("wrote 1 array (8.0 MiB"),
        "{}",
        run.stdout
    );
    // indicatif's template: `DST [=====>   ] 2.00 MiB/8.00 MiB 30 MiB/s eta 2s`.
    let bar = run
        .terminal
        .lines()
        .find(|l| l.contains("/8.00 MiB"))
        .unwrap_or_else(|| panic!("no progress bar on the terminal: {:?}", run.terminal));
    assert!(bar.starts_with(&format!("{} [", dst.display())), "{bar:?}");
    assert!(bar.contains("eta"), "{bar:?}");
    // The array's rows beside the bytes: their share of the 1 Mi rows.
    assert!(bar.contains("/1,048,576 rows"), "{bar:?}");
    // The bar is cleared when done, and nothing but the bar reached stderr.
    assert!(
        run.terminal
            .lines()
            .all(|l| l.trim().is_empty() || l.contains("/8.00 MiB")),
        "{:?}",
        run.terminal
    );
    let check = "import sys, numpy as np; assert np.array_equal(np.load(sys.argv[1]), np.load(sys.argv[2])['big']); print('ok')";
    assert_eq!(run_python(check, &[s(&src), s(&dst)]).trim(), "ok");
}

/// Into a MAT file the data goes column by column: bytes only, no rows.
#[test]
fn convert_into_mat_draws_bytes_without_rows() {
    let dir = tempdir();
    let src = to_compress(dir.path());
    let dst = dir.path().join("bar.mat");
    let run = sciio_with_stderr_on_a_tty(
        &["convert", s(&src), s(&dst)],
        &[("SCIIO_PROGRESS_AFTER_MS", "0")],
    );
    assert!(run.status.success(), "{:?}: {}", run.status, run.terminal);
    let bar = run
        .terminal
        .lines()
        .find(|l| l.contains("/8.00 MiB"))
        .unwrap_or_else(|| panic!("no progress bar on the terminal: {:?}", run.terminal));
    assert!(!bar.contains("rows"), "{bar:?}");
}

#[test]
fn convert_draws_no_progress_bar_when_stderr_is_not_a_terminal() {
    let dir = tempdir();
    let src = to_compress(dir.path());
    let dst = dir.path().join("quiet.npz");
    // The bar would be drawn at once on a terminal (the test above).
    let out = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .args(["convert", s(&src), s(&dst), "--compress", "deflate:1"])
        .env("SCIIO_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_panic_prints_one_line_and_exits_non_zero() {
    let out = sciio_testkit::child_command(env!("CARGO_BIN_EXE_sciio"))
        .args(["ls", "whatever.npy"])
        .env("SCIIO_PANIC_FOR_TEST", "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(
        stderr.starts_with(
            "sciio: internal error (a bug, please report it): SCIIO_PANIC_FOR_TEST is set (a deliberate panic) at "
        ),
        "{stderr:?}"
    );
}

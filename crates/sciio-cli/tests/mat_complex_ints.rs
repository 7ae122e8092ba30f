//! MATLAB complex integer variables (int8..uint64: numpy has none) streamed as complex doubles
//! (issue 17): Level-5 files (little- and big-endian, uncompressed and v7-compressed, written
//! as MATLAB lays them out by python/mat_complex_ints.py, since scipy.io cannot write them)
//! and v7.3 files (h5py-made compounds of `real` and `imag` integers) into `.npz`, `.h5` and
//! MAT give the values scipy.io.loadmat and h5py give (scipy.io makes a complex uint32 a
//! complex64, which rounds: that one is checked against the integers themselves); a 64-bit
//! part beyond 2^53 stops the conversion with the whole read's reason, leaving no output; the
//! peak RSS does not grow with the variable.
#![cfg(all(feature = "mat", feature = "hdf5"))]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, run_python_script, tempdir};

/// Rows of the variables (ROWS-by-3): every Level-5 one's real part over 1 MiB and the
/// 64-bit v7.3 ones over 16 MiB, the sizes from which they stream.
const ROWS: &str = "350000";

/// `sys.argv[2]` (`.npz`, `.h5` or a MAT file) holds variables a..e of the MAT file
/// `sys.argv[1]` as complex doubles equal to the integers' real + 1j * imag (the parts read
/// by h5py from a v7.3 file, else made again by the generator), and equal to what
/// scipy.io.loadmat gives for a Level-5 source (complex64 for uint32: equal once rounded so).
const SAME: &str = r#"
import sys, numpy as np, scipy.io, h5py, importlib.util
src, out, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
spec = importlib.util.spec_from_file_location("gen", sys.argv[4])
gen = importlib.util.module_from_spec(spec); spec.loader.exec_module(gen)
if fmt == "v73":
    with h5py.File(src) as f:
        parts = {k: (f[k][()].T["real"], f[k][()].T["imag"]) for k in "abcde"}
else:
    parts = {k: (re, im) for k, (_, re, im) in gen.values(int(sys.argv[5])).items()}
    theirs = scipy.io.loadmat(src)
if out.endswith(".npz"):
    got = dict(np.load(out))
elif out.endswith(".h5"):
    with h5py.File(out) as f:
        got = {k: f[k][()] for k in "abcde"}
else:
    got = scipy.io.loadmat(out)
for k, (re, im) in parts.items():
    want = re.astype(np.float64) + 1j * im.astype(np.float64)
    g = got[k]
    assert g.dtype == np.complex128 and g.shape == want.shape, (k, g.dtype, g.shape)
    assert np.array_equal(g, want), k
    if fmt != "v73":
        t = theirs[k]
        assert np.array_equal(g.astype(t.dtype), t), k
print("same")
"#;

fn generator() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    root.join("mat_complex_ints.py")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn complex_integers_stream_into_npz_h5_and_mat_as_the_tools_read_them() {
    let dir = tempdir();
    for fmt in ["v5", "v5be", "v7", "v73"] {
        let src = dir.path().join(format!("{fmt}.mat"));
        run_python_script("python/mat_complex_ints.py", &[s(&src), fmt, ROWS]);
        let outs: &[&str] = match fmt {
            "v7" => &["out.npz", "out.h5", "out.mat"],
            "v73" => &["out.npz", "out.mat"],
            _ => &["out.npz"],
        };
        for name in outs {
            let out = dir.path().join(name);
            match name.ends_with(".mat") {
                true => ok(&["convert", s(&src), s(&out), "--mat-version", "7"]),
                false => ok(&["convert", s(&src), s(&out)]),
            };
            let said = run_python(SAME, &[s(&src), s(&out), fmt, &generator(), ROWS]);
            assert_eq!(said.trim(), "same", "{fmt} -> {name}");
            std::fs::remove_file(&out).unwrap();
        }
    }
}

#[test]
fn a_complex_integer_beyond_2_53_stops_the_conversion_with_the_reason() {
    // Found in the piece holding it (the last element), after the others were written: the
    // conversion fails with the whole read's reason and its output is removed, as on any
    // error in the middle of a streamed variable.
    let dir = tempdir();
    for fmt in ["v7", "v5be", "v73"] {
        let src = dir.path().join(format!("{fmt}.mat"));
        run_python_script(
            "python/mat_complex_ints.py",
            &[s(&src), fmt, ROWS, "beyond"],
        );
        for (from, name) in [
            (format!("{}:f", s(&src)), "f.npy"),
            (s(&src).into(), "all.npz"),
        ] {
            let out = dir.path().join(name);
            let done = sciio(&["convert", &from, s(&out)]);
            let err = String::from_utf8_lossy(&done.stderr);
            assert!(!done.status.success(), "{fmt} {name}: converted");
            assert!(
                err.contains("2^53") && err.contains("/f"),
                "{fmt} {name}: {err}"
            );
            assert!(!out.exists(), "{fmt} {name}: a partial output is left");
        }
    }
}

/// Runs `sciio args...` and returns its peak RSS in bytes, failing the test when it fails.
fn peak_rss(args: &[&str]) -> u64 {
    sciio_testkit::peak_rss(env!("CARGO_BIN_EXE_sciio"), args)
}

#[test]
fn complex_integers_stream_in_bounded_memory() {
    // A complex int16 (Level-5 v7) and int64 (v7.3) of 16.8 and 134 MB as complex doubles:
    // read whole, the peak RSS grows by over twice the difference (the parts, their doubles,
    // the complex array).
    let dir = tempdir();
    for (fmt, var) in [("v7", "b"), ("v73", "d")] {
        let src = dir.path().join(format!("{fmt}.mat"));
        let out = dir.path().join("out.npy");
        let mut rss = Vec::new();
        for rows in ["350000", "2800000"] {
            run_python_script("python/mat_complex_ints.py", &[s(&src), fmt, rows]);
            let from = format!("{}:{var}", s(&src));
            rss.push(peak_rss(&["convert", &from, s(&out)]));
            eprintln!(
                "{fmt} {var} {rows} rows: peak RSS {} MiB",
                rss[rss.len() - 1] >> 20
            );
        }
        let growth = rss[1].saturating_sub(rss[0]);
        assert!(
            growth < 48 << 20,
            "{fmt}: peak RSS {} MiB then {} MiB",
            rss[0] >> 20,
            rss[1] >> 20
        );
    }
}

//! `sciio` on MAT v4 and Level-5 (v5/v6/v7) files: every `.mat` file of the installed scipy's
//! test data that `scipy.io.loadmat` reads is listed (with its MAT version and header text)
//! and converted to `.npz`, whose arrays numpy reads; every file scipy refuses gets a
//! one-line error. No file is skipped. (Values against scipy's: crates/sciio-mat/tests/
//! scipy_corpus.rs.)
#![cfg(feature = "mat")]

mod common;
use common::{ok, s, sciio};

use sciio_testkit::{run_python, tempdir, wheel_files};

const SCIPY_READS: &str = r#"
import sys, warnings, scipy.io
warnings.simplefilter("ignore")
for f in sys.argv[1:]:
    try:
        scipy.io.loadmat(f)
        print("ok")
    except NotImplementedError:
        print("v7.3")  # scipy leaves v7.3 (HDF5) files to h5py
    except Exception:
        print("refused")
"#;

#[test]
fn scipy_test_files_list_and_convert() {
    let files = wheel_files("scipy/io/matlab/tests/data", ".mat");
    let args: Vec<&str> = files.iter().map(|p| s(p)).collect();
    let verdicts = run_python(SCIPY_READS, &args);
    let verdicts: Vec<&str> = verdicts.lines().collect();
    assert_eq!(verdicts.len(), files.len());
    let dir = tempdir();
    let (mut converted, mut by_leaf, mut refused, mut left_out) = (0, 0, 0, 0);
    for (i, (f, verdict)) in files.iter().zip(verdicts).enumerate() {
        let out = dir.path().join(format!("{i}.npz"));
        let listed = sciio(&["ls", s(f)]);
        let converting = sciio(&["convert", s(f), s(&out)]);
        if verdict == "refused" && converting.status.success() {
            // One damaged variable (a corrupted zlib stream) is left out with the reason and
            // the file's other variables convert (scipy refuses the whole file).
            let err = String::from_utf8(converting.stderr).unwrap();
            assert!(err.starts_with("sciio: left out: "), "{f:?}: {err}");
            assert!(err.contains("cannot be read"), "{f:?}: {err}");
            left_out += 1;
            continue;
        }
        if verdict == "refused" {
            // ls reads headers only; convert reads every value and must fail cleanly.
            assert_eq!(converting.status.code(), Some(1), "{f:?} converted");
            let err = String::from_utf8(converting.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{f:?}: {err}");
            assert!(err.starts_with("sciio: error: "), "{err}");
            refused += 1;
            continue;
        }
        let text = String::from_utf8(listed.stdout).unwrap();
        assert!(listed.status.success(), "{f:?}: {:?}", listed.stderr);
        let version = if verdict == "v7.3" { "7.3" } else { "" };
        assert!(
            text.contains(&format!("MAT-file version {version}")),
            "{f:?}: {text}"
        );
        let err = String::from_utf8(converting.stderr).unwrap();
        if err.contains("nothing to convert: no array there") {
            // A file of values without numpy arrays (a struct without fields).
            let file = sciio::File::open(f).unwrap();
            assert!(file.root().array_leaves("").is_empty(), "{f:?}");
            by_leaf += 1;
            continue;
        }
        if !converting.status.success() {
            // As for v7.3: a value npz cannot hold (sparse matrix, function handle, object) is
            // refused by name; then every array leaf converts on its own (SRC:NODE).
            assert!(err.contains("npz cannot hold a "), "{f:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{f:?}: {err}");
            let mut file = sciio::File::open(f).unwrap();
            let leaves: Vec<String> = file
                .root()
                .array_leaves("")
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            for (k, leaf) in leaves.iter().enumerate() {
                let one = dir.path().join(format!("{i}-{k}.npy"));
                sciio::convert(
                    &mut file,
                    Some(leaf),
                    &one,
                    &Default::default(),
                    &mut |_, _| {},
                )
                .unwrap_or_else(|e| panic!("{f:?}{leaf}: {e}"));
            }
            by_leaf += 1;
            continue;
        }
        // What npz cannot hold (sparse matrices, function handles, objects) is left out with
        // the conversion plan's one grouped summary on stderr, the rest converted.
        if err.contains("left out") {
            assert!(
                err.lines().all(|l| l.starts_with("sciio: left out")),
                "{f:?}: {err}"
            );
            left_out += 1;
        }
        // numpy opens what was written (files whose variables are all objects without a
        // numpy array write no arrays at all).
        if out.exists() {
            run_python(
                "import sys, numpy as np; z = np.load(sys.argv[1]); [z[k] for k in z.files]",
                &[s(&out)],
            );
        }
        converted += 1;
    }
    assert!(
        // Sparse matrices are carried into .npz (save_npz members) since issue 15, so few
        // files leave anything out now.
        converted >= 100 && refused >= 5,
        "{converted} {by_leaf} {left_out} {refused}"
    );
}

#[test]
fn ls_shows_version_and_header_of_level5_and_v4() {
    let dir = tempdir();
    let (v7, v5, v4) = (
        dir.path().join("a.mat"),
        dir.path().join("b.mat"),
        dir.path().join("c.mat"),
    );
    run_python(
        "import sys, numpy as np, scipy.io as sio\n\
         d = {'x': np.arange(6.0).reshape(2, 3), 'name': 'hi'}\n\
         sio.savemat(sys.argv[1], d, do_compression=True)\n\
         sio.savemat(sys.argv[2], d)\n\
         sio.savemat(sys.argv[3], {'x': np.arange(6.0).reshape(2, 3)}, format='4')",
        &[s(&v7), s(&v5), s(&v4)],
    );
    for (f, version) in [(&v7, "7"), (&v5, "5"), (&v4, "4")] {
        let text = ok(&["ls", s(f)]);
        let line = format!("MAT-file version {version}: ");
        assert!(text.contains(&line), "{text}");
        if version != "4" {
            assert!(text.contains("MATLAB 5.0 MAT-file"), "{text}");
        }
        assert!(text.contains("(2, 3)"), "{text}");
        let cat = sciio(&["cat", &format!("{}:x", s(f))]);
        let shown = String::from_utf8(cat.stdout).unwrap();
        assert!(cat.status.success() && shown.contains('5'), "{shown}");
    }
}

#[test]
fn convert_writes_mat_v7_and_v5_that_scipy_reads() {
    let dir = tempdir();
    let p = |n: &str| dir.path().join(n);
    let (npz, s5, s7) = (p("in.npz"), p("scipy5.mat"), p("scipy7.mat"));
    run_python(
        "import sys, numpy as np\n\
         np.savez(sys.argv[1], x=np.arange(12.0).reshape(3, 4), n=np.int16([[1, -2]]),\n\
                  b=np.array([True, False]), t=np.str_('hello'))",
        &[s(&npz)],
    );
    sciio_testkit::run_python_script("python/mat5_roundtrip.py", &["make", s(&s5), s(&s7)]);
    for version in ["7", "5"] {
        // numpy arrays into a MAT v7/v5 file: scipy reads what numpy wrote.
        let out = p(&format!("from_npz_{version}.mat"));
        ok(&["convert", s(&npz), s(&out), "--mat-version", version]);
        let check = run_python(
            "import sys, numpy as np, scipy.io as sio\n\
             m = sio.loadmat(sys.argv[1]); z = np.load(sys.argv[2])\n\
             assert np.array_equal(m['x'], z['x']) and m['x'].dtype == np.float64\n\
             assert np.array_equal(m['n'], z['n']) and m['n'].dtype == np.int16\n\
             assert m['b'].shape == (1, 2) and m['b'].ravel().tolist() == [1, 0]\n\
             assert m['t'].tolist() == ['hello'], m['t']\n\
             print(m['__header__'].decode()[:19])",
            &[s(&out), s(&npz)],
        );
        assert_eq!(check.trim(), "MATLAB 5.0 MAT-file");
        // A MAT file into another version: MATLAB values copied (cells, structs, sparse...),
        // read by scipy exactly as scipy's own file.
        let copied = p(&format!("copy_{version}.mat"));
        ok(&["convert", s(&s7), s(&copied), "--mat-version", version]);
        let same = sciio_testkit::run_python_script(
            "python/mat5_roundtrip.py",
            &["compare", s(&s5), s(&copied)],
        );
        assert_eq!(same.trim(), "same");
        let listed = ok(&["ls", s(&copied)]);
        assert!(
            listed.contains(&format!("MAT-file version {version}: ")),
            "{listed}"
        );
    }
    // The default stays v7.3.
    let default = p("default.mat");
    ok(&["convert", s(&npz), s(&default)]);
    assert!(ok(&["ls", s(&default)]).contains("MAT-file version 7.3: "));
    // Misuse is refused in one line.
    for args in [
        vec!["convert", s(&npz), s(&p("x.npz")), "--mat-version", "7"],
        vec![
            "convert",
            s(&npz),
            s(&p("y.mat")),
            "--mat-version",
            "5",
            "--compress",
            "deflate:3",
        ],
        vec!["convert", s(&npz), s(&p("z.mat")), "--mat-version", "6.5"],
    ] {
        let out = sciio(&args);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn matrices_convert_to_npz_column_major_as_np_savez_writes_them() {
    // MATLAB's column-major data goes to the member as stored (`fortran_order: True`), as
    // `np.savez` writes the arrays `scipy.io.loadmat` returns: the same archive, byte for
    // byte; row vectors and scalars stay C order (numpy's header for them). A v7.3 file too.
    let dir = tempdir();
    let (v7, v73) = (dir.path().join("m7.mat"), dir.path().join("m73.mat"));
    let (ours, theirs) = (dir.path().join("ours.npz"), dir.path().join("theirs.npz"));
    run_python(
        "import sys, numpy as np, scipy.io as sio\n\
         d = {'m': np.arange(3000.0).reshape(60, 50) * 0.5, 'i': np.arange(24, dtype=np.int16).reshape(2, 3, 4),\n\
              'r': np.arange(5.0)[None, :]}\n\
         sio.savemat(sys.argv[1], d, do_compression=True)\n\
         l = sio.loadmat(sys.argv[1])\n\
         np.savez(sys.argv[2], **{k: l[k] for k in ('i', 'm', 'r')})",
        &[s(&v7), s(&theirs)],
    );
    ok(&["convert", s(&v7), s(&ours)]);
    let out = run_python(
        r#"
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for k in sorted(a.files):
    assert np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype, k
    print(k, a[k].flags.f_contiguous and not a[k].flags.c_contiguous)
"#,
        &[s(&ours), s(&theirs)],
    );
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>(),
        ["i", "True", "m", "True", "r", "False"]
    );
    // Member order aside (sciio follows the file), the members are numpy's own bytes.
    let members = run_python(
        "import sys, zipfile\n\
         a, b = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])\n\
         print(all(a.read(n) == b.read(n) for n in b.namelist()), sorted(a.namelist()) == sorted(b.namelist()))",
        &[s(&ours), s(&theirs)],
    );
    assert_eq!(members.trim(), "True True");
    // v7.3 (written by sciio from the same arrays): the same F-ordered members.
    ok(&["convert", s(&ours), s(&v73)]);
    let back = dir.path().join("back.npz");
    ok(&["convert", s(&v73), s(&back)]);
    let again = run_python(
        "import sys, zipfile\n\
         a, b = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])\n\
         print(all(a.read(n) == b.read(n) for n in b.namelist()))",
        &[s(&back), s(&theirs)],
    );
    assert_eq!(again.trim(), "True");
}

#[test]
fn large_v7_matrices_stream_to_npz_as_np_savez_writes_them_and_damage_is_an_error() {
    // Variables compressed to over 1 MiB holding one real array in their class's type are
    // streamed into the member as they inflate (several 1 MiB pieces each); a complex one
    // is read the general way. The members are np.savez's bytes of scipy's loadmat.
    let dir = tempdir();
    let (mat, theirs) = (dir.path().join("big.mat"), dir.path().join("theirs.npz"));
    run_python(
        "import sys, numpy as np, scipy.io as sio\n\
         r = np.random.default_rng(7)\n\
         d = {'a': r.random((700, 500)), 'b': r.integers(-2**31, 2**31, (90, 80, 70), dtype=np.int32),\n\
              's': r.random((1000, 700)).astype(np.float32), 'v': r.random((1, 300000)),\n\
              'c': r.random((400, 400)) + 1j * r.random((400, 400))}\n\
         sio.savemat(sys.argv[1], d, do_compression=True)\n\
         l = sio.loadmat(sys.argv[1])\n\
         np.savez(sys.argv[2], **{k: l[k] for k in d})",
        &[s(&mat), s(&theirs)],
    );
    let ours = dir.path().join("ours.npz");
    ok(&["convert", s(&mat), s(&ours)]);
    let same = run_python(
        "import sys, zipfile\n\
         a, b = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])\n\
         print(sorted(a.namelist()) == sorted(b.namelist()), [n for n in b.namelist() if a.read(n) != b.read(n)])",
        &[s(&ours), s(&theirs)],
    );
    assert_eq!(same.trim(), "True []");
    // A flipped byte deep inside the first variable's stream (found only after the first
    // pieces are written) or a cut file: a one-line error, and the destination as it was.
    let good = std::fs::read(&mat).unwrap();
    let bad = dir.path().join("bad.mat");
    for at in [1_000_000usize, 2_500_000] {
        let mut bytes = good.clone();
        bytes[at] ^= 0x55;
        std::fs::write(&bad, &bytes).unwrap();
        let out = sciio(&["convert", s(&bad), s(&ours)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "flipped byte at {at} converted");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        let still = run_python(
            "import sys, zipfile\n\
             a, b = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])\n\
             print(all(a.read(n) == b.read(n) for n in b.namelist()))",
            &[s(&ours), s(&theirs)],
        );
        assert_eq!(
            still.trim(),
            "True",
            "the destination changed after a failed convert"
        );
    }
    std::fs::write(&bad, &good[..good.len() / 2]).unwrap();
    let fresh = dir.path().join("fresh.npz");
    let out = sciio(&["convert", s(&bad), s(&fresh)]);
    assert!(!out.status.success());
    assert!(!fresh.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

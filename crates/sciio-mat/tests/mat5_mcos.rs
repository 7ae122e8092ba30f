//! MATLAB objects (MCOS: string, datetime, categorical, table) in MAT v7 files, written by
//! mat-io (the Python reader/writer of MATLAB's object format): sciio decodes them from the
//! Level-5 subsystem to the same values it reads from mat-io's v7.3 file of the same data
//! (whose decoding tests/mcos.rs checks against mat-io's own reading); a damaged subsystem
//! leaves the objects opaque with the reason and the other variables readable.

use sciio_mat::{MatFile, MatValue, MatVersion};
use sciio_testkit::{run_python, tempdir};

const MAKE: &str = r#"
import sys, warnings, numpy as np, pandas as pd, matio
warnings.simplefilter("ignore")
values = {
    "s": np.array([["p", "qq"], ["", "rst"]], dtype=np.dtypes.StringDType()),
    "dt": np.array([["2024-01-02T03:04:05.006", "NaT"]], dtype="datetime64[ms]"),
    "cat": pd.Categorical(["a", "b", "a"], categories=["b", "a", "z"]),
    "t": pd.DataFrame({"x": [1.5, 2.5, 3.5], "n": np.array([1, 2, 3], dtype=np.int32)}),
    "plain": np.arange(3.0),
}
matio.save_to_mat(sys.argv[1], values, version="v7")
matio.save_to_mat(sys.argv[2], values, version="v7.3")
"#;

#[test]
fn v7_objects_read_like_their_v73_twins() {
    let dir = tempdir();
    let (v7, v73) = (dir.path().join("o7.mat"), dir.path().join("o73.mat"));
    run_python(MAKE, &[v7.to_str().unwrap(), v73.to_str().unwrap()]);
    let a = MatFile::open(&v7).unwrap();
    let b = MatFile::open(&v73).unwrap();
    assert_eq!(a.version(), MatVersion::V7);
    for name in ["s", "dt", "cat", "t", "plain"] {
        let (x, y) = (a.read(name).unwrap(), b.read(name).unwrap());
        // Compared by their debug form: NaT is a NaN, unequal to itself.
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{name}");
        if name != "plain" {
            assert!(matches!(x, MatValue::Object(_)), "{name}: {x:?}");
        }
        assert_eq!(
            a.info(name).unwrap().shape,
            b.info(name).unwrap().shape,
            "{name}"
        );
    }

    // Without the subsystem offset in the header, objects stay opaque (with why), the rest
    // reads, and the orphaned subsystem shows as scipy shows it.
    let mut bytes = std::fs::read(&v7).unwrap();
    bytes[116..124].fill(0);
    let broken = dir.path().join("broken.mat");
    std::fs::write(&broken, &bytes).unwrap();
    let m = MatFile::open(&broken).unwrap();
    assert_eq!(m.read("plain").unwrap(), b.read("plain").unwrap());
    let MatValue::Opaque(o) = m.read("s").unwrap() else {
        panic!("s")
    };
    assert_eq!(o.class, "string");
    assert!(o.note.contains("no subsystem"), "{}", o.note);
    assert!(m
        .names()
        .unwrap()
        .contains(&"__function_workspace__".to_string()));
}

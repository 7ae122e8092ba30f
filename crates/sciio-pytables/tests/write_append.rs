//! Appending with sciio to tables PyTables created, and failures that must leave the
//! destination absent or intact.

use sciio_hdf5::{ByteOrder, Field, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

/// libhdf5 locks files with `flock`, and descriptors are inherited by the Python processes other
/// test threads spawn: a file open here could look locked to PyTables there. Tests in this
/// binary therefore run one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const MAKE_TABLE: &str = r#"
import sys, numpy as np, tables as tb
class R(tb.IsDescription):
    id = tb.Int64Col(pos=0)
    x = tb.Float64Col(pos=1)
    name = tb.StringCol(8, pos=2)
    ok = tb.BoolCol(pos=3)
with tb.open_file(sys.argv[1], "w") as f:
    t = f.create_table("/", "t", R, "made by PyTables", filters=tb.Filters(int(sys.argv[3]), sys.argv[2]), expectedrows=5000)
    n = int(sys.argv[4])
    t.append([(i, i / 2, b"py%d" % i, i % 2 == 0) for i in range(n)])
"#;

const READ_TABLE: &str = r#"
import sys, tables as tb
with tb.open_file(sys.argv[1]) as f:
    t = f.root.t
    a = t.read()
    assert t.nrows == len(a) == int(sys.argv[2]), (t.nrows, len(a))
    assert t.attrs.NROWS == t.nrows
    for i, r in enumerate(a):
        assert r["id"] == i and r["x"] == i / 2 and r["ok"] == (i % 2 == 0), r
        assert r["name"] == (b"py%d" % i if i < int(sys.argv[3]) else b"rs%d" % i), r
    print("OK", t.nrows, t.filters)
"#;

fn row_type() -> H5Type {
    let le = ByteOrder::Little;
    H5Type::Compound {
        size: 25,
        fields: vec![
            Field {
                name: "id".into(),
                offset: 0,
                ty: H5Type::Int {
                    size: 8,
                    signed: true,
                    order: le,
                },
            },
            Field {
                name: "x".into(),
                offset: 8,
                ty: H5Type::Float {
                    size: 8,
                    precision: 64,
                    order: le,
                },
            },
            Field {
                name: "name".into(),
                offset: 16,
                ty: H5Type::FixedString {
                    size: 8,
                    charset: sciio_hdf5::CharSet::Ascii,
                },
            },
            Field {
                name: "ok".into(),
                offset: 24,
                ty: H5Type::Bitfield {
                    size: 1,
                    precision: 8,
                    order: le,
                },
            },
        ],
    }
}

fn rows(from: i64, to: i64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in from..to {
        out.extend_from_slice(&i.to_le_bytes());
        out.extend_from_slice(&(i as f64 / 2.0).to_le_bytes());
        let mut name = format!("rs{i}").into_bytes();
        name.resize(8, 0);
        out.extend_from_slice(&name);
        out.push(u8::from(i % 2 == 0));
    }
    out
}

fn append_to_pytables_table(complib: &str, level: &str) {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("t.h5");
    let p = path.to_str().unwrap();
    // 1234 rows: the last chunk is partial, so sciio must continue it.
    sciio_testkit::run_python(MAKE_TABLE, &[p, complib, level, "1234"]);
    let file = PtWriter::open_append(&path).unwrap();
    let mut t = file.table("/t").unwrap();
    assert_eq!(t.row_type(), &row_type());
    assert_eq!(t.nrows(), 1234);
    for start in (1234..20_000).step_by(3001) {
        t.append(&rows(start, (start + 3001).min(20_000))).unwrap();
    }
    assert_eq!(t.nrows(), 20_000);
    drop(t);
    file.finish().unwrap();
    let out = sciio_testkit::run_python(READ_TABLE, &[p, "20000", "1234"]);
    assert!(out.starts_with("OK 20000"), "{out}");
}

#[test]
fn appends_to_a_pytables_table_uncompressed() {
    let _serial = serial();
    append_to_pytables_table("zlib", "0");
}

#[test]
fn appends_to_a_pytables_table_with_zlib() {
    let _serial = serial();
    append_to_pytables_table("zlib", "5");
}

#[test]
fn appends_to_a_pytables_table_with_blosc2() {
    let _serial = serial();
    append_to_pytables_table("blosc2:zstd", "5");
}

#[test]
fn appends_to_a_pytables_table_with_blosc_and_bzip2() {
    let _serial = serial();
    append_to_pytables_table("blosc:lz4", "5");
    append_to_pytables_table("bzip2", "9");
}

#[test]
fn a_failed_write_leaves_no_destination() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("new.h5");
    {
        let file = PtWriter::create(&path).unwrap();
        let mut t = file
            .root()
            .unwrap()
            .create_table("t", row_type())
            .create()
            .unwrap();
        t.append(&rows(0, 100)).unwrap();
        // An injected failure: a batch that is not whole rows.
        let err = t.append(&[0u8; 7]).unwrap_err();
        assert!(err.to_string().contains("whole number"), "{err}");
        // The writer is dropped without finish().
    }
    assert!(!path.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn a_failed_write_leaves_an_existing_destination_intact() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("old.h5");
    std::fs::write(&path, b"previous content").unwrap();
    {
        let file = PtWriter::create(&path).unwrap();
        let root = file.root().unwrap();
        root.create_group("g", "", None).unwrap();
        // Injected failure: the same name twice.
        assert!(root.create_group("g", "", None).is_err());
        assert!(root
            .create_table(
                "bad",
                H5Type::Int {
                    size: 4,
                    signed: true,
                    order: ByteOrder::Little
                }
            )
            .create()
            .is_err());
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"previous content");
    // A finished write replaces it.
    let file = PtWriter::create(&path).unwrap();
    file.root()
        .unwrap()
        .create_group("g", "", Some(Filters::parse("zlib:1").unwrap()))
        .unwrap();
    file.finish().unwrap();
    let out = sciio_testkit::run_python(
        "import sys, tables as tb\nwith tb.open_file(sys.argv[1]) as f: print(f.root.g._v_filters)",
        &[path.to_str().unwrap()],
    );
    assert!(
        out.contains("complevel=1, complib='zlib', shuffle=True"),
        "{out}"
    );
}

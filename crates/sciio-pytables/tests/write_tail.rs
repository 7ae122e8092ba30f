//! The last, partial chunk of a table or EArray stays in memory between appends (as in
//! PyTables' chunk cache) and reaches the file however the writing ends: the table dropped
//! before `finish`, still alive at `finish`, or appended to again in append mode. PyTables
//! reads every row back.

use sciio_hdf5::{ByteOrder, Field, H5Type};
use sciio_pytables::write::{Filters, PtWriter};

fn i8le() -> H5Type {
    H5Type::Int {
        size: 8,
        signed: true,
        order: ByteOrder::Little,
    }
}

fn row_type() -> H5Type {
    H5Type::Compound {
        size: 8,
        fields: vec![Field {
            name: "x".into(),
            offset: 0,
            ty: i8le(),
        }],
    }
}

/// Values `start..start+n` times 3, as little-endian int64 bytes.
fn values(start: i64, n: i64) -> Vec<u8> {
    (start..start + n)
        .flat_map(|v| (v * 3).to_le_bytes())
        .collect()
}

/// Appends `total` values in batches of `batch` (the last one shorter).
fn append_in_batches(mut append: impl FnMut(&[u8]), total: i64, batch: i64) {
    let mut at = 0;
    while at < total {
        let n = batch.min(total - at);
        append(&values(at, n));
        at += n;
    }
}

/// PyTables' view of each node: "name nrows sum-check", where the check says whether every
/// value is 3 × its row number.
const CHECK: &str = r#"
import sys, tables, numpy as np
with tables.open_file(sys.argv[1]) as f:
    for name in sys.argv[2:]:
        node = f.get_node("/" + name)
        data = node.read()
        x = data["x"] if data.dtype.names else data
        ok = bool((x == 3 * np.arange(len(x))).all())
        print(name, node.nrows, ok)
"#;

fn pytables_rows(path: &std::path::Path, names: &[&str]) -> String {
    let mut args = vec![path.to_str().unwrap()];
    args.extend_from_slice(names);
    sciio_testkit::run_python(CHECK, &args)
}

#[test]
fn held_tails_reach_the_file_however_writing_ends() {
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("tails.h5");
    let file = PtWriter::create(&path).unwrap();
    let root = file.root().unwrap();
    let zlib = Filters::parse("shuffle,zlib:1").unwrap();
    let mut dropped = root
        .create_table("dropped", row_type())
        .filters(zlib)
        .chunk_rows(1000)
        .create()
        .unwrap();
    append_in_batches(|b| dropped.append(b).unwrap(), 2500, 700);
    drop(dropped);
    let mut alive = root
        .create_table("alive", row_type())
        .filters(zlib)
        .chunk_rows(1000)
        .create()
        .unwrap();
    append_in_batches(|b| alive.append(b).unwrap(), 2500, 700);
    let mut earray = root
        .create_earray("earray", i8le(), vec![])
        .filters(Filters::parse("blosc2:lz4:5").unwrap())
        .chunk_shape(vec![1000])
        .create()
        .unwrap();
    append_in_batches(|b| earray.append(b).unwrap(), 1300, 300);
    assert_eq!(alive.nrows(), 2500);
    file.finish().unwrap();
    drop((alive, earray));
    assert_eq!(
        pytables_rows(&path, &["dropped", "alive", "earray"]).trim(),
        "dropped 2500 True\nalive 2500 True\nearray 1300 True"
    );

    // Append mode continues the partial chunks the file holds.
    let file = PtWriter::open_append(&path).unwrap();
    let mut table = file.table("/alive").unwrap();
    table.append(&values(2500, 1234)).unwrap();
    let mut earray = file.earray("/earray").unwrap();
    earray.append(&values(1300, 5)).unwrap();
    file.finish().unwrap();
    drop((table, earray));
    assert_eq!(
        pytables_rows(&path, &["alive", "earray"]).trim(),
        "alive 3734 True\nearray 1305 True"
    );
}

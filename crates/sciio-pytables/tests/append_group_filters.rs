//! Opening a PyTables file in append mode: a group's FILTERS (its leaves' default filters) is
//! read through the open writer, so a leaf created under a PyTables group without explicit
//! filters gets the group's, as PyTables does.

use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::PtWriter;
use sciio_testkit::{run_python, tempdir};

#[test]
fn leaves_made_in_append_mode_inherit_the_group_filters() {
    let dir = tempdir();
    let path = dir.path().join("g.h5");
    let p = path.to_str().unwrap();
    run_python(
        r#"
import sys, tables as tb
with tb.open_file(sys.argv[1], "w") as f:
    f.create_group("/", "g", filters=tb.Filters(5, "zlib", shuffle=True))
"#,
        &[p],
    );
    let file = PtWriter::open_append(&path).unwrap();
    let g = file.group("/g").unwrap();
    let i4 = H5Type::Int {
        size: 4,
        signed: true,
        order: ByteOrder::Little,
    };
    let mut e = g.create_earray("e", i4, vec![3]).create().unwrap();
    let block: Vec<u8> = (0..6i32).flat_map(|v| v.to_le_bytes()).collect();
    e.append(&block).unwrap();
    drop(e);
    file.finish().unwrap();
    let out = run_python(
        r#"
import sys, tables as tb
with tb.open_file(sys.argv[1]) as f:
    e = f.root.g.e
    print(e.filters.complib, e.filters.complevel, e.filters.shuffle, e[:].tolist())
"#,
        &[p],
    );
    assert_eq!(out.trim(), "zlib 5 True [[0, 1, 2], [3, 4, 5]]");
}

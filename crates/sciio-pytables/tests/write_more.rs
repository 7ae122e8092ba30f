//! More writer cases read back by PyTables: repack (ptrepack-like, new filters), numpy arrays
//! → nodes, chunks that split every dimension, and files that cannot be opened for appending.

use sciio_core::{DType, NdArray, Order, PyLiteral};

/// libhdf5 locks files with `flock`, and descriptors are inherited by the Python processes other
/// test threads spawn: a file open here could look locked to PyTables there. Tests in this
/// binary therefore run one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn dtype(descr: &str) -> DType {
    DType::parse_descr(&PyLiteral::parse(descr).unwrap()).unwrap()
}
use sciio_hdf5::{ByteOrder, H5Type};
use sciio_pytables::write::{repack, write_ndarray, Filters, PtWriter};

const MAKE: &str = r#"
import sys, numpy as np, tables as tb
with tb.open_file(sys.argv[1], "w", title="source") as f:
    g = f.create_group("/", "grp", "a group", filters=tb.Filters(1, "zlib"))
    g._v_attrs.note = "kept"
    t = f.create_table(g, "t", {"a": tb.Int32Col(pos=0), "t": tb.Time64Col(pos=1), "s": tb.StringCol(4, pos=2)}, "tbl")
    t.append([(i, i + 0.25, b"x%d" % (i % 100)) for i in range(5000)])
    t.attrs.unit = "m"
    f.create_array("/", "arr", np.arange(12.0).reshape(3, 4), "an array")
    f.create_carray("/", "c", obj=np.arange(3000, dtype="i2").reshape(100, 30), filters=tb.Filters(5, "blosc:zstd"))
    e = f.create_earray("/", "e", tb.Float32Atom(), (0, 5), filters=tb.Filters(3, "bzip2"))
    e.append(np.arange(500, dtype="f4").reshape(100, 5))
    v = f.create_vlarray("/", "v", tb.VLUnicodeAtom())
    for s in ["", "a", "h\u00e9llo"]:
        v.append(s)
"#;

const COMPARE: &str = r#"
import sys, numpy as np, tables as tb
with tb.open_file(sys.argv[1]) as a, tb.open_file(sys.argv[2]) as b:
    na = sorted(n._v_pathname for n in a.walk_nodes())
    nb = sorted(n._v_pathname for n in b.walk_nodes())
    assert na == nb, (na, nb)
    assert b.root._v_title == "source" and b.root.grp._v_attrs.note == "kept"
    for n in a.walk_nodes():
        m = b.get_node(n._v_pathname)
        assert type(n) is type(m), (n, m)
        assert getattr(n, "title", None) == getattr(m, "title", None)
        if isinstance(n, tb.Leaf):
            x, y = n.read(), m.read()
            if isinstance(n, tb.VLArray):
                assert x == y, (x, y)
            else:
                assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), n._v_pathname
            if n.chunkshape is not None and n._v_pathname != "/grp/t" or isinstance(n, tb.Table):
                assert m.filters.complib == sys.argv[3] or isinstance(n, tb.VLArray), (n._v_pathname, m.filters)
    assert b.root.grp.t.attrs.unit == "m"
print("OK")
"#;

#[test]
fn repack_copies_every_node_with_new_filters() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let src = dir.path().join("src.h5");
    let dst = dir.path().join("dst.h5");
    sciio_testkit::run_python(MAKE, &[src.to_str().unwrap()]);
    repack(&src, &dst, Some(Filters::parse("blosc2:lz4:5").unwrap())).unwrap();
    let out = sciio_testkit::run_python(
        COMPARE,
        &[src.to_str().unwrap(), dst.to_str().unwrap(), "blosc2:lz4"],
    );
    assert_eq!(out.trim(), "OK");
}

#[test]
fn numpy_arrays_become_tables_arrays_and_carrays() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("np.h5");
    let file = PtWriter::create(&path).unwrap();
    let root = file.root().unwrap();
    let rec = dtype("[('a', '<i4'), ('b', '<f8'), ('c', '|S3'), ('d', '|b1')]");
    let mut rows = Vec::new();
    for i in 0..1000i32 {
        rows.extend_from_slice(&i.to_le_bytes());
        rows.extend_from_slice(&(f64::from(i) * 1.5).to_le_bytes());
        rows.extend_from_slice(b"ab\0");
        rows.push(u8::from(i % 3 == 0));
    }
    let table = NdArray::from_bytes(rec, &[1000], Order::C, &rows).unwrap();
    assert_eq!(write_ndarray(&root, "rec", &table, None).unwrap(), "Table");
    let f8 = dtype("'<f8'");
    let data: Vec<u8> = (0..600).flat_map(|v| f64::from(v).to_le_bytes()).collect();
    // Fortran order in memory: written in C order as numpy would save it.
    let plain = NdArray::from_bytes(f8.clone(), &[20, 30], Order::C, &data).unwrap();
    assert_eq!(
        write_ndarray(&root, "plain", &plain, None).unwrap(),
        "Array"
    );
    assert_eq!(
        write_ndarray(
            &root,
            "packed",
            &plain.to_order(Order::F),
            Some(Filters::parse("zlib:5").unwrap())
        )
        .unwrap(),
        "CArray"
    );
    let u4 = dtype("'<U4'");
    let text = NdArray::zeroed(u4, &[2], Order::C).unwrap();
    assert!(write_ndarray(&root, "text", &text, None).is_err());
    file.finish().unwrap();
    let out = sciio_testkit::run_python(
        r#"
import sys, numpy as np, tables as tb
with tb.open_file(sys.argv[1]) as f:
    t = f.root.rec.read()
    assert type(f.root.rec).__name__ == "Table" and len(t) == 1000 and t["b"][7] == 10.5 and t["c"][3] == b"ab"
    assert t["d"].dtype == bool and t["d"][3] and not t["d"][4]
    a = np.arange(600.0).reshape(20, 30)
    assert type(f.root.plain).__name__ == "Array" and (f.root.plain.read() == a).all()
    assert type(f.root.packed).__name__ == "CArray" and (f.root.packed.read() == a).all()
    assert f.root.packed.filters.complib == "zlib" and "text" not in f.root
print("OK")
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "OK");
}

#[test]
fn chunks_splitting_every_dimension_are_cut_and_padded() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("tiles.h5");
    let file = PtWriter::create(&path).unwrap();
    let f4 = H5Type::Float {
        size: 4,
        precision: 32,
        order: ByteOrder::Little,
    };
    let mut e = file
        .root()
        .unwrap()
        .create_earray("e", f4, vec![30, 50])
        .filters(Filters::parse("shuffle,zlib:3").unwrap())
        .chunk_shape(vec![7, 8, 16])
        .create()
        .unwrap();
    let mut next = 0u32;
    for rows in [10usize, 3, 12] {
        let block: Vec<u8> = (0..rows * 1500)
            .flat_map(|_| {
                next += 1;
                (next as f32).to_le_bytes()
            })
            .collect();
        e.append(&block).unwrap();
    }
    drop(e);
    file.finish().unwrap();
    let out = sciio_testkit::run_python(
        r#"
import sys, numpy as np, tables as tb
with tb.open_file(sys.argv[1]) as f:
    e = f.root.e
    assert e.chunkshape == (7, 8, 16) and e.shape == (25, 30, 50), (e.chunkshape, e.shape)
    assert (e.read() == np.arange(1, 25 * 1500 + 1, dtype="f4").reshape(25, 30, 50)).all()
print("OK")
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "OK");
}

#[test]
fn appending_to_a_damaged_or_missing_file_is_a_clean_error() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let missing = dir.path().join("missing.h5");
    assert!(PtWriter::open_append(&missing).is_err());
    let path = dir.path().join("t.h5");
    sciio_testkit::run_python(MAKE, &[path.to_str().unwrap()]);
    let full = std::fs::read(&path).unwrap();
    for cut in [0, 8, 100, 2048, full.len() / 2] {
        let p = dir.path().join(format!("cut{cut}.h5"));
        std::fs::write(&p, &full[..cut]).unwrap();
        match PtWriter::open_append(&p) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(w) => {
                // Opened (the superblock survived): reaching the cut-off table must fail cleanly.
                assert!(w.table("/grp/t").is_err() || cut > 2048, "cut at {cut}");
            }
        }
    }
    let not_table = PtWriter::open_append(&path).unwrap();
    let err = not_table.table("/arr").unwrap_err();
    assert!(err.to_string().contains("not a table"), "{err}");
}

#[test]
fn user_attributes_of_every_type_read_back_in_h5py_and_pytables() {
    let _serial = serial();
    use sciio_hdf5::{AttrValue, CharSet, Field, RawData, VlenData};
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("attrs.h5");
    let file = PtWriter::create(&path).unwrap();
    let root = file.root().unwrap();
    let le = ByteOrder::Little;
    let i2 = H5Type::Int {
        size: 2,
        signed: true,
        order: le,
    };
    let attrs: Vec<(&str, AttrValue)> = vec![
        (
            "vlstrs",
            AttrValue::Vlen(VlenData::strings(&["a", "héllo", ""])),
        ),
        (
            "rec",
            AttrValue::Raw(RawData {
                ty: H5Type::Compound {
                    size: 6,
                    fields: vec![
                        Field {
                            name: "x".into(),
                            offset: 0,
                            ty: i2.clone(),
                        },
                        Field {
                            name: "y".into(),
                            offset: 2,
                            ty: H5Type::Float {
                                size: 4,
                                precision: 32,
                                order: le,
                            },
                        },
                    ],
                },
                shape: vec![],
                bytes: [7i16.to_le_bytes().to_vec(), 0.5f32.to_le_bytes().to_vec()].concat(),
            }),
        ),
        (
            "color",
            AttrValue::Raw(RawData {
                ty: H5Type::Enum {
                    base: Box::new(H5Type::Int {
                        size: 1,
                        signed: false,
                        order: le,
                    }),
                    members: vec![("red".into(), 0), ("blue".into(), 5)],
                },
                shape: vec![],
                bytes: vec![5],
            }),
        ),
        (
            "empty",
            AttrValue::Empty(H5Type::Int {
                size: 4,
                signed: true,
                order: le,
            }),
        ),
        (
            "big",
            AttrValue::Raw(RawData {
                ty: H5Type::Int {
                    size: 4,
                    signed: true,
                    order: ByteOrder::Big,
                },
                shape: vec![2],
                bytes: vec![0, 0, 1, 0, 0, 0, 0, 2],
            }),
        ),
        (
            "strs",
            AttrValue::Raw(RawData {
                ty: H5Type::FixedString {
                    size: 3,
                    charset: CharSet::Ascii,
                },
                shape: vec![2],
                bytes: b"abcde\0".to_vec(),
            }),
        ),
        (
            "matrix",
            AttrValue::Raw(RawData {
                ty: i2,
                shape: vec![2, 2],
                bytes: [1i16, 2, 3, 4]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            }),
        ),
    ];
    for (name, value) in &attrs {
        root.set_attr(name, value).unwrap();
    }
    // Replacing an attribute keeps one.
    root.set_attr("matrix", &attrs[6].1).unwrap();
    // Data that does not fit the type is refused.
    let bad = AttrValue::Raw(RawData {
        ty: H5Type::Int {
            size: 4,
            signed: true,
            order: le,
        },
        shape: vec![3],
        bytes: vec![0; 5],
    });
    assert!(root.set_attr("bad", &bad).is_err());
    file.finish().unwrap();
    let out = sciio_testkit::run_python(
        r#"
import sys, numpy as np, h5py, tables as tb
with h5py.File(sys.argv[1]) as f:
    a = f.attrs
    assert [s.decode() if isinstance(s, bytes) else s for s in a["vlstrs"]] == ["a", "h\u00e9llo", ""], a["vlstrs"]
    assert a["rec"]["x"] == 7 and a["rec"]["y"] == 0.5
    t = h5py.h5a.open(f.id, b"color").get_type()
    assert a["color"] == 5 and [(t.get_member_name(i), t.get_member_value(i)) for i in range(t.get_nmembers())] == [(b"red", 0), (b"blue", 5)]
    assert isinstance(a["empty"], h5py.Empty)
    assert a["big"].dtype == ">i4" and list(a["big"]) == [256, 2]
    # NUL-terminated like PyTables' own string attributes (h5py drops a full string's last byte
    # for both; PyTables reads it whole).
    assert h5py.h5a.open(f.id, b"strs").get_type().get_strpad() == h5py.h5t.STR_NULLTERM
    assert (a["matrix"] == [[1, 2], [3, 4]]).all() and "bad" not in a
with tb.open_file(sys.argv[1]) as f:
    # (PyTables reads big-endian attributes byte-swapped, whoever wrote them: not checked.)
    assert list(f.root._v_attrs.strs) == [b"abc", b"de"]
print("OK")
"#,
        &[path.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "OK");
}

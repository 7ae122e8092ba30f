//! PyTables writing: sciio writes every node kind × column type × filter from data numpy made,
//! PyTables writes the same (python/check_pytables_write.py), and the script compares both files
//! with PyTables, h5py and ptdump.

use std::path::Path;

use sciio_hdf5::{AttrValue, ByteOrder, CharSet, Field, H5Type, RawData};
use sciio_pytables::write::{Filters, PtWriter, VlAtom};
use sciio_pytables::{PtFile, Rows};

/// libhdf5 locks files with `flock`, and descriptors are inherited by the Python processes other
/// test threads spawn: a file open here could look locked to PyTables there. Tests in this
/// binary therefore run one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const LE: ByteOrder = ByteOrder::Little;

fn int(size: usize, signed: bool) -> H5Type {
    H5Type::Int {
        size,
        signed,
        order: LE,
    }
}

fn float(size: usize) -> H5Type {
    let precision = if size == 16 { 80 } else { size * 8 };
    H5Type::Float {
        size,
        precision,
        order: LE,
    }
}

fn complex(half: usize) -> H5Type {
    H5Type::Compound {
        size: 2 * half,
        fields: vec![
            Field {
                name: "r".into(),
                offset: 0,
                ty: float(half),
            },
            Field {
                name: "i".into(),
                offset: half,
                ty: float(half),
            },
        ],
    }
}

fn string(size: usize) -> H5Type {
    H5Type::FixedString {
        size,
        charset: CharSet::Ascii,
    }
}

/// Packs fields one after the other, as PyTables lays out a description.
fn packed(fields: Vec<(&str, H5Type)>) -> H5Type {
    let mut offset = 0;
    let fields = fields
        .into_iter()
        .map(|(name, ty)| {
            let f = Field {
                name: name.into(),
                offset,
                ty,
            };
            offset += f.ty.size();
            f
        })
        .collect();
    H5Type::Compound {
        size: offset,
        fields,
    }
}

fn row_type() -> H5Type {
    packed(vec![
        (
            "b",
            H5Type::Bitfield {
                size: 1,
                precision: 8,
                order: LE,
            },
        ),
        ("i1", int(1, true)),
        ("u1", int(1, false)),
        ("i2", int(2, true)),
        ("u2", int(2, false)),
        ("i4", int(4, true)),
        ("u4", int(4, false)),
        ("i8", int(8, true)),
        ("u8", int(8, false)),
        ("f2", float(2)),
        ("f4", float(4)),
        ("f8", float(8)),
        ("lf", float(16)),
        ("c8", complex(4)),
        ("c16", complex(8)),
        ("s", string(7)),
        ("t32", H5Type::Time { size: 4, order: LE }),
        ("t64", H5Type::Time { size: 8, order: LE }),
        (
            "e",
            H5Type::Enum {
                base: Box::new(int(1, false)),
                members: vec![("red".into(), 0), ("green".into(), 1), ("blue".into(), 2)],
            },
        ),
        (
            "arr",
            H5Type::Array {
                base: Box::new(float(8)),
                dims: vec![2, 3],
            },
        ),
        ("n", packed(vec![("x", int(2, true)), ("y", string(3))])),
    ])
}

fn raw(ty: H5Type, shape: Vec<usize>, bytes: Vec<u8>) -> AttrValue {
    AttrValue::Raw(RawData { ty, shape, bytes })
}

fn set_user_attrs(root: &sciio_pytables::write::PtGroup) {
    root.set_attr(
        "myint",
        &raw(int(4, true), vec![], 3i32.to_le_bytes().to_vec()),
    )
    .unwrap();
    root.set_attr("myf", &raw(float(8), vec![], 1.5f64.to_le_bytes().to_vec()))
        .unwrap();
    root.set_attr("mystr", &AttrValue::Raw(RawData::string("héllo")))
        .unwrap();
    root.set_attr("mybytes", &AttrValue::Raw(RawData::bytes_string(b"xx")))
        .unwrap();
    let arr: Vec<u8> = (0..3i64).flat_map(|v| v.to_le_bytes()).collect();
    root.set_attr("arr", &raw(int(8, true), vec![3], arr))
        .unwrap();
    let f32s: Vec<u8> = [1.5f32, 2.5].iter().flat_map(|v| v.to_le_bytes()).collect();
    root.set_attr("f32arr", &raw(float(4), vec![2], f32s))
        .unwrap();
    let c: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    root.set_attr("cplx", &raw(complex(8), vec![], c)).unwrap();
    root.set_attr("u8", &raw(int(1, false), vec![], vec![200]))
        .unwrap();
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

/// Writes the same nodes as `check_pytables_write.py gen` from its .bin files.
fn write_like_pytables(dir: &Path, groups: &[(String, String)]) {
    let file = PtWriter::create_with_title(dir.join("sciio.h5"), "sciio write test").unwrap();
    let root = file.root().unwrap();
    set_user_attrs(&root);
    let arrays: [(&str, H5Type, Vec<usize>); 5] = [
        ("a_i2", int(2, true), vec![4, 5]),
        ("a_c16", complex(8), vec![3]),
        ("a_s5", string(5), vec![3]),
        (
            "a_b",
            H5Type::Bitfield {
                size: 1,
                precision: 8,
                order: LE,
            },
            vec![2, 2],
        ),
        ("a_f4_0d", float(4), vec![]),
    ];
    for (name, ty, shape) in arrays {
        let data = RawData {
            ty,
            shape,
            bytes: read(dir, &format!("{name}.bin")),
        };
        root.create_array(name, &data, &format!("array {name}"))
            .unwrap();
    }
    let table = read(dir, "table.bin");
    let row = row_type();
    let carray = read(dir, "carray.bin");
    let earray = read(dir, "earray.bin");
    for (name, spec) in groups {
        let filters = Filters::parse(spec).unwrap();
        let g = root
            .create_group(
                &format!("g_{name}"),
                &format!("filters {name}"),
                Some(filters),
            )
            .unwrap();
        let mut t = g
            .create_table("t", row.clone())
            .title("all types")
            .create()
            .unwrap();
        for batch in table.chunks(300 * row.size()) {
            t.append(batch).unwrap();
        }
        assert_eq!(t.nrows(), 1000);
        g.create_carray("c", float(8), vec![50, 7])
            .write(&carray)
            .unwrap();
        let mut e = g
            .create_earray("e", int(4, true), vec![3])
            .create()
            .unwrap();
        for block in earray.chunks(700 * 3 * 4) {
            e.append(block).unwrap();
        }
        if name == "none" || name == "zlib" {
            let mut v = g
                .create_vlarray("v_i4", VlAtom::Values(int(4, true)), "", None)
                .unwrap();
            for i in 0..5i32 {
                let row: Vec<u8> = (10 * i..10 * i + i).flat_map(|x| x.to_le_bytes()).collect();
                v.append_bytes(&row).unwrap();
            }
            let mut v = g
                .create_vlarray("v_str", VlAtom::VlString, "", None)
                .unwrap();
            for i in 0..5 {
                v.append_bytes(format!("row{i}").repeat(i).as_bytes())
                    .unwrap();
            }
            let mut v = g
                .create_vlarray("v_uni", VlAtom::VlUnicode, "", None)
                .unwrap();
            for i in 0..5 {
                v.append_text(&format!("ü€{i}").repeat(i)).unwrap();
            }
        }
    }
    file.finish().unwrap();
}

#[test]
fn pytables_reads_every_node_kind_column_type_and_filter_like_its_own() {
    let _serial = serial();
    let dir = sciio_testkit::tempdir();
    let d = dir.path().to_str().unwrap();
    let groups: Vec<(String, String)> =
        sciio_testkit::run_python_script("python/check_pytables_write.py", &["gen", d])
            .lines()
            .map(|l| {
                let (name, spec) = l.split_once('\t').unwrap();
                (name.to_string(), spec.to_string())
            })
            .collect();
    assert!(groups.len() >= 10);
    write_like_pytables(dir.path(), &groups);
    let out = sciio_testkit::run_python_script("python/check_pytables_write.py", &["check", d]);
    assert_eq!(out.trim(), "OK");
}

#[test]
fn sciio_reads_back_what_it_wrote_with_lzo() {
    let _serial = serial();
    // PyTables' wheel has no LZO, so LZO output is checked by sciio's reader (LZO1X, as
    // PyTables' H5Zlzo.c writes it).
    let dir = sciio_testkit::tempdir();
    let path = dir.path().join("lzo.h5");
    let file = PtWriter::create(&path).unwrap();
    let mut e = file
        .root()
        .unwrap()
        .create_earray("e", int(8, true), vec![])
        .filters(Filters::parse("lzo:1").unwrap())
        .chunk_shape(vec![1000])
        .create()
        .unwrap();
    let data: Vec<u8> = (0..10_500i64).flat_map(|v| (v / 3).to_le_bytes()).collect();
    e.append(&data).unwrap();
    file.finish().unwrap();
    let back = PtFile::open(&path)
        .unwrap()
        .read_array("/e", Rows::all())
        .unwrap();
    assert_eq!(back.bytes, data);
}

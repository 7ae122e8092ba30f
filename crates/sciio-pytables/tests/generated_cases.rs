//! Files written by PyTables itself (python/gen_pytables_cases.py): every node kind × every
//! column type × every filter PyTables offers (zlib, bzip2, fletcher32, shuffle, all Blosc and
//! Blosc2 codecs, bitshuffle). sciio's reads must equal PyTables' reads.

mod common;

use sciio_pytables::sciio_hdf5::{Element, RefTarget, Selection};
use sciio_pytables::{NodeClass, PtAttrValue, PtFile, PtFilters, Rows};
use sciio_testkit::{run_python_script, tempdir};
use serde_json::Value;

fn generate(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let out = run_python_script("python/gen_pytables_cases.py", &[&dir.to_string_lossy()]);
    let files: Vec<_> = out.lines().map(std::path::PathBuf::from).collect();
    assert!(files.len() >= 18, "generator wrote {} files", files.len());
    files
}

#[test]
fn every_node_kind_column_type_and_filter_reads_like_pytables() {
    let dir = tempdir();
    let files = generate(dir.path());
    let mut failures = Vec::new();
    for file in &files {
        let dump_dir = tempdir();
        let (n, errors) = common::dump(file, dump_dir.path());
        // 18 leaves, the pickled-object VLArray refused.
        assert!(n >= 17, "{}: only {n} leaves", file.display());
        for e in errors {
            // The pickled-object VLArray is refused on purpose.
            if !(e.contains("/vl_object") && e.contains("[Refused]")) {
                failures.push(format!("{}: {e}", file.display()));
            }
        }
        let out = common::check_with_pytables(file, dump_dir.path());
        failures.extend(
            out.lines()
                .filter(|l| !l.starts_with("OK"))
                .map(String::from),
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn attributes_filters_and_links_match_pytables() {
    let dir = tempdir();
    let files = generate(dir.path());
    let expect: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("attrs.json")).unwrap())
            .unwrap();
    let file = PtFile::open(dir.path().join("case_none.h5")).unwrap();
    let attrs = file.attrs("/attrs").unwrap();
    let get = |n: &str| {
        attrs
            .iter()
            .find(|a| a.name == n)
            .unwrap_or_else(|| panic!("no attr {n}"))
    };
    assert_eq!(get("i").as_i64(), expect["i"].as_i64());
    assert_eq!(get("u8").as_i64(), expect["u8"].as_i64());
    assert_eq!(get("s").as_str().as_deref(), expect["s"].as_str());
    assert_eq!(get("b").as_str().as_deref(), expect["b"].as_str());
    // The pickled dict is exposed as bytes marked as pickle, and never executed.
    match &get("obj").value {
        PtAttrValue::Pickle(bytes) => assert!(bytes.ends_with(b".")),
        other => panic!("obj is not marked as a pickle: {other:?}"),
    }
    match &get("f").value {
        PtAttrValue::Data(d) => assert_eq!(
            f64::from_le_bytes(d.bytes[..8].try_into().unwrap()),
            expect["f"].as_f64().unwrap()
        ),
        other => panic!("{other:?}"),
    }
    match &get("arr").value {
        PtAttrValue::Data(d) => {
            assert_eq!(d.shape, vec![2, 3]);
            let values: Vec<f64> = d
                .bytes
                .chunks(4)
                .map(|c| f32::from_be_bytes(c.try_into().unwrap()) as f64)
                .collect();
            let want: Vec<f64> = expect["arr"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert_eq!(values, want);
        }
        other => panic!("{other:?}"),
    }
    match &get("boolean").value {
        PtAttrValue::Data(d) => assert_eq!(d.bytes != [0], expect["boolean"].as_bool().unwrap()),
        other => panic!("{other:?}"),
    }
    assert!(get("CLASS").system && !get("i").system);

    // Group FILTERS of every case, unpacked like PyTables' Filters._unpack.
    for file in &files {
        let case = file
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .trim_start_matches("case_")
            .to_string();
        let node = PtFile::open(file).unwrap().node("/chunked").unwrap();
        let f: PtFilters = node
            .pt_filters
            .unwrap_or_else(|| panic!("{case}: no FILTERS"));
        let want = &expect["group_filters"][&case];
        assert_eq!(
            i64::from(f.complevel),
            want["complevel"].as_i64().unwrap(),
            "{case}"
        );
        assert_eq!(f.complib.as_deref(), want["complib"].as_str(), "{case}");
        assert_eq!(f.shuffle, want["shuffle"].as_bool().unwrap(), "{case}");
        assert_eq!(
            f.bitshuffle,
            want["bitshuffle"].as_bool().unwrap(),
            "{case}"
        );
        assert_eq!(
            f.fletcher32,
            want["fletcher32"].as_bool().unwrap(),
            "{case}"
        );
    }

    // Links are shown, never followed.
    let tree = file.tree(true).unwrap();
    for (name, want) in expect["links"].as_object().unwrap() {
        let node = tree
            .children
            .iter()
            .find(|c| c.path == format!("/{name}"))
            .unwrap();
        let target = want[1].as_str().unwrap();
        match (&node.class, want[0].as_str().unwrap()) {
            (NodeClass::SoftLink(t), "soft") => assert_eq!(t, target),
            (NodeClass::ExternalLink(f, p), "external") => assert_eq!(format!("{f}:{p}"), target),
            (other, kind) => panic!("{name}: {other:?} is not a {kind} link"),
        }
    }
    let text = tree.render(true);
    assert!(text.contains("/table (Table(1000,)"), "{text}");
    assert!(
        text.contains("/soft (SoftLink) -> /chunked/carray"),
        "{text}"
    );
}

#[test]
fn row_ranges_steps_and_nested_columns_match_pytables() {
    let dir = tempdir();
    let files = generate(dir.path());
    for file in files.iter().filter(|f| {
        let s = f.to_string_lossy();
        s.contains("zlib_shuffle") || s.contains("blosc2_lz4") || s.contains("bzip2")
    }) {
        let pt = PtFile::open(file).unwrap();
        for (start, stop, step) in [
            (0u64, 1000u64, 1u64),
            (5, 700, 3),
            (63, 65, 1),
            (999, 1000, 1),
            (10, 10, 1),
            (100, 2000, 250),
        ] {
            let col = pt
                .read_column("/table", "nested/deeper/d", Rows::range(start, stop, step))
                .unwrap();
            let i8col = pt
                .read_column("/table", "i8", Rows::range(start, stop, step))
                .unwrap();
            let arr = pt
                .read_array(
                    "/chunked/carray",
                    Rows::range(start.min(50), stop.min(50), step),
                )
                .unwrap();
            let code = "import sys, tables, numpy as np\n\
                f = tables.open_file(sys.argv[1])\n\
                a, b, s = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])\n\
                t = f.root.table\n\
                sys.stdout.write(t.read(a, b, s, field='nested/deeper/d').astype('<f8').tobytes().hex() + ' ')\n\
                sys.stdout.write(t.read(a, b, s, field='i8').astype('<i8').tobytes().hex() + ' ')\n\
                sys.stdout.write(f.root.chunked.carray[min(a,50):min(b,50):s].astype('<f8').tobytes().hex() + ' ')\n";
            let out = sciio_testkit::run_python(
                code,
                &[
                    &file.to_string_lossy(),
                    &start.to_string(),
                    &stop.to_string(),
                    &step.to_string(),
                ],
            );
            let parts: Vec<&str> = out.split(' ').collect();
            let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            assert_eq!(
                hex(&col.bytes),
                parts[0],
                "{} d {start}:{stop}:{step}",
                file.display()
            );
            assert_eq!(
                hex(&i8col.bytes),
                parts[1],
                "{} i8 {start}:{stop}:{step}",
                file.display()
            );
            assert_eq!(
                hex(&arr.bytes),
                parts[2],
                "{} carray {start}:{stop}:{step}",
                file.display()
            );
        }
    }
}

/// What PyTables cannot write, written by h5py (`gen_pytables_cases.py --h5py`): compounds
/// with vlen strings, vlen sequences and nested vlen arrays; object and region references in
/// datasets, compounds and attributes. Every leaf equals h5py's values (references as h5py's
/// `f[ref].name` and region selection); the attributes' targets equal h5py's.
#[test]
fn vlen_compounds_and_references_read_like_h5py() {
    let dir = tempdir();
    let file = dir.path().join("h5py_cases.h5");
    let out = run_python_script(
        "python/gen_pytables_cases.py",
        &["--h5py", &file.to_string_lossy()],
    );
    let expect: Value = serde_json::from_str(out.trim()).unwrap();
    let dump_dir = tempdir();
    let (n, errors) = common::dump(&file, dump_dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(n, 7, "leaves read");
    let manifest = std::fs::read_to_string(dump_dir.path().join("manifest.json")).unwrap();
    for leaf in [
        "/vlen_compound",
        "/vlen_compound_0d",
        "/refs",
        "/refs_2d",
        "/regrefs",
        "/compound_ref",
    ] {
        assert!(
            manifest.contains(&format!("\"path\": \"{leaf}\", \"kind\": \"elements\"")),
            "{leaf} not decoded element by element"
        );
    }
    let check = common::check_with_pytables(&file, dump_dir.path());
    let bad: Vec<&str> = check.lines().filter(|l| !l.starts_with("OK")).collect();
    assert!(bad.is_empty(), "{check}");
    assert_eq!(check.lines().count(), 7, "{check}");

    let pt = PtFile::open(&file).unwrap();
    let targets = |node: &str, name: &str| -> Vec<Value> {
        let attrs = pt.attrs(node).unwrap();
        let a = attrs.iter().find(|a| a.name == name).unwrap();
        let PtAttrValue::Elements(r) = &a.value else {
            panic!("{node}.{name} is not references: {:?}", a.value)
        };
        r.elements
            .iter()
            .map(|e| match e {
                Element::Reference(RefTarget::Object(p)) => Value::from(p.as_str()),
                Element::Reference(RefTarget::Region { path, selection }) => {
                    assert_eq!(
                        *selection,
                        Selection::Blocks(vec![(vec![2, 1], vec![3, 4])]),
                        "region of {node}.{name}"
                    );
                    Value::from(path.as_str())
                }
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(targets("/", "link"), vec![expect["link"].clone()]);
    assert_eq!(Value::from(targets("/", "links")), expect["links"].clone());
    assert_eq!(targets("/data", "region"), vec![expect["region"].clone()]);
    // A compound attribute with vlen string and vlen sequence members.
    let attrs = pt.attrs("/data").unwrap();
    let meta = attrs.iter().find(|a| a.name == "meta").unwrap();
    let PtAttrValue::Elements(meta) = &meta.value else {
        panic!("meta: {:?}", meta.value)
    };
    let rows: Vec<Value> = meta
        .elements
        .iter()
        .map(|e| {
            let Element::Compound(m) = e else {
                panic!("{e:?}")
            };
            let (Element::Fixed(k), Element::String(name), Element::Values(seq)) =
                (&m[0], &m[1], &m[2])
            else {
                panic!("{m:?}")
            };
            let seq: Vec<i16> = seq
                .chunks(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            serde_json::json!([
                i32::from_le_bytes(k[..4].try_into().unwrap()),
                String::from_utf8(name.clone()).unwrap(),
                seq
            ])
        })
        .collect();
    assert_eq!(Value::from(rows), expect["meta"]);
    // A row range of a compound with vlen members.
    let some = pt
        .read_elements("/vlen_compound", Rows::range(1, 5, 2))
        .unwrap();
    assert_eq!(some.shape, vec![2]);
    let all = pt.read_elements("/vlen_compound", Rows::all()).unwrap();
    assert_eq!(
        some.elements,
        vec![all.elements[1].clone(), all.elements[3].clone()]
    );
}

/// The standalone Bitshuffle filter (32008) as h5py + hdf5plugin write it (PyTables only
/// writes bitshuffle inside Blosc frames): no compression, LZ4 and zstd, default and explicit
/// block sizes, element sizes 1–16, tails shorter than 8 elements. Whole reads (sciio's
/// parallel Rust decoder) and stepped reads (libhdf5's pipeline calling sciio's registered
/// filter) both equal h5py's.
#[test]
fn standalone_bitshuffle_from_hdf5plugin_reads_like_h5py() {
    let dir = tempdir();
    let file = dir.path().join("bitshuffle.h5");
    run_python_script(
        "python/gen_pytables_cases.py",
        &["--bitshuffle", &file.to_string_lossy()],
    );
    let dump_dir = tempdir();
    let (n, errors) = common::dump(&file, dump_dir.path());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(n, 36, "leaves read");
    let check = common::check_with_pytables(&file, dump_dir.path());
    let bad: Vec<&str> = check.lines().filter(|l| !l.starts_with("OK")).collect();
    assert!(bad.is_empty(), "{check}");
    assert_eq!(check.lines().count(), 36, "{check}");

    let pt = PtFile::open(&file).unwrap();
    for node in [
        "/lz4_0/f8",
        "/zstd_256/rows",
        "/none_0/u1",
        "/lz4_256/be_i4",
    ] {
        let ours = pt.read_array(node, Rows::range(5, 4000, 3)).unwrap();
        let theirs = sciio_testkit::run_python(
            "import sys, h5py, hdf5plugin\n\
             d = h5py.File(sys.argv[1])[sys.argv[2]]\n\
             sys.stdout.write(d[5:4000:3].tobytes().hex())",
            &[&file.to_string_lossy(), node],
        );
        let hex: String = ours.bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, theirs.trim(), "{node}[5:4000:3]");
    }
}

/// A time64 attribute (PyTables writes none and refuses to read H5T_TIME attributes) reads as
/// time64 columns do: the raw timeval bits of PyTables' own time64 EArray (negative times
/// included), stored as an H5T_TIME attribute, read back as the seconds PyTables reads from
/// that EArray.
#[test]
fn time64_attribute_reads_like_pytables_time64_values() {
    use sciio_pytables::sciio_hdf5::write::FileBuilder;
    use sciio_pytables::sciio_hdf5::{AttrValue, File};
    let dir = tempdir();
    let files = generate(dir.path());
    let case = files.iter().find(|f| f.ends_with("case_none.h5")).unwrap();
    let raw = File::open(case)
        .unwrap()
        .dataset("/chunked/earray_time64")
        .unwrap()
        .read()
        .unwrap();
    let seconds = PtFile::open(case)
        .unwrap()
        .read_array("/chunked/earray_time64", Rows::all())
        .unwrap();
    let path = dir.path().join("time_attr.h5");
    let out = FileBuilder::new().create(&path).unwrap();
    out.root()
        .unwrap()
        .set_attr("t64", &AttrValue::Raw(raw))
        .unwrap();
    out.close().unwrap();
    let attrs = PtFile::open(&path).unwrap().attrs("/").unwrap();
    let PtAttrValue::Data(d) = &attrs.iter().find(|a| a.name == "t64").unwrap().value else {
        panic!("not data")
    };
    assert_eq!(d.bytes, seconds.bytes);
    assert!(seconds
        .bytes
        .chunks(8)
        .any(|c| f64::from_le_bytes(c.try_into().unwrap()) < -1.0));
}

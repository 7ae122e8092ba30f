//! Files written by PyTables itself (python/gen_pytables_cases.py): every node kind × every
//! column type × every filter PyTables offers (zlib, bzip2, fletcher32, shuffle, all Blosc and
//! Blosc2 codecs, bitshuffle). sciio's reads must equal PyTables' reads.

mod common;

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
        let out = run_python_script(
            "python/check_pytables_read.py",
            &[
                &file.to_string_lossy(),
                &dump_dir.path().join("manifest.json").to_string_lossy(),
            ],
        );
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

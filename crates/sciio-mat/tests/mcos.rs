//! MATLAB objects (MCOS) in v7.3 files: `string`, `datetime`, `duration`, `categorical`, user
//! classes, nested objects and function handles, in files python/mat_mcos_fixtures.py writes
//! in MATLAB's layout; the expected values are what the reference reader `mat-io` reads from
//! the same files. Broken object metadata (bad offsets, cycles, truncation at every length)
//! gives an opaque value for that variable only, never an error for the file or a panic.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod canon;

use canon::{canon, same};
use sciio_mat::{MatFile, MatValue, ObjectData};
use sciio_testkit::{run_python_script, tempdir};
use serde_json::Value as J;

/// The fixtures, made once per test binary.
fn fixtures() -> &'static Path {
    // The temporary directory lives (and is removed) with the test binary's statics.
    type Keep = Box<dyn std::any::Any + Send + Sync>;
    static DIR: OnceLock<(Keep, PathBuf)> = OnceLock::new();
    let (_, path) = DIR.get_or_init(|| {
        let dir = tempdir();
        let path = dir.path().to_path_buf();
        run_python_script("python/mat_mcos_fixtures.py", &[path.to_str().unwrap()]);
        (Box::new(dir) as Keep, path)
    });
    path
}

#[test]
fn objects_read_as_mat_io_reads_them() {
    let dir = fixtures();
    let expected: serde_json::Map<String, J> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mat = MatFile::open(dir.join("objects.mat")).unwrap();
    let mut checked = 0;
    for (name, want) in &expected {
        let got = canon(&mat.read(name).unwrap());
        assert!(same(&got, want), "{name}:\n sciio:  {got}\n mat-io: {want}");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} variables compared");
}

#[test]
fn string_details() {
    let mat = MatFile::open(fixtures().join("objects.mat")).unwrap();
    let MatValue::Object(s) = mat.read("s_missing").unwrap() else {
        panic!("s_missing not an object")
    };
    assert_eq!(
        s.data,
        ObjectData::String(vec![Some("x".into()), None, Some(String::new())])
    );
    assert_eq!(s.display_items(), vec!["\"x\"", "<missing>", "\"\""]);
    // numpy view: U array of MATLAB's shape, <missing> as "".
    let u = s.to_numpy().unwrap();
    assert_eq!(u.dtype().to_string(), "<U1");
    assert_eq!(u.shape(), &[1, 3]);
    let m = mat.read("s_matrix").unwrap();
    assert_eq!(m.class().name(), "string");
    assert_eq!(m.matlab_shape(), vec![2, 3]);
    let info = mat.info("s_matrix").unwrap();
    assert_eq!(info.shape, vec![2, 3]);
    assert_eq!(info.class.name(), "string");
}

#[test]
fn datetime_time_zone_format_and_numpy_view() {
    let mat = MatFile::open(fixtures().join("objects.mat")).unwrap();
    let MatValue::Object(tz) = mat.read("dt_tz").unwrap() else {
        panic!("dt_tz")
    };
    let ObjectData::Datetime(d) = &tz.data else {
        panic!("dt_tz not a datetime")
    };
    assert_eq!(d.time_zone, "America/New_York");
    assert_eq!(d.format, "");
    let MatValue::Object(f) = mat.read("dt_fmt").unwrap() else {
        panic!("dt_fmt")
    };
    let ObjectData::Datetime(d) = &f.data else {
        panic!("dt_fmt not a datetime")
    };
    assert_eq!(d.format, "yyyy-MM-dd HH:mm:ss.SSS");
    assert_eq!(d.time_zone, "");
    let MatValue::Object(m) = mat.read("dt_matrix").unwrap() else {
        panic!("dt_matrix")
    };
    let a = m.to_numpy().unwrap();
    assert_eq!(a.dtype().to_string(), "<M8[ms]");
    assert_eq!(a.shape(), &[2, 2]);
    // Row-major: [[t0, 0], [NaT, -1 day]].
    let ticks: Vec<i64> = a
        .as_bytes()
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(ticks, vec![1743465600000, 0, i64::MIN, -86400000]);
    assert_eq!(m.display_items()[0], "2025-04-01T00:00:00.000");
    assert_eq!(m.display_items()[1], "NaT");
    let MatValue::Object(dur) = mat.read("dur_s").unwrap() else {
        panic!("dur_s")
    };
    let ObjectData::Duration(d) = &dur.data else {
        panic!("dur_s not a duration")
    };
    assert_eq!(d.format, "s");
    assert_eq!(dur.to_numpy().unwrap().dtype().to_string(), "<m8[ms]");
    let MatValue::Object(hms) = mat.read("dur_hms").unwrap() else {
        panic!("dur_hms")
    };
    let ObjectData::Duration(d) = &hms.data else {
        panic!("dur_hms not a duration")
    };
    assert_eq!(d.format, "hh:mm:ss", "the class default");
}

#[test]
fn categorical_keeps_unused_categories_and_order() {
    let mat = MatFile::open(fixtures().join("objects.mat")).unwrap();
    let MatValue::Object(c) = mat.read("cat_row").unwrap() else {
        panic!("cat_row")
    };
    let ObjectData::Categorical(cat) = &c.data else {
        panic!("not categorical")
    };
    assert_eq!(cat.categories, vec!["blue", "green", "red", "purple"]);
    assert_eq!(cat.codes, vec![3, 2, 0, 3]);
    assert!(!cat.ordered);
    assert_eq!(
        c.display_items(),
        vec!["red", "green", "<undefined>", "red"]
    );
    let MatValue::Object(o) = mat.read("cat_ordinal").unwrap() else {
        panic!("cat_ordinal")
    };
    let ObjectData::Categorical(cat) = &o.data else {
        panic!("not categorical")
    };
    assert!(cat.ordered && cat.protected);
}

#[test]
fn user_classes_nested_objects_and_function_handles() {
    let mat = MatFile::open(fixtures().join("objects.mat")).unwrap();
    let MatValue::Object(p) = mat.read("obj_point").unwrap() else {
        panic!("obj_point")
    };
    assert_eq!(p.class, "geo.Point");
    let ObjectData::Properties(elements) = &p.data else {
        panic!("properties")
    };
    let names: Vec<&str> = elements[0].iter().map(|(n, _)| n.as_str()).collect();
    // Class defaults first (label kept, x replaced by the saved value), then saved ones.
    assert_eq!(names, vec!["label", "x", "y"]);
    assert_eq!(elements[0][1].1, MatValue::from(1.5));
    let arr = mat.read("obj_array").unwrap();
    assert_eq!(arr.matlab_shape(), vec![2, 2]);
    assert_eq!(arr.class().name(), "geo.Point");
    // An object inside a struct field and a cell.
    let MatValue::Struct(st) = mat.read("st").unwrap() else {
        panic!("st")
    };
    let MatValue::Object(name) = st.field(0, "name").unwrap() else {
        panic!("st.name")
    };
    assert_eq!(
        name.data,
        ObjectData::String(vec![Some("in a struct".into())])
    );
    let fh = mat.read("fh").unwrap();
    let MatValue::Opaque(o) = &fh else {
        panic!("fh: {fh:?}")
    };
    assert_eq!(o.class, "function_handle");
    assert!(o.note.contains("@sin (simple)"), "{}", o.note);
    assert!(matches!(o.payload.as_deref(), Some(MatValue::Struct(_))));
    // Writing objects is refused with a clear error.
    let out = tempdir();
    let err = sciio_mat::write_mat(
        out.path().join("x.mat"),
        &[("p".to_string(), MatValue::Object(p.clone()))],
        &sciio_mat::WriteOptions::default(),
    )
    .unwrap_err();
    assert!(err.message().contains("geo.Point"), "{err}");
}

fn opaque_note(mat: &MatFile, name: &str, case: &str) -> String {
    match mat.read(name) {
        Ok(MatValue::Opaque(o)) => o.note,
        other => panic!("{case}:{name}: expected an opaque value, got {other:?}"),
    }
}

#[test]
fn broken_metadata_makes_that_variable_opaque() {
    let dir = fixtures();
    // (file, words of the reason, the variables it breaks: the other stays decoded)
    let both: &[&str] = &["d", "u"];
    let cases = [
        ("version", "version 99", both),
        ("names_past_end", "names end", both),
        ("region_reversed", "region", both),
        ("region_past_end", "region", both),
        ("property_count_huge", "past the region", both),
        ("class_id_huge", "class id", &["d"][..]),
        ("garbage", "version", both),
    ];
    for (case, words, broken) in cases {
        let mat = MatFile::open(dir.join(format!("corrupt_{case}.mat"))).unwrap();
        for var in ["d", "u"] {
            if !broken.contains(&var) {
                assert!(
                    matches!(mat.read(var).unwrap(), MatValue::Object(_)),
                    "{case}:{var}"
                );
                continue;
            }
            let note = opaque_note(&mat, var, case);
            assert!(
                note.contains(words),
                "{case}:{var}: {note:?} lacks {words:?}"
            );
        }
        assert_eq!(mat.read("ok").unwrap(), MatValue::from(42.0), "{case}");
        // Every variable reads (none fails the file).
        assert_eq!(mat.read_all().unwrap().len(), 3, "{case}");
    }
    let mat = MatFile::open(dir.join("corrupt_cycle.mat")).unwrap();
    // The object decodes; the property that refers back to it is opaque, with the reason.
    let MatValue::Object(lp) = mat.read("loop").unwrap() else {
        panic!("loop")
    };
    let ObjectData::Properties(elements) = &lp.data else {
        panic!("loop properties")
    };
    let MatValue::Opaque(inner) = &elements[0][0].1 else {
        panic!("loop.self: {:?}", elements[0][0].1)
    };
    assert_eq!(inner.class, "Loop");
    assert!(inner.note.contains("cycle"), "{}", inner.note);
    assert!(opaque_note(&mat, "missing", "cycle").contains("object id 99"));
    assert!(opaque_note(&mat, "not_a_ref", "cycle").contains("not an MCOS object reference"));
    assert!(matches!(mat.read("d").unwrap(), MatValue::Object(_)));
}

#[test]
fn truncated_metadata_at_every_length() {
    let dir = fixtures();
    let full = MatFile::open(dir.join("trunc_full.mat")).unwrap();
    let want_d = full.read("d").unwrap();
    assert!(matches!(want_d, MatValue::Object(_)));
    let mut cuts = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("trunc_0") {
            continue;
        }
        cuts += 1;
        let mat = MatFile::open(&path).unwrap();
        for var in ["d", "u"] {
            match mat.read(var) {
                Ok(MatValue::Opaque(o)) => assert!(!o.note.is_empty()),
                // A cut inside the trailing padding still holds everything needed.
                Ok(MatValue::Object(_)) => {}
                other => panic!("{name}:{var}: {other:?}"),
            }
        }
        assert_eq!(mat.read("ok").unwrap(), MatValue::from(42.0), "{name}");
    }
    assert!(cuts >= 40, "only {cuts} truncations");
}

#[test]
fn objects_written_by_mat_io_read_as_mat_io_reads_them() {
    let dir = fixtures();
    let expected: serde_json::Map<String, J> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected_matio.json")).unwrap())
            .unwrap();
    let mat = MatFile::open(dir.join("matio_written.mat")).unwrap();
    for (name, want) in &expected {
        let got = canon(&mat.read(name).unwrap());
        assert!(same(&got, want), "{name}:\n sciio:  {got}\n mat-io: {want}");
    }
    assert_eq!(expected.len(), 4);
    let MatValue::Object(t) = mat.read("t").unwrap() else {
        panic!("t")
    };
    assert_eq!(t.display_items(), vec!["x: double 3x1", "n: int32 3x1"]);
}

//! MAT v7.3 and v7 files saved by MATLAB itself (tests/data/matlab, from the mat-io project's
//! test data): every variable reads (objects sciio cannot decode are opaque values, never errors),
//! and every value that the reference reader mat-io gives in canonical form
//! (python/mat_matlab_expected.py) equals sciio's.

mod canon;

use std::collections::BTreeMap;
use std::path::PathBuf;

use canon::{canon, same};
use sciio_mat::{MatFile, MatValue, MatWriter, WriteOptions};
use sciio_testkit::{run_python_script, tempdir};
use serde_json::Value as J;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/matlab")
}

fn files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mat"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 16, "MATLAB-written fixtures missing");
    files
}

/// {file name: {variable: mat-io's canonical value}}.
fn mat_io_values(files: &[PathBuf]) -> BTreeMap<String, BTreeMap<String, J>> {
    let dir = tempdir();
    let out = dir.path().join("expected.json");
    let mut args = vec![out.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    run_python_script("python/mat_matlab_expected.py", &args);
    serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap()
}

/// Where sciio's value differs from mat-io's: a timetable variable with several columns (a
/// 3x2 `data2`) is one MATLAB variable in sciio and two pandas columns (`data2_1`, `data2_2`)
/// in mat-io. Everything else (enumerations, containers.Map, calendarDuration, timetables'
/// row times, dynamic properties...) reads as mat-io reads it, in v7.3 and v7 files alike.
/// A fix makes this test fail until the list shrinks.
const KNOWN_GAPS: &[&str] = &[
    "test_tables_v7.mat:timetable_multi_col",
    "test_tables_v73.mat:timetable_multi_col",
];

#[test]
fn matlab_written_files_read_as_mat_io_reads_them() {
    let files = files();
    let expected = mat_io_values(&files);
    let (mut compared, mut mismatches) = (0, Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let mat = MatFile::open(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = &expected[name];
        let vars = mat.names().unwrap();
        assert_eq!(vars.len(), want.len(), "{name}: variable count");
        for var in vars {
            mat.info(&var)
                .unwrap_or_else(|e| panic!("{name}:{var} info: {e}"));
            let got = mat
                .read(&var)
                .unwrap_or_else(|e| panic!("{name}:{var} read: {e}"));
            let w = &want[&var];
            if w["class"] == "other" {
                continue; // mat-io's value has no canonical form (sparse, complex, maps...)
            }
            compared += 1;
            let g = canon(&got);
            if !same(&g, w) {
                mismatches.push((
                    format!("{name}:{var}"),
                    format!("{name}:{var}\n  sciio:  {g}\n  mat-io: {w}"),
                ));
            }
        }
    }
    let differing: Vec<&str> = mismatches.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(
        differing,
        KNOWN_GAPS,
        "values that differ from mat-io's changed:\n{}",
        mismatches
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(compared >= 80, "only {compared} values compared");
}

/// Adding a variable to a file MATLAB wrote rewrites it through the one writer (the native
/// one, as for new files): every variable MATLAB wrote — objects with their `#subsystem#`,
/// cells, structs, strings, tables — reads as before, in sciio and in mat-io, and the added
/// one reads too.
#[test]
fn adding_to_matlab_written_files_keeps_every_variable() {
    let dir = tempdir();
    let originals: Vec<PathBuf> = files()
        .into_iter()
        .filter(|p| p.to_str().unwrap().ends_with("_v73.mat"))
        .collect();
    assert!(originals.len() >= 8);
    let added = MatValue::from(vec![1.0, 2.0]);
    let mut copies = Vec::new();
    for path in &originals {
        let name = path.file_name().unwrap().to_str().unwrap();
        let copy = dir.path().join(name);
        std::fs::copy(path, &copy).unwrap();
        let mut w = MatWriter::open(&copy, WriteOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        w.write("sciio_added", &added).unwrap();
        w.finish().unwrap_or_else(|e| panic!("{name}: {e}"));
        // Nothing is left beside it.
        let stray: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(stray.is_empty(), "{stray:?}");
        let before = MatFile::open(path).unwrap();
        let after = MatFile::open(&copy).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(after.header_text(), before.header_text(), "{name}");
        for var in before.names().unwrap() {
            let was = before.read(&var).unwrap();
            let now = after
                .read(&var)
                .unwrap_or_else(|e| panic!("{name}:{var}: {e}"));
            assert_eq!(now, was, "{name}:{var}");
        }
        assert_eq!(after.read("sciio_added").unwrap(), added, "{name}");
        copies.push(copy);
    }
    let want = mat_io_values(&originals);
    let got = mat_io_values(&copies);
    for (file, vars) in &want {
        for (var, value) in vars {
            assert_eq!(&got[file][var], value, "mat-io, {file}:{var}");
        }
        assert_eq!(got[file].len(), vars.len() + 1, "{file}");
    }
}

/// MATLAB stores a struct's MATLAB_fields as a reference to a dataset when the names total
/// 4096 characters or more (struct_large: 526 fields, struct_even_larger: 4093).
#[test]
fn struct_field_list_stored_as_reference() {
    let mat = MatFile::open(data_dir().join("test_basic_v73.mat")).unwrap();
    for (var, n, first) in [
        ("struct_large", 526, "field1"),
        ("struct_even_larger", 4093, "s1"),
    ] {
        let MatValue::Struct(s) = mat.read(var).unwrap() else {
            panic!("{var} is not a struct")
        };
        assert_eq!(s.fields.len(), n, "{var}");
        assert_eq!(s.fields[0], first, "{var}");
    }
}

/// A 1x1 struct without fields is stored as MATLAB_empty with its (non-zero) dimensions.
#[test]
fn fieldless_struct_is_not_empty() {
    let mat = MatFile::open(data_dir().join("test_basic_v73.mat")).unwrap();
    assert_eq!(mat.info("struct_no_fields").unwrap().shape, vec![1, 1]);
    let MatValue::Struct(s) = mat.read("struct_no_fields").unwrap() else {
        panic!("not a struct")
    };
    assert_eq!(
        (s.shape.as_slice(), s.fields.len(), s.elements.len()),
        (&[1, 1][..], 0, 1)
    );
    assert_eq!(mat.info("struct_empty").unwrap().shape, vec![0, 0]);
}

/// A fuzzer-found file whose damaged metadata makes libhdf5 ask malloc for an absurd size:
/// libhdf5 reports the failed allocation and sciio turns it into one error naming the file.
#[test]
fn damaged_metadata_that_asks_for_a_huge_allocation_is_an_error() {
    let path = data_dir().join("../corrupt/libhdf5_huge_alloc.mat");
    let err = MatFile::open(&path)
        .and_then(|m| {
            for name in m.names()? {
                m.read(&name)?;
            }
            Ok(())
        })
        .expect_err("a damaged file must not read");
    let text = err.to_string();
    assert!(text.contains("libhdf5_huge_alloc.mat"), "{text}");
}

/// Whether `outline` describes `value`: arrays not read announce the class, size and
/// complexity the read value has; what was read is the value; cells and structs item by item.
fn outline_matches(outline: &sciio_mat::Outline, value: &MatValue) -> bool {
    use sciio_mat::Outline;
    match (outline, value) {
        (Outline::Value(v), value) => v == value,
        (Outline::Array(info), MatValue::Numeric(a) | MatValue::Logical(a)) => {
            info.class == value.class()
                && info.shape == a.shape()
                && info.complex == value.is_complex()
        }
        (Outline::Cell { shape, items }, MatValue::Cell(c)) => {
            *shape == c.shape
                && items.len() == c.items.len()
                && items
                    .iter()
                    .zip(&c.items)
                    .all(|(o, v)| outline_matches(o, v))
        }
        (
            Outline::Struct {
                shape,
                fields,
                elements,
            },
            MatValue::Struct(s),
        ) => {
            *shape == s.shape
                && *fields == s.fields
                && elements.len() == s.elements.len()
                && elements.iter().zip(&s.elements).all(|(oe, ve)| {
                    oe.len() == ve.len() && oe.iter().zip(ve).all(|(o, v)| outline_matches(o, v))
                })
        }
        _ => false,
    }
}

/// A listing's outline of every MATLAB-written variable (every numeric and logical array in a
/// cell or struct left unread: `min_bytes` 0) describes exactly what reading it gives.
#[test]
fn outlines_describe_what_reading_gives() {
    let mut unread = 0;
    for path in files() {
        let mat = MatFile::open(&path).unwrap();
        for var in mat.names().unwrap() {
            let outline = mat.outline(&var, 0).unwrap();
            let value = mat.read(&var).unwrap();
            assert!(
                outline_matches(&outline, &value),
                "{}:{var}\n{outline:?}\n{value:?}",
                path.display()
            );
            unread += usize::from(!matches!(outline, sciio_mat::Outline::Value(_)));
        }
    }
    // Cells and structs holding numbers in test_basic_v73.mat, mat73_testfile1.mat...
    assert!(unread >= 10, "{unread}");
}

//! Dumps what sciio reads from a file into a folder (a JSON manifest plus raw `.bin` files) so
//! `python/check_pytables_read.py` can compare it with what PyTables / h5py read.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

use sciio_pytables::sciio_hdf5::{Element, H5Type, RefTarget, Selection};
use sciio_pytables::{LeafData, NodeClass, NodeInfo, PtAttrValue, PtFile, VlRow};

/// Runs `python/check_pytables_read.py` on `file` and the manifest [`dump`] wrote into `dump_dir`:
/// one line per leaf, `OK ...` or `MISMATCH ...`, as PyTables / h5py read it.
pub fn check_with_pytables(file: &Path, dump_dir: &Path) -> String {
    sciio_testkit::run_python_script(
        "python/check_pytables_read.py",
        &[
            &file.to_string_lossy(),
            &dump_dir.join("manifest.json").to_string_lossy(),
        ],
    )
}

fn json(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn leaves(node: &NodeInfo, out: &mut Vec<NodeInfo>) {
    if matches!(
        node.class,
        NodeClass::Table
            | NodeClass::Array
            | NodeClass::CArray
            | NodeClass::EArray
            | NodeClass::VLArray
            | NodeClass::Unknown(_)
    ) && node.dtype.is_some()
    {
        out.push(node.clone());
    }
    for c in &node.children {
        leaves(c, out);
    }
}

/// Reads every leaf of `file` and writes `dir/manifest.json` plus one `.bin` per array leaf.
/// Returns (leaves read, errors as "path: message").
pub fn dump(file: &Path, dir: &Path) -> (usize, Vec<String>) {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    let pt = match PtFile::open(file) {
        Ok(f) => f,
        Err(e) => return (0, vec![format!("open: {e}")]),
    };
    let tree = match pt.tree(true) {
        Ok(t) => t,
        Err(e) => return (0, vec![format!("tree: {e}")]),
    };
    // Exercise the attribute reader on every node: pickles stay bytes.
    fn check_attrs(n: &NodeInfo) {
        for a in &n.attrs {
            if let PtAttrValue::Pickle(b) = &a.value {
                assert!(b.ends_with(b"."), "pickle marker on {}", a.name);
            }
        }
        n.children.iter().for_each(check_attrs);
    }
    check_attrs(&tree);
    let mut list = Vec::new();
    leaves(&tree, &mut list);
    let mut n = 0;
    for (i, leaf) in list.iter().enumerate() {
        let path = &leaf.path;
        match pt.read(path) {
            Ok(LeafData::Array(d)) => {
                let descr = match d.ty.numpy_descr() {
                    Ok(s) => s,
                    Err(e) => {
                        errors.push(format!("{path}: {e}"));
                        continue;
                    }
                };
                let bin = format!("{i}.bin");
                std::fs::write(dir.join(&bin), &d.bytes).unwrap();
                entries.push(format!(
                    "{{\"path\": {}, \"kind\": \"array\", \"descr\": {descr}, \"shape\": {:?}, \"bin\": {}}}",
                    json(path),
                    d.shape,
                    json(&bin)
                ));
                n += 1;
            }
            Ok(LeafData::VlArray(rows)) => {
                let mut rs = Vec::new();
                for r in rows {
                    rs.push(match r {
                        VlRow::Bytes(b) => format!("{{\"bytes\": \"{}\"}}", hex(&b)),
                        VlRow::Text(t) => format!("{{\"text\": {}}}", json(&t)),
                        VlRow::Values(d) => format!(
                            "{{\"descr\": {}, \"shape\": {:?}, \"hex\": \"{}\"}}",
                            d.ty.numpy_descr().unwrap_or_else(|_| "\"|V1\"".into()),
                            d.shape,
                            hex(&d.bytes)
                        ),
                    });
                }
                entries.push(format!(
                    "{{\"path\": {}, \"kind\": \"vlarray\", \"rows\": [{}]}}",
                    json(path),
                    rs.join(", ")
                ));
                n += 1;
            }
            Ok(LeafData::Elements(d)) => {
                let rows: Vec<String> = d.elements.iter().map(|e| element_json(&d.ty, e)).collect();
                entries.push(format!(
                    "{{\"path\": {}, \"kind\": \"elements\", \"shape\": {:?}, \"rows\": [{}]}}",
                    json(path),
                    d.shape,
                    rows.join(", ")
                ));
                n += 1;
            }
            Err(e) => errors.push(format!("{path}: {e} [{:?}]", e.kind())),
        }
    }
    std::fs::write(
        dir.join("manifest.json"),
        format!("[{}]", entries.join(",\n")),
    )
    .unwrap();
    (n, errors)
}

fn corners(v: &[Vec<u64>]) -> String {
    let rows: Vec<String> = v.iter().map(|c| format!("{c:?}")).collect();
    format!("[{}]", rows.join(", "))
}

/// A reference target as JSON: `{"ref": path-or-null, "sel": ...}` (selection for regions).
pub fn ref_json(t: &RefTarget) -> String {
    match t {
        RefTarget::Null => "{\"ref\": null}".to_string(),
        RefTarget::Object(p) => format!("{{\"ref\": {}}}", json(p)),
        RefTarget::Region { path, selection } => {
            let sel = match selection {
                Selection::All => "\"all\"".to_string(),
                Selection::None => "\"none\"".to_string(),
                Selection::Blocks(b) => {
                    let starts: Vec<Vec<u64>> = b.iter().map(|(s, _)| s.clone()).collect();
                    let ends: Vec<Vec<u64>> = b.iter().map(|(_, e)| e.clone()).collect();
                    format!("{{\"blocks\": [{}, {}]}}", corners(&starts), corners(&ends))
                }
                Selection::Points(p) => format!("{{\"points\": {}}}", corners(p)),
            };
            format!("{{\"ref\": {}, \"sel\": {sel}}}", json(path))
        }
    }
}

/// One decoded element as JSON, walking its type alongside (see check_pytables_read.py).
pub fn element_json(ty: &H5Type, e: &Element) -> String {
    match (ty, e) {
        (_, Element::Fixed(b)) => format!(
            "{{\"descr\": {}, \"hex\": \"{}\"}}",
            ty.numpy_descr().unwrap(),
            hex(b)
        ),
        (_, Element::String(b)) => format!("{{\"str\": \"{}\"}}", hex(b)),
        (H5Type::VarLen { base }, Element::Values(b)) => format!(
            "{{\"seq_descr\": {}, \"hex\": \"{}\"}}",
            base.numpy_descr().unwrap(),
            hex(b)
        ),
        (H5Type::VarLen { base }, Element::Sequence(items)) => {
            let v: Vec<String> = items.iter().map(|i| element_json(base, i)).collect();
            format!("{{\"seq\": [{}]}}", v.join(", "))
        }
        (H5Type::Compound { fields, .. }, Element::Compound(members)) => {
            let v: Vec<String> = fields
                .iter()
                .zip(members)
                .map(|(f, m)| format!("{}: {}", json(&f.name), element_json(&f.ty, m)))
                .collect();
            format!("{{\"fields\": {{{}}}}}", v.join(", "))
        }
        (H5Type::Array { base, dims }, Element::Array(items)) => {
            let v: Vec<String> = items.iter().map(|i| element_json(base, i)).collect();
            format!("{{\"arr\": [{}], \"dims\": {dims:?}}}", v.join(", "))
        }
        (_, Element::Reference(t)) => ref_json(t),
        (ty, e) => panic!("element {e:?} does not fit type {ty:?}"),
    }
}

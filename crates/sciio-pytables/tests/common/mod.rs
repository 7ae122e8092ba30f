//! Dumps what sciio reads from a file into a folder (a JSON manifest plus raw `.bin` files) so
//! `python/check_pytables_read.py` can compare it with what PyTables / h5py read.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

use sciio_pytables::{LeafData, NodeClass, NodeInfo, PtAttrValue, PtFile, VlRow};

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

//! `sciio ls`: the tree table (one view for every format), PyTables' ptdump listing with
//! `--ptdump`, and a JSON document with `--json`.
//!
//! `ls --json` prints one document:
//!
//! ```json
//! {"file": "t.h5", "format": "hdf5", "size_on_disk": 13544, "nodes": [
//!   {"path": "/", "kind": "group", "children": 2, "attributes": {}},
//!   {"path": "/x", "kind": "array", "dtype": "<f8", "shape": [3, 4], "order": "C",
//!    "nbytes": 96, "attributes": {"units": "m"}},
//!   {"path": "/alias", "kind": "link", "target": "/x", "attributes": {}}]}
//! ```
//!
//! `dtype` is numpy's descr as in `cat --json` (a typestr, or `[name, descr]` lists for
//! structured dtypes); attribute values follow `cat --json`'s rules for values (a scalar is a
//! bare value). A frame has `columns` and `rows`, a node sciio cannot read its `reason`, a MAT
//! variable `native: {"class": ..., "shape": [...]}`.

use serde_json::{json, Map, Value as Json};

use sciio::{AttrValue, Error, File, Node, NodeKind, Order, Result, Target};

use crate::{draw, json as js};

/// What `ls` prints.
#[derive(Debug, Clone, Copy, Default)]
pub struct LsOptions {
    /// Also every node's attributes.
    pub attrs: bool,
    /// PyTables' ptdump listing instead of the table (HDF5 files).
    pub ptdump: bool,
    /// One JSON document instead of text.
    pub json: bool,
}

/// The text `sciio ls` prints for `target`.
pub fn ls(target: &Target, options: LsOptions) -> Result<String> {
    let file = File::open(&target.file)?;
    let (root, prefix) = match &target.node {
        Some(node) => (file.node(node)?, format!("/{}", node.trim_matches('/'))),
        None => (file.root(), String::new()),
    };
    if options.json {
        return Ok(to_json(&file, root, &prefix)? + "\n");
    }
    if options.ptdump {
        return file
            .native_listing(target.node.as_deref(), options.attrs)?
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "--ptdump lists HDF5 files as PyTables' ptdump does; this is a {} file",
                    file.format()
                ))
                .with_file(&target.file)
            });
    }
    let mut out = format!(
        "{} ({}, {} on disk)\n",
        target.file.display(),
        file.format(),
        draw::human_bytes(file.size_on_disk())
    );
    // A MAT file says its version and header text.
    if let Some(mat) = file.mat_description() {
        out += &(mat + "\n");
    }
    let label = if prefix.is_empty() { "/" } else { &prefix };
    out += &(draw::tree_table_labelled(root, label) + "\n");
    out += &draw::opaque_notes(root, &prefix);
    // A data frame also lists its index and columns with their pandas, numpy and Arrow types.
    out += &file.frame_description()?.unwrap_or_default();
    if options.attrs {
        out += &("\n".to_string() + &draw::attribute_lines(root, &prefix));
    }
    Ok(out)
}

fn to_json(file: &File, root: &Node, prefix: &str) -> Result<String> {
    let mut nodes = Vec::new();
    for (path, node) in root.walk(prefix) {
        nodes.push(node_json(&path, node)?);
    }
    let mut doc = Map::new();
    doc.insert("file".into(), json!(file.path().display().to_string()));
    doc.insert("format".into(), json!(file.format().to_string()));
    doc.insert("size_on_disk".into(), json!(file.size_on_disk()));
    if let Some(mat) = file.mat_description() {
        doc.insert("mat".into(), json!(mat));
    }
    doc.insert("nodes".into(), Json::Array(nodes));
    serde_json::to_string(&Json::Object(doc)).map_err(|e| Error::invalid_input(e.to_string()))
}

fn node_json(path: &str, node: &Node) -> Result<Json> {
    let mut m = Map::new();
    m.insert("path".into(), json!(path));
    m.insert("kind".into(), json!(node.kind_name()));
    match &node.kind {
        NodeKind::Array(info) | NodeKind::Table(info) => {
            m.insert(
                "dtype".into(),
                js::literal_json(&info.dtype.descr_literal()?),
            );
            m.insert("shape".into(), json!(info.shape));
            m.insert(
                "order".into(),
                json!(match info.order {
                    Order::C => "C",
                    Order::F => "F",
                }),
            );
            m.insert("nbytes".into(), json!(info.nbytes()));
        }
        NodeKind::Group(children) => {
            m.insert("children".into(), json!(children.len()));
        }
        NodeKind::Frame { columns, rows } => {
            m.insert("columns".into(), json!(columns));
            m.insert("rows".into(), json!(rows));
        }
        NodeKind::Link(target) => {
            m.insert("target".into(), json!(target));
        }
        NodeKind::Opaque { reason, .. } => {
            m.insert("reason".into(), json!(reason));
        }
        _ => {}
    }
    if let Some(native) = &node.native {
        m.insert(
            "native".into(),
            json!({"class": native.class, "shape": native.shape}),
        );
    }
    let mut attrs = Map::new();
    for a in &node.attrs {
        attrs.insert(a.name.clone(), attr_json(&a.value));
    }
    m.insert("attributes".into(), Json::Object(attrs));
    Ok(Json::Object(m))
}

fn attr_json(value: &AttrValue) -> Json {
    match value {
        AttrValue::Array(a) => js::array_document("", a)
            .map(|mut doc| doc["values"].take())
            .unwrap_or_else(|e| json!({ "unreadable": e.to_string() })),
        AttrValue::Other(what) => json!({ "not_shown": what }),
        _ => json!({ "not_shown": "an attribute of a kind this sciio does not print" }),
    }
}

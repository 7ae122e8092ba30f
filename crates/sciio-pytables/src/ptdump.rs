//! An HDF5 file's tree the way PyTables' `ptdump` lists it: one line per node with its class,
//! shape and the short filter names (`/x (CArray(40, 50)shuffle, zlib(5)) 'title'`, PyTables'
//! own `str(node)`), followed by what `ptdump -v` spreads over several lines: dtype, chunk
//! shape and the full `Filters(...)`. With attributes, each node's attribute set follows it as
//! `ptdump -a` prints it, values shortened.
//!
//! Filters are PyTables' view: a leaf's come from its HDF5 pipeline (as `Filters._from_leaf`
//! derives them), a group's from its `FILTERS` attribute.

use std::fmt::Write;

use sciio_core::{PyLiteral, Value};
use sciio_hdf5::filters::id;
use sciio_hdf5::{Filter, RawData};

use crate::attrs::{PtAttr, PtAttrValue, PtFilters};
use crate::tree::{NodeClass, NodeInfo};

/// Attribute values longer than this are cut (with `...`).
const MAX_VALUE_CHARS: usize = 72;
/// Array attributes show at most this many elements.
const MAX_ELEMENTS: usize = 8;

impl NodeInfo {
    /// The listing of this node and everything below it as `ptdump` prints it (`ptdump -v`'s
    /// details indented below each leaf), with each node's attributes when `attrs` (and the
    /// tree was read with them, [`PtFile::tree`](crate::PtFile::tree)).
    pub fn render(&self, attrs: bool) -> String {
        let mut out = String::new();
        render_into(self, attrs, &mut out);
        out
    }
}

fn render_into(node: &NodeInfo, attrs: bool, out: &mut String) {
    let _ = writeln!(out, "{}", node_line(node));
    if attrs && !node.attrs.is_empty() {
        write_attrs(node, out);
    }
    for child in &node.children {
        render_into(child, attrs, out);
    }
}

fn is_leaf(class: &NodeClass) -> bool {
    matches!(
        class,
        NodeClass::Table
            | NodeClass::Array
            | NodeClass::CArray
            | NodeClass::EArray
            | NodeClass::VLArray
            | NodeClass::Unknown(_)
    )
}

/// One node's line.
fn node_line(node: &NodeInfo) -> String {
    let path = &node.path;
    let title = PyLiteral::Str(node.title.clone().unwrap_or_default()).repr();
    match &node.class {
        NodeClass::SoftLink(target) => format!("{path} (SoftLink) -> {target}"),
        NodeClass::ExternalLink(file, target) => {
            format!("{path} (ExternalLink) -> {file}:{target}")
        }
        NodeClass::HardLinkAgain(_) => format!("{path} (HardLink) -> shown above"),
        NodeClass::Group => {
            let class = if path == "/" { "RootGroup" } else { "Group" };
            let mut line = format!("{path} ({class}) {title}");
            if let Some(f) = &node.pt_filters {
                let _ = write!(line, "  filters={}", filters_repr(f));
            }
            line
        }
        class if is_leaf(class) => {
            let filters = leaf_filters(&node.filters);
            let mut line = format!(
                "{path} ({}{}{}) {title}",
                class_name(class),
                tuple(&node.shape),
                short_filters(&filters)
            );
            if let Some(ty) = &node.dtype {
                let descr = ty
                    .numpy_descr()
                    .unwrap_or_else(|_| "(no numpy dtype)".to_string());
                let _ = write!(line, "  dtype={descr}");
            }
            let chunks = node
                .chunk_shape
                .as_deref()
                .map_or_else(|| "None".to_string(), tuple);
            let _ = write!(
                line,
                "  chunkshape={chunks}  filters={}",
                filters_repr(&filters)
            );
            line
        }
        other => format!("{path} ({}) {title}", class_name(other)),
    }
}

fn class_name(class: &NodeClass) -> String {
    match class {
        NodeClass::Unknown(c) => c.clone(),
        other => format!("{other:?}"),
    }
}

/// A shape as Python prints a tuple.
fn tuple(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
    match parts.len() {
        1 => format!("({},)", parts[0]),
        _ => format!("({})", parts.join(", ")),
    }
}

/// PyTables' `str(leaf)` filter part: `fletcher32`, then (when compressed) `shuffle`,
/// `bitshuffle` and `complib(level)`; nothing when there is none.
fn short_filters(f: &PtFilters) -> String {
    let mut names = Vec::new();
    if f.fletcher32 {
        names.push("fletcher32".to_string());
    }
    if f.complevel > 0 {
        if f.shuffle {
            names.push("shuffle".to_string());
        }
        if f.bitshuffle {
            names.push("bitshuffle".to_string());
        }
        let lib = f.complib.as_deref().unwrap_or("zlib");
        names.push(format!("{lib}({})", f.complevel));
    }
    names.join(", ")
}

/// PyTables' `repr(Filters)`.
fn filters_repr(f: &PtFilters) -> String {
    let mut args = vec![format!("complevel={}", f.complevel)];
    if f.complevel != 0 {
        let lib = f.complib.clone().unwrap_or_default();
        args.push(format!("complib={}", PyLiteral::Str(lib).repr()));
    }
    let py_bool = |b: bool| if b { "True" } else { "False" };
    args.push(format!("shuffle={}", py_bool(f.shuffle)));
    args.push(format!("bitshuffle={}", py_bool(f.bitshuffle)));
    args.push(format!("fletcher32={}", py_bool(f.fletcher32)));
    let lsd = f
        .least_significant_digit
        .map_or_else(|| "None".to_string(), |d| d.to_string());
    args.push(format!("least_significant_digit={lsd}"));
    format!("Filters({})", args.join(", "))
}

/// Blosc's compressor codes (`cd_values[6]`), the same for Blosc 1 and Blosc 2.
fn blosc_codec(code: u32) -> String {
    match code {
        0 => "blosclz".to_string(),
        1 => "lz4".to_string(),
        2 => "lz4hc".to_string(),
        3 => "snappy".to_string(),
        4 => "zlib".to_string(),
        5 => "zstd".to_string(),
        other => format!("codec{other}"),
    }
}

/// A leaf's filters from its pipeline, as PyTables' `Filters._from_leaf` derives them.
fn leaf_filters(pipeline: &[Filter]) -> PtFilters {
    let mut f = PtFilters {
        complevel: 0,
        complib: None,
        shuffle: false,
        bitshuffle: false,
        fletcher32: false,
        least_significant_digit: None,
    };
    let cd = |filter: &Filter, i: usize| filter.cd_values.get(i).copied().unwrap_or(0);
    for filter in pipeline {
        match filter.id {
            id::DEFLATE | id::LZO | id::BZIP2 => {
                let lib = match filter.id {
                    id::DEFLATE => "zlib",
                    id::LZO => "lzo",
                    _ => "bzip2",
                };
                f.complib = Some(lib.to_string());
                f.complevel = cd(filter, 0).min(255) as u8;
            }
            id::BLOSC | id::BLOSC2 => {
                let lib = if filter.id == id::BLOSC {
                    "blosc"
                } else {
                    "blosc2"
                };
                f.complevel = cd(filter, 4).min(255) as u8;
                match cd(filter, 5) {
                    1 => f.shuffle = true,
                    2 => f.bitshuffle = true,
                    _ => {}
                }
                f.complib = Some(if filter.cd_values.len() > 6 {
                    format!("{lib}:{}", blosc_codec(cd(filter, 6)))
                } else {
                    lib.to_string()
                });
            }
            // PyTables knows szip but cannot write it: "any nonzero level will do".
            id::SZIP => {
                f.complib = Some("szip".to_string());
                f.complevel = 1;
            }
            id::SHUFFLE => f.shuffle = true,
            id::FLETCHER32 => f.fletcher32 = true,
            _ => {}
        }
    }
    f
}

/// The node's attribute set, as `ptdump -a` prints it.
fn write_attrs(node: &NodeInfo, out: &mut String) {
    let n = node.attrs.len();
    let _ = writeln!(
        out,
        "  {}._v_attrs (AttributeSet), {n} attribute{}:",
        node.path,
        if n == 1 { "" } else { "s" }
    );
    for (i, a) in node.attrs.iter().enumerate() {
        let open = if i == 0 { "   [" } else { "    " };
        let close = if i + 1 == n { "]" } else { "," };
        let _ = writeln!(out, "{open}{} := {}{close}", a.name, attr_value(a));
    }
}

/// An attribute's value in Python's notation, shortened.
fn attr_value(a: &PtAttr) -> String {
    if a.name == "FILTERS" {
        if let Some(packed) = a.as_i64() {
            return filters_repr(&PtFilters::unpack(packed));
        }
    }
    let text = if let Some(s) = a.as_str() {
        PyLiteral::Str(s).repr()
    } else if let PtAttrValue::Data(raw) = &a.value {
        data_text(raw)
    } else if let PtAttrValue::Pickle(bytes) = &a.value {
        format!(
            "<pickled Python object, {} bytes, never unpickled>",
            bytes.len()
        )
    } else if let PtAttrValue::Vlen(v) = &a.value {
        format!("<{} variable-length items>", v.items.len())
    } else if let PtAttrValue::Empty(_) = &a.value {
        "<empty (null dataspace)>".to_string()
    } else {
        "<not shown>".to_string()
    };
    shorten(text)
}

fn shorten(text: String) -> String {
    if text.chars().count() <= MAX_VALUE_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_VALUE_CHARS - 3).collect();
    cut + "..."
}

/// Fixed-layout data: a scalar as its value, an array as a list (first elements only).
fn data_text(raw: &RawData) -> String {
    let Ok(array) = raw.clone().into_numpy() else {
        return format!("<{} bytes>", raw.bytes.len());
    };
    if array.shape().is_empty() {
        return array
            .get_flat(0)
            .map_or_else(|_| "?".to_string(), |v| value_text(&v));
    }
    let n = array.len();
    let mut items: Vec<String> = (0..n.min(MAX_ELEMENTS))
        .map(|i| {
            array
                .get_flat(i)
                .map_or_else(|_| "?".to_string(), |v| value_text(&v))
        })
        .collect();
    if n > MAX_ELEMENTS {
        items.push(format!("... ({n} elements)"));
    }
    format!("[{}]", items.join(", "))
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(x) => format!("{x:?}"),
        Value::Bytes(b) => PyLiteral::Str(String::from_utf8_lossy(b).into_owned()).repr(),
        Value::Str(s) => PyLiteral::Str(s.clone()).repr(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(id: i32, cd: &[u32]) -> Filter {
        Filter {
            id,
            name: String::new(),
            cd_values: cd.to_vec(),
            flags: 0,
        }
    }

    #[test]
    fn leaf_filters_follow_pytables() {
        let f = leaf_filters(&[filter(id::SHUFFLE, &[8]), filter(id::DEFLATE, &[1])]);
        assert_eq!(
            filters_repr(&f),
            "Filters(complevel=1, complib='zlib', shuffle=True, bitshuffle=False, \
             fletcher32=False, least_significant_digit=None)"
        );
        assert_eq!(short_filters(&f), "shuffle, zlib(1)");
        let b = leaf_filters(&[filter(id::BLOSC2, &[1, 0, 37, 0, 5, 2, 5])]);
        assert_eq!(b.complib.as_deref(), Some("blosc2:zstd"));
        assert!(b.bitshuffle && !b.shuffle);
        let none = leaf_filters(&[]);
        assert_eq!(
            filters_repr(&none),
            "Filters(complevel=0, shuffle=False, bitshuffle=False, fletcher32=False, \
             least_significant_digit=None)"
        );
        assert_eq!(short_filters(&none), "");
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(200);
        let cut = shorten(long);
        assert_eq!(cut.chars().count(), MAX_VALUE_CHARS);
        assert!(cut.ends_with("..."));
    }
}

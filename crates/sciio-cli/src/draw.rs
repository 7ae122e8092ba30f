//! `sciio ls`: the node tree drawn in the first column of a box-drawn table.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};
use sciio::{ArrayInfo, AttrValue, Node, NodeKind, Order};

/// The table for `root`: one row per node, the tree drawn with `├──`/`└──` in the first column,
/// the first row labelled `label` (`/`, or the node's path when `ls` lists a node of the file).
pub fn tree_table_labelled(root: &Node, label: &str) -> String {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec!["node", "kind", "dtype", "shape", "order", "size"]);
    let mut rows = Vec::new();
    rows.push(row(label.to_string(), root));
    add_children(root, "", &mut rows);
    for r in rows {
        table.add_row(r);
    }
    if let Some(col) = table.column_mut(5) {
        col.set_cell_alignment(CellAlignment::Right);
    }
    table.to_string()
}

fn add_children(node: &Node, indent: &str, rows: &mut Vec<Vec<String>>) {
    let children = node.children();
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let branch = if last { "└── " } else { "├── " };
        let name = match &child.kind {
            NodeKind::Link(target) => format!("{} -> {target}", child.name),
            _ => child.name.clone(),
        };
        rows.push(row(format!("{indent}{branch}{name}"), child));
        let deeper = format!("{indent}{}", if last { "    " } else { "│   " });
        add_children(child, &deeper, rows);
    }
}

fn row(label: String, node: &Node) -> Vec<String> {
    let mut cells = neutral_row(label, node);
    // A MATLAB variable shows its class and MATLAB size (the dtype stays numpy's).
    if let (Some(native), [_, kind, dtype, shape, _, size]) = (&node.native, cells.as_mut_slice()) {
        *kind = native.class.clone();
        *shape = shape_text(&native.shape);
        // A sparse matrix (a group of save_npz's members): its stored values.
        if native.class.starts_with("sparse ") {
            let data = node.children().iter().find(|c| c.name == "data");
            if let Some(info) = data.and_then(Node::array_info) {
                *dtype = format!("nnz {}", info.len());
            }
            let bytes = node
                .children()
                .iter()
                .filter_map(Node::array_info)
                .map(ArrayInfo::nbytes)
                .sum();
            *size = human_bytes(bytes);
        }
    }
    cells
}

fn neutral_row(label: String, node: &Node) -> Vec<String> {
    match &node.kind {
        NodeKind::Array(info) | NodeKind::Table(info) => vec![
            label,
            node.kind_name().to_string(),
            info.dtype.to_string(),
            shape_text(&info.shape),
            order_text(info).to_string(),
            human_bytes(info.nbytes()),
        ],
        NodeKind::Group(children) => vec![
            label,
            "group".to_string(),
            String::new(),
            count(children.len(), "item"),
            String::new(),
            String::new(),
        ],
        NodeKind::Frame { columns, rows } => vec![
            label,
            "frame".to_string(),
            String::new(),
            format!("({rows}, {})", columns.len()),
            String::new(),
            String::new(),
        ],
        // The target is in the node column (`name -> /target`); the dtype column only ever
        // holds numpy dtypes.
        NodeKind::Link(_) => vec![
            label,
            "link".to_string(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
        // Why sciio cannot read it is in the notes under the table (`opaque_notes`).
        NodeKind::Opaque { kind, .. } => vec![
            label,
            kind.clone(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
        _ => vec![label, node.kind_name().to_string()],
    }
}

/// `1 item`, `3 items`.
pub fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// One line per node sciio lists but cannot read, with the reason (empty when there is none):
/// `notes:` then `  /ragged (VLArray): rows of pickled Python objects (never unpickled)`.
pub fn opaque_notes(root: &Node, prefix: &str) -> String {
    let mut out = String::new();
    for (path, node) in root.walk(prefix) {
        if let NodeKind::Opaque { kind, reason } = &node.kind {
            out.push_str(&format!("  {path} ({kind}): {reason}\n"));
        }
    }
    if out.is_empty() {
        out
    } else {
        "notes:\n".to_string() + &out
    }
}

/// Attribute values longer than this are cut (with `...`).
const MAX_ATTR_CHARS: usize = 72;

/// `sciio ls -a` for formats without a native listing: each node that has attributes, then
/// one `NAME := value` line per attribute (values on one line, shortened).
pub fn attribute_lines(root: &Node, prefix: &str) -> String {
    let mut out = String::new();
    for (path, node) in root.walk(prefix) {
        if node.attrs.is_empty() {
            continue;
        }
        let path = if path.is_empty() { "/" } else { path.as_str() };
        out.push_str(&format!(
            "{path}: {}\n",
            count(node.attrs.len(), "attribute")
        ));
        for a in &node.attrs {
            out.push_str(&format!("  {} := {}\n", a.name, attr_text(&a.value)));
        }
    }
    if out.is_empty() {
        out.push_str("no attributes\n");
    }
    out
}

fn attr_text(value: &AttrValue) -> String {
    let text = match value {
        AttrValue::Array(a) => crate::numfmt::array_str(a)
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|e| format!("<{e}>")),
        AttrValue::Other(what) => format!("<{what}>"),
        _ => "<not shown>".to_string(),
    };
    if text.chars().count() <= MAX_ATTR_CHARS {
        return text;
    }
    text.chars().take(MAX_ATTR_CHARS - 3).collect::<String>() + "..."
}

/// A shape as Python prints a tuple: `()`, `(5,)`, `(2, 3)`.
pub fn shape_text(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

fn order_text(info: &ArrayInfo) -> &'static str {
    match info.order {
        Order::C => "C",
        Order::F => "F",
    }
}

/// Bytes in binary units: `96 B`, `1.5 KiB`, `3.0 MiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use sciio::{DType, Node};

    #[test]
    fn draws_a_tree_in_a_table() {
        let info = ArrayInfo {
            dtype: DType::from_typestr("<f8").unwrap(),
            shape: vec![3, 4],
            order: Order::C,
        };
        let a = Node::new("a", NodeKind::Array(info.clone()));
        let b = Node::new("b", NodeKind::Array(info));
        let g = Node::new("g", NodeKind::Group(vec![b]));
        let root = Node::new("", NodeKind::Group(vec![a, g]));
        let text = tree_table_labelled(&root, "/");
        assert!(text.contains("├── a"), "{text}");
        assert!(text.contains("└── g"), "{text}");
        assert!(text.contains("    └── b"), "{text}");
        assert!(text.contains("(3, 4)") && text.contains("96 B"), "{text}");
        assert!(text.starts_with('┌'), "{text}");
    }

    #[test]
    fn sizes_and_shapes_read_like_python() {
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(shape_text(&[5]), "(5,)");
        assert_eq!(shape_text(&[]), "()");
    }
}

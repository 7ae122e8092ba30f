//! `sciio info FILE[:NODE]`: how the data is stored, beyond what `ls` lists — per array: layout,
//! chunk shape and chunks written, filters (in `--compress` syntax), bytes on disk and the
//! compression ratio (HDF5 datasets, npz members, .npy); a Parquet file's row groups with, per
//! column chunk, its type, codec, encodings, sizes, null count and min/max statistics; and
//! every node's attributes.

use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, ContentArrangement, Table};

use sciio::{File, NodeKind, ParquetInfo, Result, Storage, Target};

use crate::draw::{self, count, human_bytes, shape_text};

/// The text `sciio info` prints for `target`.
pub fn info(target: &Target) -> Result<String> {
    let mut file = File::open(&target.file)?;
    let prefix = match &target.node {
        Some(node) => {
            file.node(node)?;
            format!("/{}", node.trim_matches('/'))
        }
        None => String::new(),
    };
    let mut out = format!(
        "{} ({}, {} on disk)\n",
        target.file.display(),
        file.format(),
        human_bytes(file.size_on_disk())
    );
    if let Some(mat) = file.mat_description() {
        out += &(mat + "\n");
    }
    if let Some(pq) = file.parquet_info()? {
        out += &parquet_text(&pq);
        return Ok(out);
    }
    // The arrays below the node, then how each is stored.
    let root = match &target.node {
        Some(node) => file.node(node)?,
        None => file.root(),
    };
    let leaves: Vec<(String, String, String, String)> = root
        .walk(&prefix)
        .into_iter()
        .filter_map(|(path, node)| match &node.kind {
            NodeKind::Array(info) | NodeKind::Table(info) => Some((
                path,
                node.kind_name().to_string(),
                info.dtype.to_string(),
                shape_text(&info.shape),
            )),
            _ => None,
        })
        .collect();
    let attrs = draw::attribute_lines(root, &prefix);
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec![
            "node", "kind", "dtype", "shape", "layout", "chunks", "filters", "size", "on disk",
            "ratio",
        ]);
    for (path, kind, dtype, shape) in &leaves {
        let storage = file.storage(path)?;
        table.add_row(storage_row(path, kind, dtype, shape, storage.as_ref()));
    }
    for col in 7..10 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    if leaves.is_empty() {
        out += "no arrays\n";
    } else {
        out += &(table.to_string() + "\n");
    }
    out += &("\n".to_string() + &attrs);
    Ok(out)
}

fn storage_row(
    path: &str,
    kind: &str,
    dtype: &str,
    shape: &str,
    storage: Option<&Storage>,
) -> Vec<String> {
    let mut row = vec![
        path.to_string(),
        kind.to_string(),
        dtype.to_string(),
        shape.to_string(),
    ];
    let Some(s) = storage else {
        row.extend(["-"; 6].map(String::from));
        return row;
    };
    let chunks = match (&s.chunk_shape, s.chunks_stored) {
        (Some(shape), Some(n)) => {
            let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
            format!("{} × {}", count(n as usize, "chunk"), shape_text(&dims))
        }
        (Some(shape), None) => {
            let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
            shape_text(&dims)
        }
        _ => String::new(),
    };
    let layout = match s.offset {
        Some(at) => format!("{} at byte {at}", s.layout),
        None => s.layout.clone(),
    };
    row.extend([
        layout,
        chunks,
        if s.filters.is_empty() {
            "none".to_string()
        } else {
            s.filters.join(",")
        },
        human_bytes(s.logical_bytes),
        s.stored_bytes.map(human_bytes).unwrap_or_default(),
        s.ratio().map(|r| format!("{r:.2}")).unwrap_or_default(),
    ]);
    row
}

fn parquet_text(pq: &ParquetInfo) -> String {
    let mut out = format!(
        "{}, {}{}\n",
        count(pq.rows as usize, "row"),
        count(pq.row_groups.len(), "row group"),
        pq.created_by
            .as_deref()
            .map(|w| format!(", written by {w}"))
            .unwrap_or_default()
    );
    if !pq.metadata_keys.is_empty() {
        let keys: Vec<String> = pq
            .metadata_keys
            .iter()
            .map(|(k, n)| format!("{k} ({})", human_bytes(*n as u64)))
            .collect();
        out += &format!("key-value metadata: {}\n", keys.join(", "));
    }
    for (i, rg) in pq.row_groups.iter().enumerate() {
        let stored: u64 = rg.columns.iter().map(|c| c.compressed_bytes).sum();
        let plain: u64 = rg.columns.iter().map(|c| c.uncompressed_bytes).sum();
        out += &format!(
            "\nrow group {i}: {}, {} on disk, {} uncompressed\n",
            count(rg.rows as usize, "row"),
            human_bytes(stored),
            human_bytes(plain)
        );
        let mut table = Table::new();
        table
            .load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(vec![
                "column",
                "type",
                "codec",
                "encodings",
                "on disk",
                "size",
                "ratio",
                "nulls",
                "min",
                "max",
            ]);
        for c in &rg.columns {
            let (min, max) = c.min_max.clone().unwrap_or_default();
            table.add_row(vec![
                c.path.clone(),
                c.physical_type.clone(),
                c.codec.clone(),
                c.encodings.join(","),
                human_bytes(c.compressed_bytes),
                human_bytes(c.uncompressed_bytes),
                if c.compressed_bytes > 0 {
                    format!(
                        "{:.2}",
                        c.uncompressed_bytes as f64 / c.compressed_bytes as f64
                    )
                } else {
                    String::new()
                },
                c.nulls.map(|n| n.to_string()).unwrap_or_default(),
                shorten(&min),
                shorten(&max),
            ]);
        }
        for col in 4..8 {
            if let Some(c) = table.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        out += &(table.to_string() + "\n");
    }
    out
}

/// Statistics values are cut to 24 characters.
fn shorten(s: &str) -> String {
    if s.chars().count() <= 24 {
        s.to_string()
    } else {
        s.chars().take(21).collect::<String>() + "..."
    }
}

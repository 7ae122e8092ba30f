//! The in-memory layout PyTables' `node.read()` gives a stored type: numbers in native byte
//! order, and compounds laid out as PyTables' `Description` lays them out (fields in offset
//! order; a flat compound keeps the file's offsets, a nested one or a one-field one is packed).
//!
//! Pure Rust over bytes already read in the file's layout (memory type = file type): a
//! [`Relayout`] is planned once per type and applied per element, and is free when the file's
//! layout already is the wanted one.

use crate::{ByteOrder, Field, H5Type, RawData};

/// The byte order of the machine.
pub fn native_order() -> ByteOrder {
    if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

/// How compounds are laid out after reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// The file's offsets, field order and element size, unchanged.
    File,
    /// A PyTables `Table`'s rows (`Table.read()`): fields sorted by offset; a flat compound
    /// (two or more non-compound fields) keeps the file's offsets and, when the fields leave
    /// room, the file's element size; a nested or one-field compound is packed (no gaps).
    /// Nested compounds keep their offsets with numpy's item size (the end of their last
    /// field) when flat, and are packed when nested themselves.
    Table,
    /// A PyTables `Array` of compound elements: as [`Packing::Table`], except that a flat
    /// top-level compound also ends at its last field (PyTables sets no item size there).
    Array,
}

/// One step of moving an element's bytes from the file's layout to the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Span {
    /// A contiguous run of bytes.
    Copy {
        src: usize,
        dst: usize,
        len: usize,
        /// Reverse the bytes (a number changing byte order).
        swap: bool,
    },
    /// The elements of an array type: `ops` (relative to each element) `count` times (kept
    /// as one step, so a type announcing a huge array costs nothing to plan).
    Repeat {
        src: usize,
        dst: usize,
        count: usize,
        src_step: usize,
        dst_step: usize,
        ops: Vec<Span>,
    },
}

fn copy(src: usize, dst: usize, len: usize, swap: bool) -> Span {
    Span::Copy {
        src,
        dst,
        len,
        swap,
    }
}

/// Runs `ops` on one element: `from` at `src` to `to` at `dst` (out-of-range steps, which a
/// consistent plan never has, are skipped).
fn run(ops: &[Span], from: &[u8], to: &mut [u8], src: usize, dst: usize) {
    for op in ops {
        match op {
            Span::Copy {
                src: s,
                dst: d,
                len,
                swap,
            } => {
                let (a, b) = (src + s, dst + d);
                let (Some(x), Some(y)) = (from.get(a..a + len), to.get_mut(b..b + len)) else {
                    continue;
                };
                y.copy_from_slice(x);
                if *swap {
                    y.reverse();
                }
            }
            Span::Repeat {
                src: s,
                dst: d,
                count,
                src_step,
                dst_step,
                ops,
            } => {
                for i in 0..*count {
                    run(
                        ops,
                        from,
                        to,
                        src + s + i * src_step,
                        dst + d + i * dst_step,
                    );
                }
            }
        }
    }
}

/// A planned change of layout from a stored type to the type PyTables reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Relayout {
    source: H5Type,
    target: H5Type,
    spans: Vec<Span>,
}

impl Relayout {
    /// Plans the layout of `ty` in memory: `native` turns every number to the machine's byte
    /// order (as PyTables' and h5py's `read()` do), `packing` says how compounds are laid out.
    pub fn new(ty: &H5Type, native: bool, packing: Packing) -> Relayout {
        let mut spans = Vec::new();
        let target = plan(ty, native, packing, 0, 0, 0, &mut spans);
        Relayout {
            source: ty.clone(),
            target,
            spans: merge(spans),
        }
    }

    /// The type after the change.
    pub fn target(&self) -> &H5Type {
        &self.target
    }

    /// Whether the bytes stay as they are.
    pub fn is_identity(&self) -> bool {
        self.source == self.target
    }

    /// Applies the change to data read in the file's layout (`data.ty` must be the planned
    /// source type; other data is returned unchanged).
    pub fn apply(&self, data: RawData) -> RawData {
        if self.is_identity() || data.ty != self.source {
            return data;
        }
        let src_size = self.source.size();
        let dst_size = self.target.size();
        let n = data.bytes.len().checked_div(src_size).unwrap_or(0);
        let mut bytes = vec![0u8; n * dst_size];
        if src_size > 0 && dst_size > 0 {
            for (from, to) in data
                .bytes
                .chunks_exact(src_size)
                .zip(bytes.chunks_exact_mut(dst_size))
            {
                run(&self.spans, from, to, 0, 0);
            }
        }
        RawData {
            ty: self.target.clone(),
            shape: data.shape,
            bytes,
        }
    }
}

/// Joins copies that continue each other without swapping (one copy per run of bytes).
fn merge(spans: Vec<Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        if let (
            Some(Span::Copy {
                src: ls,
                dst: ld,
                len: ll,
                swap: false,
            }),
            Span::Copy {
                src,
                dst,
                len,
                swap: false,
            },
        ) = (out.last_mut(), &s)
        {
            if *ls + *ll == *src && *ld + *ll == *dst {
                *ll += len;
                continue;
            }
        }
        if !matches!(s, Span::Copy { len: 0, .. }) {
            out.push(s);
        }
    }
    out
}

fn reorder(order: ByteOrder, size: usize, native: bool) -> (ByteOrder, bool) {
    if native && size > 1 && order != ByteOrder::NotApplicable && order != native_order() {
        (native_order(), true)
    } else {
        (order, false)
    }
}

/// The target type of `ty` at `src`/`dst` offsets, pushing the byte moves into `spans`.
fn plan(
    ty: &H5Type,
    native: bool,
    packing: Packing,
    level: usize,
    src: usize,
    dst: usize,
    spans: &mut Vec<Span>,
) -> H5Type {
    let mut number = |size: usize, order: ByteOrder| {
        let (order, swap) = reorder(order, size, native);
        spans.push(copy(src, dst, size, swap));
        order
    };
    match ty {
        H5Type::Int {
            size,
            signed,
            order,
        } => H5Type::Int {
            size: *size,
            signed: *signed,
            order: number(*size, *order),
        },
        H5Type::Float {
            size,
            precision,
            order,
        } => H5Type::Float {
            size: *size,
            precision: *precision,
            order: number(*size, *order),
        },
        H5Type::Bitfield {
            size,
            precision,
            order,
        } => H5Type::Bitfield {
            size: *size,
            precision: *precision,
            order: number(*size, *order),
        },
        H5Type::Time { size, order } => H5Type::Time {
            size: *size,
            order: number(*size, *order),
        },
        H5Type::Enum { base, members } => H5Type::Enum {
            base: Box::new(plan(base, native, packing, level, src, dst, spans)),
            members: members.clone(),
        },
        H5Type::Array { base, dims } => {
            let n: usize = dims.iter().product();
            let mut inner = Vec::new();
            // Compounds inside arrays keep the file's layout (PyTables cannot read them).
            let target = plan(base, native, Packing::File, level + 1, 0, 0, &mut inner);
            let inner = merge(inner);
            let (ss, ds) = (base.size(), target.size());
            match inner.as_slice() {
                [Span::Copy {
                    src: 0,
                    dst: 0,
                    len,
                    swap: false,
                }] if *len == ss && ss == ds => {
                    spans.push(copy(src, dst, n.saturating_mul(ss), false))
                }
                _ if n > 0 => spans.push(Span::Repeat {
                    src,
                    dst,
                    count: n,
                    src_step: ss,
                    dst_step: ds,
                    ops: inner,
                }),
                _ => {}
            }
            H5Type::Array {
                base: Box::new(target),
                dims: dims.clone(),
            }
        }
        H5Type::Compound { size, fields }
            if ty.complex_parts().is_some() || packing == Packing::File =>
        {
            let fields = fields
                .iter()
                .map(|f| Field {
                    name: f.name.clone(),
                    offset: f.offset,
                    ty: plan(
                        &f.ty,
                        native,
                        Packing::File,
                        level + 1,
                        src + f.offset,
                        dst + f.offset,
                        spans,
                    ),
                })
                .collect();
            H5Type::Compound {
                size: *size,
                fields,
            }
        }
        H5Type::Compound { size, fields } => {
            let mut sorted: Vec<&Field> = fields.iter().collect();
            sorted.sort_by_key(|f| f.offset);
            let is_struct =
                |t: &H5Type| matches!(t, H5Type::Compound { .. }) && t.complex_parts().is_none();
            let nested = sorted.iter().any(|f| is_struct(&f.ty));
            let flat = !nested && sorted.len() > 1;
            let mut out = Vec::with_capacity(sorted.len());
            let mut at = 0usize;
            for f in &sorted {
                let offset = if flat { f.offset } else { at };
                let t = plan(
                    &f.ty,
                    native,
                    packing,
                    level + 1,
                    src + f.offset,
                    dst + offset,
                    spans,
                );
                at = offset + t.size();
                out.push(Field {
                    name: f.name.clone(),
                    offset,
                    ty: t,
                });
            }
            let end = out
                .iter()
                .map(|f| f.offset + f.ty.size())
                .max()
                .unwrap_or(0);
            let sum: usize = out.iter().map(|f| f.ty.size()).sum();
            let size = if !flat {
                sum
            } else if level == 0 && packing == Packing::Table && sum < *size {
                // PyTables keeps a table's trailing padding (tableextension `_v_itemsize`).
                (*size).max(end)
            } else {
                end
            };
            H5Type::Compound { size, fields: out }
        }
        other => {
            spans.push(copy(src, dst, other.size(), false));
            other.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(size: usize, order: ByteOrder) -> H5Type {
        H5Type::Int {
            size,
            signed: true,
            order,
        }
    }

    fn field(name: &str, offset: usize, ty: H5Type) -> Field {
        Field {
            name: name.into(),
            offset,
            ty,
        }
    }

    #[test]
    fn big_endian_numbers_turn_native() {
        let ty = int(4, ByteOrder::Big);
        let r = Relayout::new(&ty, true, Packing::Table);
        let data = RawData {
            ty,
            shape: vec![2],
            bytes: vec![0, 0, 0, 1, 0, 0, 1, 0],
        };
        let out = r.apply(data);
        assert_eq!(out.ty, int(4, native_order()));
        let v: Vec<i32> = out
            .bytes
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(v, [1, 256]);
        assert!(Relayout::new(&int(4, ByteOrder::Big), false, Packing::Table).is_identity());
    }

    #[test]
    fn arrays_of_big_endian_numbers_swap_each_element_and_plan_in_one_step() {
        let ty = H5Type::Array {
            base: Box::new(int(2, ByteOrder::Big)),
            dims: vec![2],
        };
        let r = Relayout::new(&ty, true, Packing::Array);
        let out = r.apply(RawData {
            ty,
            shape: vec![1],
            bytes: vec![0, 1, 1, 0],
        });
        let v: Vec<i16> = out
            .bytes
            .chunks_exact(2)
            .map(|c| i16::from_ne_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(v, [1, 256]);
        // A type announcing a huge array is planned in one step, not one per element.
        let huge = H5Type::Array {
            base: Box::new(int(8, ByteOrder::Big)),
            dims: vec![1 << 40],
        };
        assert_eq!(Relayout::new(&huge, true, Packing::Array).spans.len(), 1);
    }

    #[test]
    fn fields_sort_by_offset_and_nested_compounds_pack() {
        let le = ByteOrder::Little;
        let inner = H5Type::Compound {
            size: 24,
            fields: vec![field("x", 0, int(2, le)), field("y", 8, int(8, le))],
        };
        let outer = H5Type::Compound {
            size: 40,
            fields: vec![field("q", 30, int(1, le)), field("p", 0, inner)],
        };
        let r = Relayout::new(&outer, true, Packing::Table);
        let H5Type::Compound { size, fields } = r.target() else {
            panic!("not a compound");
        };
        // p (inner: x@0, y@8, item size 16) then q packed after it: 17 bytes.
        assert_eq!(*size, 17);
        assert_eq!(fields[0].name, "p");
        assert_eq!(fields[0].ty.size(), 16);
        assert_eq!((fields[1].name.as_str(), fields[1].offset), ("q", 16));
        let mut row = vec![0u8; 40];
        row[0..2].copy_from_slice(&7i16.to_le_bytes());
        row[8..16].copy_from_slice(&9i64.to_le_bytes());
        row[30] = 5;
        let out = r.apply(RawData {
            ty: outer,
            shape: vec![1],
            bytes: row,
        });
        assert_eq!(&out.bytes[0..2], &7i16.to_le_bytes());
        assert_eq!(&out.bytes[8..16], &9i64.to_le_bytes());
        assert_eq!(out.bytes[16], 5);
    }

    #[test]
    fn flat_table_keeps_offsets_and_trailing_padding() {
        let le = ByteOrder::Little;
        let ty = H5Type::Compound {
            size: 16,
            fields: vec![field("b", 8, int(4, le)), field("a", 0, int(8, le))],
        };
        let t = Relayout::new(&ty, true, Packing::Table);
        let H5Type::Compound { size, fields } = t.target() else {
            panic!("not a compound");
        };
        assert_eq!(*size, 16);
        assert_eq!(fields[0].name, "a");
        let a = Relayout::new(&ty, true, Packing::Array);
        assert_eq!(a.target().size(), 12);
    }
}
